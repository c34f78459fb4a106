package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// demoCommand is the demo entry of the command table (main.go).
var demoCommand = commandInfo{
	name:    "demo",
	summary: "run an embedded 3-broker Kafka seeded with a realistic Connect cluster, snapshot it, and keep it busy until Ctrl-C",
	usage:   "[--port 9092] [--store URL]",
	noKafka: true,
	new:     func(e *env) command { return &demoCmd{env: e} },
}

type demoCmd struct {
	*env
	port  int
	churn time.Duration
}

func (c *demoCmd) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.port, "port", 9092, "first of the three loopback ports the embedded brokers listen on")
	fs.DurationVar(&c.churn, "churn-every", 2*time.Second, "how often the running demo connectors commit new offsets")
}

func (c *demoCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	cluster, err := connectdemo.NewCluster(kfake.Ports(c.port, c.port+1, c.port+2))
	if err != nil {
		return fmt.Errorf("start embedded Kafka on ports %d-%d: %w; is another Kafka (or demo) running? try --port", c.port, c.port+2, err)
	}
	defer cluster.Close()
	brokers := strings.Join(cluster.ListenAddrs(), ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return fmt.Errorf("connect to embedded Kafka: %w", err)
	}
	defer cl.Close()

	spec := connectdemo.DefaultSpec()
	spec.LiveSinkMember = true
	exp, err := connectdemo.Seed(ctx, cl, spec)
	if err != nil {
		return fmt.Errorf("seed embedded Kafka: %w", err)
	}
	defer exp.Stop()
	c.log.Info("embedded Kafka seeded", "brokers", brokers, "records", exp.Records, "connectors", len(exp.Connectors), "groups", len(exp.Groups))

	store, err := c.g.createStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	snap, err := snapshot.Capture(ctx, cl, snapshot.Options{ProgramVersion: programVersion(), Reason: snapshot.ReasonManual})
	if err != nil {
		return fmt.Errorf("take first snapshot: %w", err)
	}
	info, err := store.Put(ctx, snap)
	if err != nil {
		return fmt.Errorf("store first snapshot: %w", err)
	}

	ok := "go run ./cmd/offsetkeeper"
	storeFlag := ""
	if c.g.store != defaultStore {
		storeFlag = " --store " + c.g.store
	}
	fmt.Fprintf(c.stdout, `offsetkeeper demo
  Kafka (kfake, 3 brokers): %s   cluster id %s
  Connect topics: connect-offsets (25 partitions), connect-configs, connect-status
  %d connectors (Debezium, JDBC, FileStream, MirrorMaker 2, an exactly-once source with its own
  offsets topic, two sinks), history, tombstones and aborted transactions.
  Running connectors commit new offsets every %s.

First snapshot: %s (%d source keys, %d sink groups) in %s

Try, from another terminal in this directory:
  %s list%s
  %s show latest%s
  %s show latest --connector inventory-connector --output connect-rest%s
  %s snapshot --brokers %s%s
  %s verify%s
  %s daemon --brokers %s --schedule "@every 10s" --keep-last 5%s
  kcat -b %s -C -t connect-offsets -e -K '  ' -f '%%p %%k %%s\n'

Ctrl-C stops the demo.
`, brokers, snap.ClusterID, len(snap.Connectors), c.churn, info.ID, info.SourceKeys, info.SinkGroups, c.g.store,
		ok, storeFlag, ok, storeFlag, ok, storeFlag, ok, brokers, storeFlag, ok, storeFlag, ok, brokers, storeFlag, brokers)

	err = connectdemo.Churn(ctx, cl, spec, c.churn)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("keep demo connectors busy: %w", err)
	}
	c.log.Info("demo stopped")
	return nil
}
