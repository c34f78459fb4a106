package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// demoCommand is the demo entry of the command table (main.go).
var demoCommand = commandInfo{
	name:    "demo",
	summary: "run an embedded 3-broker Kafka seeded with a realistic Connect cluster and its REST API, snapshot it, walk through a bad reset and its restore, and keep it busy until Ctrl-C",
	usage:   "[--port 9092] [--rest-port 8083] [--store URL] [--migration | --empty | --standby | --layout msk-connect]",
	noKafka: true,
	new:     func(e *env) command { return &demoCmd{env: e} },
}

type demoCmd struct {
	*env
	port      int
	restPort  int
	churn     time.Duration
	migration bool
	empty     bool
	standby   bool // demo_standby.go
}

func (c *demoCmd) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.port, "port", 9092, "first of the three loopback ports the embedded brokers listen on")
	fs.IntVar(&c.restPort, "rest-port", 8083, "loopback port of the demo's Kafka Connect REST API")
	fs.DurationVar(&c.churn, "churn-every", 2*time.Second, "how often the running demo connectors commit new offsets")
	fs.BoolVar(&c.empty, "empty", false, "also run an empty second cluster (ports --port+3 to --port+5, its Connect REST API on --rest-port+1) to rehearse a disaster recovery into (docs/restore.md)")
	fs.BoolVar(&c.standby, "standby", false, "run a primary and a standby cluster (ports --port+3 to --port+5, its Connect REST API on --rest-port+1) with MirrorMaker 2's copies, to rehearse a failover on (docs/standby.md)")
	fs.BoolVar(&c.migration, "migration", false, "run two clusters to rehearse a migration on instead (docs/migrate.md): a with the demo connectors stopped, b with MirrorMaker 2's copies of its topics; ports --port to --port+5")
}

// demoProgram is how the demo's instructions name the program: as the user
// ran it, or "go run ./cmd/offsetkeeper" for a binary go run built.
func demoProgram(arg0 string) string {
	if strings.Contains(arg0, "go-build") {
		return "go run ./cmd/offsetkeeper"
	}
	return arg0
}

// demoWorld is what the demo runs: Kafka, its Connect REST API, the seed.
type demoWorld struct {
	cluster *kfake.Cluster
	cl      *kgo.Client
	connect *connectsim.Server
	spec    connectdemo.Spec
	exp     *connectdemo.Expected
}

func (w *demoWorld) close() {
	if w.connect != nil {
		w.connect.Close()
	}
	if w.exp != nil {
		w.exp.Stop()
	}
	if w.cl != nil {
		w.cl.Close()
	}
	if w.cluster != nil { // nil once demo --standby killed it
		w.cluster.Close()
	}
}

// start starts the embedded Kafka, seeds it and serves Connect's REST API.
func (c *demoCmd) start(ctx context.Context) (*demoWorld, error) {
	cluster, err := connectdemo.NewCluster(kfake.Ports(c.port, c.port+1, c.port+2))
	if err != nil {
		return nil, fmt.Errorf("start embedded Kafka on ports %d-%d: %w; is another Kafka (or demo) running? try --port", c.port, c.port+2, err)
	}
	w := &demoWorld{cluster: cluster, spec: connectdemo.DefaultSpec()}
	if w.cl, err = kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...)); err != nil {
		w.close()
		return nil, fmt.Errorf("connect to embedded Kafka: %w", err)
	}
	if w.exp, err = connectdemo.Seed(ctx, w.cl, w.spec); err != nil {
		w.close()
		return nil, fmt.Errorf("seed embedded Kafka: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.restPort))
	// Connect keeps a member in the group of each sink whose tasks run and
	// lets it leave once the connector is stopped, as a worker's tasks do:
	// a sink's offsets can then be reset and restored through it.
	if w.connect, err = connectsim.Start(w.cl, connectsim.Options{Addr: addr, SinkMembers: true, Version: demoConnectVersion, Plugins: demoPlugins(w.exp)}); err != nil {
		w.close()
		return nil, fmt.Errorf("serve the Connect REST API on %s: %w; is a Connect worker (or demo) running? try --rest-port", addr, err)
	}
	return w, nil
}

func (c *demoCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.migration && c.empty {
		return usagef("--migration and --empty are two demos: pick one")
	}
	if c.standby && (c.migration || c.empty || c.g.layout != "") {
		return usagef("--standby is a demo of its own: leave out --migration, --empty and --layout")
	}
	if c.standby {
		return c.runStandby(ctx)
	}
	switch c.g.layout {
	case "":
	case capture.LayoutMSKConnect:
		if c.empty || c.migration {
			return usagef("--layout msk-connect, --migration and --empty are three demos: pick one")
		}
		return c.runMSK(ctx)
	default:
		return usagef("demo --layout %q: the demo layout is %s", c.g.layout, capture.LayoutMSKConnect)
	}
	if c.migration {
		return c.runMigration(ctx)
	}
	return c.runConnect(ctx)
}

// runConnect is the default demo: the cluster with its Connect REST API
// (and, with --empty, a second cluster to restore into), a first
// snapshot, the guide, then the running connectors' churn until ctx ends.
func (c *demoCmd) runConnect(ctx context.Context) error {
	w, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	var empty *emptyWorld
	if c.empty {
		if empty, err = c.startEmpty(ctx, demoPlugins(w.exp)); err != nil {
			return err
		}
		defer empty.close()
	}
	brokers := strings.Join(w.cluster.ListenAddrs(), ",")
	store, err := c.g.createStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	snap, err := capture.Capture(ctx, w.cl, capture.Options{ProgramVersion: programVersion(), Reason: snapshot.ReasonManual})
	if err != nil {
		return fmt.Errorf("take first snapshot: %w", err)
	}
	info, err := store.Snapshots().Put(ctx, snap)
	if err != nil {
		return fmt.Errorf("store first snapshot: %w", err)
	}
	// The connectors as the snapshot (and the text below) count them.
	c.log.Info("embedded Kafka seeded", "brokers", brokers, "connect_url", w.connect.URL,
		"records", w.exp.Records, "connectors", len(snap.Connectors), "groups", len(w.exp.Groups))
	storeFlag := ""
	if c.g.store != defaultStore {
		storeFlag = " --store " + restore.ShellQuote(c.g.store)
	}
	fmt.Fprintf(c.stdout, `offsetkeeper demo
  Kafka (kfake, 3 brokers): %s   cluster id %s
  Kafka Connect REST API:   %s
  Connect topics: connect-offsets (25 partitions), connect-configs, connect-status
  %d connectors (Debezium, JDBC, FileStream, MirrorMaker 2, an exactly-once source with its own
  offsets topic, two sinks), history, tombstones and aborted transactions.
  Running connectors commit new offsets every %s (until one is stopped or reset through the REST API).

First snapshot: %s (%s, %s) in %s
`, brokers, snap.ClusterID, w.connect.URL, len(snap.Connectors), c.churn, info.ID, english.Count(info.SourceKeys, "source key", "source keys"), english.Count(info.SinkGroups, "sink group", "sink groups"), c.g.store)
	demoGuide(c.stdout, demoProgram(os.Args[0]), brokers, w.connect.URL, storeFlag, demoListen(c.port))
	if empty != nil {
		emptyGuide(c.stdout, demoProgram(os.Args[0]), empty, storeFlag)
	}

	notify := func(msg string) {
		fmt.Fprintf(c.stdout, "demo: %s\n", msg)
		c.log.Info("demo: " + msg)
	}
	// The group with a member (Connect's, above) is not committed to by
	// the churner, as LiveSinkMember says.
	churn := w.spec
	churn.LiveSinkMember = true
	err = connectdemo.ChurnWith(ctx, w.cl, churn, c.churn, connectdemo.ChurnOptions{Leave: w.connect.Changed, Notify: notify})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("keep demo connectors busy: %w", err)
	}
	c.log.Info("demo stopped")
	return nil
}

// demoGuide prints the walk-through: look around, a bad reset, the restore.
func demoGuide(w io.Writer, ok, brokers, connectURL, store, listen string) {
	const conn = "inventory-connector"
	k := " --brokers " + brokers + store
	cu := " --connect-url " + connectURL
	var b strings.Builder
	fmt.Fprintf(&b, `
Look around, from another terminal in this directory:
  %[1]s list%[2]s
  %[1]s show latest%[2]s
  %[1]s show latest --connector %[3]s --output connect-rest%[2]s
  %[1]s verify%[2]s
  %[1]s drill%[4]s%[7]s
     (a restore drill: the live state restored into a scratch Kafka, read back and compared with Connect)
  %[1]s daemon%[4]s%[7]s --schedule "@every 1m" --keep-within 1d --keep-daily 7 --journal-interval 1s --listen %[8]s
     (the daemon: snapshots, a journal of every change for restore --at, the page at http://%[8]s/;
      with --connect-url the undo of each reset it logs stops and resumes the connector, or creates it again)
  curl -sS --fail-with-body '%[5]s/connectors?expand=status'
  kcat -b %[6]s -C -t connect-offsets -e -K '  ' -f '%%p %%k %%s\n'

A bad reset, then the restore (start the daemon above first: its journal catches the reset):
  1. The mistake: %[3]s is stopped, its offsets deleted, and it is started again,
     so it would re-read its whole source:
       curl -sS --fail-with-body -X PUT %[5]s/connectors/%[3]s/stop
       curl -sS --fail-with-body -X DELETE %[5]s/connectors/%[3]s/offsets
       curl -sS --fail-with-body -X PUT %[5]s/connectors/%[3]s/resume
       curl -sS --fail-with-body %[5]s/connectors/%[3]s/offsets
  2. The reset as the journal caught it, with the restore back to just before it:
       %[1]s events%[4]s%[7]s --connector %[3]s
     Paste its "check:" line (the plan, nothing written), then its "undo:" line (it stops the
     connector through Connect, writes its offsets from just before the reset, verifies, resumes it).
  3. Back where it was just before the reset:
       curl -sS --fail-with-body %[5]s/connectors/%[3]s/offsets
     and paste the "after:" line of step 2's events: the diff from just before the reset, no differences
  4. Second choice, without the daemon: the newest snapshot. Taken after the reset it holds the
     damage: its plan then opens with a WARNING naming the reset and the commands of step 2.
       %[1]s diff latest --live%[4]s --connector %[3]s
       %[1]s restore latest --connector %[3]s%[4]s%[7]s --stop-connectors --resume --dry-run
       %[1]s restore latest --connector %[3]s%[4]s%[7]s --stop-connectors --resume
     or, after another reset (step 1), write through Connect's own offsets API
     (PATCH /connectors/%[3]s/offsets):
       %[1]s restore latest --connector %[3]s%[4]s%[7]s --stop-connectors --resume --via connect
     (--at also takes a duration back from now, such as -30s; show --at and diff --at read the same state)

Ctrl-C stops the demo.
`, ok, store, conn, k, connectURL, brokers, cu, listen)
	io.WriteString(w, fitGuide(b.String(), ok))
}

// demoListen is the daemon's --listen in the demo's guide: 9464 beside
// the default --port 9092, and as far from --port otherwise, so that two
// demos on other ports have daemons that do not clash.
func demoListen(port int) string {
	p := port + 9464 - 9092
	if p > 65535 {
		p = port - (9464 - 9092)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}
