package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// emptyClusterID is the cluster id of demo --empty's second cluster.
const emptyClusterID = "demo-dr-cluster"

// emptyWorld is demo --empty's second cluster: a new Kafka cluster to
// restore into, as after a disaster, with a Connect REST API of its own.
type emptyWorld struct {
	cluster *kfake.Cluster
	cl      *kgo.Client
	connect *connectsim.Server
}

func (w *emptyWorld) close() {
	if w.connect != nil {
		w.connect.Close()
	}
	if w.cl != nil {
		w.cl.Close()
	}
	w.cluster.Close()
}

// startEmpty starts the second cluster on ports port+3 to port+5 and its
// Connect REST API on restPort+1. It holds Connect's config and status
// topics only, as workers that have not run a connector yet (and whose
// offsets topic was not created) leave it: every other topic the restore
// needs is missing, which is what the rehearsal is about. Its workers
// list plugins, as those of a cluster built to take the connectors over.
func (c *demoCmd) startEmpty(ctx context.Context, plugins []connectsim.Plugin) (*emptyWorld, error) {
	k, cl, err := c.demoCluster(emptyClusterID, c.port+3)
	if err != nil {
		return nil, err
	}
	w := &emptyWorld{cluster: k, cl: cl}
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, parts := range map[string]int32{connectdemo.DefaultConfigsTopic: 1, connectdemo.DefaultStatusTopic: connectdemo.DefaultStatusPartitions} {
		resp, err := adm.CreateTopic(ctx, parts, -1, compact, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			w.close()
			return nil, fmt.Errorf("create %s on the empty cluster: %w", topic, err)
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.restPort+1))
	if w.connect, err = connectsim.Start(cl, connectsim.Options{Addr: addr, WorkerID: "connect-dr-1:8083", Version: demoConnectVersion, Plugins: plugins}); err != nil {
		w.close()
		return nil, fmt.Errorf("serve the empty cluster's Connect REST API on %s: %w; try --rest-port", addr, err)
	}
	return w, nil
}

// emptyGuide prints the DR walk-through on the empty cluster
// (docs/restore.md, "Disaster recovery, rehearsed").
func emptyGuide(w io.Writer, ok string, e *emptyWorld, store string) {
	brokers := strings.Join(e.cluster.ListenAddrs(), ",")
	k := " --brokers " + brokers + store
	var b strings.Builder
	fmt.Fprintf(&b, `
Disaster recovery, rehearsed (docs/restore.md): a second, empty cluster to restore into
  Kafka (kfake, 3 brokers): %[2]s   cluster id %[4]s
  Kafka Connect REST API:   %[3]s (no connectors yet)
  It holds Connect's config and status topics only: connect-offsets, the connectors' own offsets
  topics and the sink topics are missing.
  1. What the restore would do, and every topic it needs:
       %[1]s restore latest --allow-other-cluster%[5]s --dry-run
  2. The sink topics it names hold data: create them (the commands it prints, against %[2]s).
     The Connect topics the restore creates itself with --create-topics (as the snapshot had
     them, compacted); or create connect-offsets by hand with 10 partitions instead of 25, to
     rehearse a re-partitioned topic.
  3. The restore itself, then what Connect would read there:
       %[1]s restore latest --allow-other-cluster --create-topics%[5]s
       %[1]s diff latest --live%[5]s --exit-code
Ctrl-C stops both clusters.
`, ok, brokers, e.connect.URL, emptyClusterID, k)
	io.WriteString(w, fitGuide(b.String(), ok))
}
