// Throwaway (not committed): an empty kfake cluster with a Connect REST
// stand-in, its topics made like those of the cluster at -from.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connecttest"
)

func main() {
	from := flag.String("from", "", "brokers to copy topic shapes from")
	port := flag.Int("port", 29092, "broker port")
	rest := flag.String("rest", "127.0.0.1:28083", "REST addr")
	flag.Parse()
	ctx := context.Background()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port), kfake.ClusterID("empty-dr-cluster"))
	if err != nil {
		panic(err)
	}
	defer kc.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		panic(err)
	}
	src, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*from, ",")...))
	if err != nil {
		panic(err)
	}
	sadm, dadm := kadm.NewClient(src), kadm.NewClient(cl)
	tds, err := sadm.ListTopics(ctx)
	if err != nil {
		panic(err)
	}
	rcs, err := sadm.DescribeTopicConfigs(ctx, tds.Names()...)
	if err != nil {
		panic(err)
	}
	for _, td := range tds.Sorted() {
		if strings.HasPrefix(td.Topic, "__") {
			continue
		}
		conf := map[string]*string{}
		if rc, err := rcs.On(td.Topic, nil); err == nil {
			for _, c := range rc.Configs {
				if c.Key == "cleanup.policy" && c.Value != nil {
					conf["cleanup.policy"] = c.Value
				}
			}
		}
		if _, err := dadm.CreateTopic(ctx, int32(len(td.Partitions)), -1, conf, td.Topic); err != nil {
			panic(err)
		}
		fmt.Printf("topic %s %d %v\n", td.Topic, len(td.Partitions), conf)
	}
	src.Close()
	srv, err := connecttest.Start(cl, connecttest.Options{Addr: *rest, Version: "3.8.0"})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	fmt.Printf("brokers %s rest %s\n", strings.Join(kc.ListenAddrs(), ","), srv.URL)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
}
