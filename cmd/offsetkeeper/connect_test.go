package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// startConnect starts a fake Connect REST API over the cluster.
func (c *cluster) startConnect(opts connectsim.Options) *connectsimtest.Server {
	c.t.Helper()
	srv, err := connectsimtest.Start(c.cl, opts)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(srv.Close)
	return srv
}

// rewrite writes value for the first live key of connector, as its task
// would: the restore then has that key to write back.
func (c *cluster) rewrite(connector, value string) {
	c.t.Helper()
	for _, o := range c.capture().SourceTable().Collect() {
		if o.Connector == connector {
			c.produce(&kgo.Record{Topic: o.Topic, Key: o.Key, Value: []byte(value)})
			return
		}
	}
	c.t.Fatalf("connector %s has no source key", connector)
}

// configStates reads the config topic: connector -> its state in a few words.
func (c *cluster) configStates() map[string]snapshot.ConnectorConfig {
	c.t.Helper()
	configs, err := capture.ReadConfigs(context.Background(), c.cl, connectdemo.DefaultConfigsTopic)
	if err != nil {
		c.t.Fatal(err)
	}
	return configs
}

func restClient(t *testing.T, srv *connectsimtest.Server) *connectrest.Client {
	t.Helper()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		// A line wider than 120 columns is broken at a space (english.Fit):
		// the words, in order, are what is wanted.
		if !strings.Contains(out, w) && !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(w), " ")) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
	if t.Failed() || os.Getenv("SHOW_OUTPUT") != "" {
		t.Logf("%s:\n%s", what, out)
	}
}

// TestRestoreStopConnectorsResume is the acceptance scenario: against
// running connectors, restore --stop-connectors --resume stops those it
// writes (the status lags, a sink member leaves late), restores exactly the
// snapshot, and puts back what it stopped: running ones run, the paused one
// is paused, the ones that were stopped stay stopped. The running and
// paused connectors it writes nothing for are left alone, never stopped.
func TestRestoreStopConnectorsResume(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	before := c.capture()
	c.badReset()
	c.rewrite(connectdemo.ConnSQLServer, `{"change_lsn":null}`) // the paused one
	srv := c.startConnect(connectsim.Options{SinkMembers: true, StopLag: 2, MemberLeaveDelay: 100 * time.Millisecond})
	confBefore := c.configStates()

	out, stderr := c.mustRun(0, "restore", id, "--stop-connectors", "--resume", "--connect-url", srv.URL)
	wantLines(t, "stdout", out,
		"stopping 6 connectors: es-sink-orders, eu->us.MirrorSourceConnector, inventory-connector, jdbc-orders-source,\n  payments-cdc, sqlserver-connector\n",
		"stopped: 8 connectors STOPPED with no tasks (6 stopped now, 2 already were), 2 sink groups empty",
		"connector inventory-connector (source, STOPPED; REST STOPPED)",
		"connector source-file-01 (source, STARTED, 1 task; REST RUNNING, 1 task): unchanged, running, left alone\n",
		"connector jdbc-legacy-source (source, PAUSED, 1 task; REST PAUSED, 1 task): unchanged, paused, left alone\n",
		"plan: 7 source writes, 1 tombstone, 15 sink commits, 1 sink deletion",
		"verified: ",
		"resumed: connector inventory-connector (RUNNING, 1 task)",
		"resumed: connector es-sink-orders (RUNNING, 2 tasks)",
		"paused again: connector sqlserver-connector (PAUSED, 1 task)",
		// Written, and STOPPED before as in the snapshot: named, with
		// the command that starts each.
		"left STOPPED: 2 connectors (STOPPED before the restore, STOPPED in the state restored); start each with:\n"+
			"    curl -sS --fail-with-body -X PUT "+srv.URL+"/connectors/mongodb-connector/resume\n"+
			"    curl -sS --fail-with-body -X PUT "+srv.URL+"/connectors/s3-sink-archive/resume\n",
	)
	for _, name := range []string{connectdemo.ConnMongo, connectdemo.ConnFile, connectdemo.ConnJDBCLegacy, connectdemo.ConnPoller} {
		if strings.Contains(out, "resumed: connector "+name+" ") || strings.Contains(out, "paused again: connector "+name+" ") {
			t.Errorf("connector %s, stopped before or left alone, was put back:\n%s", name, out)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}

	after := c.capture()
	diffMaps(t, "source offsets", sourceState(after), sourceState(before))
	diffMaps(t, "group offsets", groupState(after), groupState(before))

	confAfter := c.configStates()
	for name, b := range confBefore {
		a := confAfter[name]
		if a.TargetState != b.TargetState {
			t.Errorf("%s: target state %+v after the restore, %+v before", name, a, b)
		}
		if b.TargetState != snapshot.StateStopped && b.Tasks > 0 && a.Tasks <= 0 {
			t.Errorf("%s: %+v after the restore, want tasks", name, a)
		}
	}
	states, err := restClient(t, srv).Connectors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range confBefore {
		want := map[string]string{"STARTED": "RUNNING", "PAUSED": "PAUSED", "STOPPED": "STOPPED"}[b.TargetState]
		if got := states[name].Status.Connector.State; got != want {
			t.Errorf("%s: REST %s after the restore, want %s", name, got, want)
		}
	}
	if d := describeGroup(t, c.adm, connectdemo.GroupSinkES); len(d.Members) != 1 {
		t.Errorf("the resumed sink's group has %d members", len(d.Members))
	}
}

// TestRestoreStopConnectorsRefusalPutsBack: a restore refused after the
// connectors were stopped (an exactly-once task's transaction is open)
// wrote no offset, so it puts back the connectors it stopped, running as
// before, and says so (issue 40, item 7: it left them STOPPED); with the
// transaction gone a second run restores, stopping and resuming them.
func TestRestoreStopConnectorsRefusalPutsBack(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	eosKey := key(connectdemo.ConnEOS, `{"server":"pgpayments"}`)
	c.produce(
		&kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: eosKey, Value: []byte(`{"lsn":1}`)},
		&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key(connectdemo.ConnMySQL, `{"server":"dbserver1"}`), Value: []byte(`{"pos":0}`)},
	)
	srv := c.startConnect(connectsim.Options{})

	ctx := context.Background()
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.kc.ListenAddrs()...), kgo.TransactionalID(connectdemo.DefaultWorkerGroupID+"-"+connectdemo.ConnEOS+"-0"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: eosKey, Value: []byte(`{"lsn":2}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ends := c.ends(connectdemo.EOSOffsetsTopic)

	args := []string{"restore", id, "--connector", connectdemo.ConnEOS, "--connector", connectdemo.ConnMySQL, "--stop-connectors", "--resume", "--connect-url", srv.URL}
	out, stderr := c.mustRun(3, args...)
	wantLines(t, "stdout", out, "stopping 2 connectors: inventory-connector, payments-cdc")
	wantLines(t, "stderr", stderr,
		`connector "payments-cdc": a transaction of transactional id "connect-cluster-payments-cdc-0"`,
		"no offsets were written, so the connectors this restore stopped were put back as they were:",
	)
	if got := c.ends(connectdemo.EOSOffsetsTopic); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Error("the refused restore wrote")
	}
	for _, n := range []string{connectdemo.ConnEOS, connectdemo.ConnMySQL} {
		if st := c.configStates()[n]; st.Stopped() || st.TargetState != snapshot.StateStarted {
			t.Errorf("%s is %+v after the refusal, want put back STARTED", n, st)
		}
	}

	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	out, _ = c.mustRun(0, args...)
	wantLines(t, "second run", out, "stopping 2 connectors: inventory-connector, payments-cdc", "verified: 2 connectors match the snapshot")
	if !strings.Contains(out, "resumed: connector") {
		t.Errorf("the second run did not resume the connectors it stopped:\n%s", out)
	}
}

// TestRestoreChecksRESTState: with --connect-url the plan shows the REST
// state, and a connector stopped in the config topic whose status still
// shows it running refuses; REST workers of another Kafka cluster refuse
// before anything is stopped.
func TestRestoreChecksRESTState(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	c.badReset()
	srv := c.startConnect(connectsim.Options{StopLag: 1000})
	rc := restClient(t, srv)
	if err := rc.Stop(context.Background(), connectdemo.ConnJDBC); err != nil {
		t.Fatal(err)
	}
	out, stderr := c.mustRun(3, "restore", id, "--connector", connectdemo.ConnJDBC, "--connect-url", srv.URL)
	wantLines(t, "stdout", out, "connector jdbc-orders-source (source, STOPPED; REST RUNNING, 2 tasks)")
	wantLines(t, "stderr (words)", flat(stderr), `connector "jdbc-orders-source": its REST status is RUNNING, 2 tasks: stop it with PUT /connectors/jdbc-orders-source/stop`)

	// A dry run with --stop-connectors stops nothing and is not refused
	// for what stopping resolves.
	out, _ = c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL, "--stop-connectors", "--dry-run", "--via", "connect", "--connect-url", srv.URL)
	wantLines(t, "dry run", out,
		"dry run: --stop-connectors would stop 1 connector first: inventory-connector",
		"connector inventory-connector (source, STARTED, 1 task; REST RUNNING, 1 task)",
		"via connect: PATCH /connectors/inventory-connector/offsets with 1 partition (source)",
		"dry run: nothing written")
	if st := c.configStates()[connectdemo.ConnMySQL]; st.Stopped() {
		t.Errorf("a dry run stopped a connector")
	}

	other := newCluster(t, nil, kfake.ClusterID("other-cluster"))
	if err := connectdemo.CreateTopics(context.Background(), other.cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	otherSrv := other.startConnect(connectsim.Options{})
	_, stderr = c.mustRun(3, "restore", id, "--connector", connectdemo.ConnMySQL, "--stop-connectors", "--connect-url", otherSrv.URL)
	wantLines(t, "stderr", stderr, `belongs to Kafka cluster "other-cluster", the brokers given are cluster "offsetkeeper-demo-cluster"`, "no connector was stopped")
	if st := c.configStates()[connectdemo.ConnMySQL]; st.Stopped() {
		t.Errorf("a connector was stopped through another cluster's REST API")
	}
}

// TestRestoreViaConnect: --via connect refuses workers older than 3.6 and
// changes Connect cannot make, and otherwise restores through PATCH and
// verifies through GET; a key stored in another byte form than Connect's
// is warned about, and only Connect's form is written.
func TestRestoreViaConnect(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	// A JDBC key in field order table, protocol: not the HashMap order
	// Connect writes in (protocol, table).
	odd := key(connectdemo.ConnJDBC, `{"table":"shop.refunds","protocol":"1"}`)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: odd, Value: []byte(`{"incrementing":5}`)})
	id := c.snapshot()
	before := c.capture()
	c.badReset()
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: odd, Value: []byte(`{"incrementing":9}`)})
	// MirrorMaker's copy-constructed key: its canonical form exists too.
	mm2 := key(connectdemo.ConnMirror, `{"topic":"orders","cluster":"eu","partition":0}`)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mm2, Value: []byte(`{"offset":1}`)})
	srv := c.startConnect(connectsim.Options{Version: "3.5.2", FrameworkOnly: []string{connectdemo.ConnMongo}})
	ends := c.ends(offsetsTopics()...)

	_, stderr := c.mustRun(3, "restore", id, "--via", "connect", "--connect-url", srv.URL)
	wantLines(t, "stderr", stderr, "the workers run Kafka 3.5", "needs 3.6 or later", "nothing was written")
	srv.SetVersion("7.6.0-ccs") // Confluent Platform 7.6 is Kafka 3.6

	_, stderr = c.mustRun(3, "restore", id, "--via", "connect", "--connect-url", srv.URL, "--connector", connectdemo.ConnMirror)
	wantLines(t, "stderr (words)", flat(stderr), `--via connect cannot make this change: connector "eu->us.MirrorSourceConnector": key {"topic":"orders","cluster":"eu","partition":0} (changed): Connect would write it under`)
	if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Fatal("refused restores wrote")
	}

	scope := []string{connectdemo.ConnJDBC, connectdemo.ConnMongo, connectdemo.ConnMySQL, connectdemo.ConnSinkS3, connectdemo.ConnSinkES}
	args := []string{"restore", id, "--via", "connect", "--connect-url", srv.URL}
	for _, n := range scope {
		args = append(args, "--connector", n)
	}
	out, _ := c.mustRun(0, args...)
	wantLines(t, "stdout", out,
		`warning: --via connect: connector "jdbc-orders-source": key {"table":"shop.refunds","protocol":"1"} is not in the byte form Connect writes: through Connect its offset goes under {"protocol":"1","table":"shop.refunds"}`,
		"via connect: PATCH /connectors/s3-sink-archive/offsets with 10 partitions (sink)",
		"applied through Connect: connector inventory-connector, 1 partition: The offsets for this connector have been altered successfully",
		"applied through Connect: connector mongodb-connector, 2 partitions: The Connect framework-managed offsets for this connector have been altered successfully. However,",
		"note: connector mongodb-connector: Connect altered only the offsets it manages itself",
		"verified through Connect: 5 connectors show the restored offsets",
	)

	// What Connect reads is the snapshot's, as Connect compares offsets.
	after := c.capture()
	canonOdd := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.refunds"}`)
	for _, o := range before.SourceTable().Collect() {
		if !slices.Contains(scope, o.Connector) {
			continue
		}
		k, p := o.Key, o.Partition
		if bytes.Equal(k, odd) {
			k, p = canonOdd, connectdemo.Murmur2Partition(canonOdd, 25) // written in Connect's form
		}
		got, ok := findKey(after, o.Topic, p, k)
		if !ok || !sameOffset(t, got.Value, o.Value) {
			t.Errorf("%s/%d %s = %q, want %s", o.Topic, p, k, got.Value, o.Value)
		}
	}
	if got, _ := findKey(after, connectdemo.DefaultOffsetsTopic, connectdemo.Murmur2Partition(odd, 25), odd); string(got.Value) != `{"incrementing":9}` {
		t.Errorf("the odd key itself = %s; Connect cannot write it, it should keep the damaged value", got.Value)
	}
	for _, n := range []string{connectdemo.GroupSinkS3, connectdemo.GroupSinkES} {
		want := []string{}
		if g, ok := before.SinkGroupOf(map[string]string{connectdemo.GroupSinkS3: connectdemo.ConnSinkS3, connectdemo.GroupSinkES: connectdemo.ConnSinkES}[n]); ok {
			for _, o := range g.Offsets {
				want = append(want, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
			}
		}
		slices.Sort(want)
		if got := c.groupOffsets(n); !slices.Equal(got, want) {
			t.Errorf("group %s: %v, want %v", n, got, want)
		}
	}
}

// TestRESTConflictsRetried: 409s during a rebalance are retried until the
// stop of a connector the restore writes goes through.
func TestRESTConflictsRetried(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	c.rewrite(connectdemo.ConnFile, `{"position":0}`)
	srv := c.startConnect(connectsim.Options{})
	srv.InjectConflicts(2)
	out, _ := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnFile, "--stop-connectors", "--resume", "--connect-url", srv.URL)
	wantLines(t, "stdout", out, "stopping 1 connector: source-file-01", "verified: 1 connector matches the snapshot", "resumed: connector source-file-01 (RUNNING, 1 task)")
	n := 0
	for _, r := range srv.Requests() {
		if r == "GET /connectors" || r == "PUT /connectors/source-file-01/stop" {
			n++
		}
	}
	if n < 4 {
		t.Errorf("requests %v: want the conflicts retried", srv.Requests())
	}
}

// TestExportImport covers the file formats: a connect-rest directory
// export that Connect's PATCH accepts as is, a CSV export of the sink
// groups that re-imports to the same offsets, a REST body re-imported byte
// for byte, and bad files rejected whole with every problem listed.
func TestExportImport(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	before := c.capture()
	srv := c.startConnect(connectsim.Options{})
	dir := t.TempDir()

	// show --output-dir: a file per connector, names escaped.
	out, _ := c.mustRun(0, "show", id, "--output", "connect-rest", "--output-dir", dir)
	for _, name := range []string{"eu-%3Eus.MirrorSourceConnector.json", "caf%C3%A9-donn%C3%A9es-%F0%9F%98%80.json", "old-file-source.json", "s3-sink-archive.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("show --output-dir: %v\n%s", err, out)
		}
	}
	// Each is accepted by PATCH as is, and changes nothing Connect shows.
	rc := restClient(t, srv)
	ctx := context.Background()
	files, _ := os.ReadDir(dir)
	patched := 0
	for _, f := range files {
		name, err := url.PathUnescape(strings.TrimSuffix(f.Name(), ".json"))
		if err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if conn, ok := before.Connector(name); !ok || !conn.HasConfig || bytes.HasPrefix(body, []byte(`{"offsets":[]}`)) {
			continue
		}
		if _, err := rc.AlterOffsets(ctx, name, bytes.TrimSpace(body)); err != nil {
			t.Errorf("PATCH of %s as exported: %v", f.Name(), err)
		}
		patched++
	}
	if patched < 10 {
		t.Errorf("only %d exports were sent to PATCH", patched)
	}

	// CSV of the sink groups: no header, re-imports to the same offsets.
	csvOut, _ := c.mustRun(0, "show", id, "--output", "csv")
	if !strings.HasPrefix(csvOut, "archive-loader,clicks,0,60\n") || strings.Contains(csvOut, "group,topic") {
		t.Errorf("show --output csv:\n%s", csvOut)
	}
	csvFile := filepath.Join(t.TempDir(), "groups.csv")
	if err := os.WriteFile(csvFile, []byte(csvOut), 0o644); err != nil {
		t.Fatal(err)
	}
	c.badReset()
	out, _ = c.mustRun(0, "restore", "--from-file", csvFile)
	wantLines(t, "CSV import", out, "file "+csvFile+": csv", "archive-loader  clicks/0  changed 0 -> 60 (forward)", "verified: ")
	if strings.Contains(out, "invoices/0") {
		t.Errorf("a partition the CSV does not name was touched:\n%s", out)
	}
	for _, g := range before.SinkGroups {
		have := c.groupOffsets(g.Group)
		for _, o := range g.Offsets {
			if w := fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset); !slices.Contains(have, w) {
				t.Errorf("group %s after the CSV import: %v lacks %s", g.Group, have, w)
			}
		}
	}
	out, _ = c.mustRun(0, "restore", "--from-file", csvFile)
	wantLines(t, "second CSV import", out, "nothing to do")

	// A REST body re-imported: the keys keep their exact bytes.
	restFile := filepath.Join(dir, connectorFileName(connectdemo.ConnJDBC))
	out, _ = c.mustRun(0, "restore", "--from-file", restFile, "--connector", connectdemo.ConnJDBC)
	wantLines(t, "REST import", out, `{"protocol":"1","table":"shop.orders"}  changed  {"incrementing":1} -> {"incrementing":42}`, "verified: 1 connector matches")
	after := c.capture()
	for _, o := range before.SourceOffsetsOf(connectdemo.ConnJDBC) {
		if got, ok := findKey(after, o.Topic, o.Partition, o.Key); !ok || !bytes.Equal(got.Value, o.Value) {
			t.Errorf("after the REST import %s %s = %s, want %s", o.Topic, o.Key, got.Value, o.Value)
		}
	}

	// Bad files: every problem listed, nothing written, exit 1.
	ends := c.ends(offsetsTopics()...)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(bad, []byte("group,topic,partition,offset\narchive-loader,clicks,0,1\narchive-loader,clicks,x,1\nbilling-app,orders,0,5\narchive-loader,clicks,0,2\nclicks,0,7\n"), 0o644)
	_, stderr := c.mustRun(1, "restore", "--from-file", bad)
	wantLines(t, "bad CSV", stderr, "line 3: partition \"x\"", "line 5: group \"archive-loader\" clicks/0 is also on line 2", "line 4: group \"billing-app\" belongs to no sink connector known here", "line 6: 3 fields", "4 problems, nothing was written")
	os.WriteFile(bad, []byte("archive-loader,clicks,0,1\nbilling-app,orders,0,5\n"), 0o644)
	_, stderr = c.mustRun(1, "restore", "--from-file", bad)
	wantLines(t, "CSV with a foreign group", stderr, `line 2: group "billing-app" belongs to no sink connector known here`)
	badJSON := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(badJSON, []byte(`{"offsets":[
  {"partition":{"table":"a","protocol":"1"},"offset":{"incrementing":1}},
  {"partition":{"table":{"nested":1}},"offset":null},
  {"partition":{"protocol":"1","table":"a"},"offset":{"incrementing":2}},
  {"partition":{"table":"b"}}
]}`), 0o644)
	_, stderr = c.mustRun(1, "restore", "--from-file", badJSON, "--connector", connectdemo.ConnJDBC)
	wantLines(t, "bad REST body", stderr, "offsets[1] (line 3): partition: field \"table\" is a object", "offsets[2] (line 4): partition {\"protocol\":\"1\",\"table\":\"a\"} is also offsets[0] (line 2)", "offsets[3] (line 5): no offset", "3 problems")
	os.WriteFile(badJSON, []byte(`{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":1}}]}`), 0o644)
	_, stderr = c.mustRun(1, "restore", "--from-file", badJSON, "--connector", connectdemo.ConnJDBC)
	wantLines(t, "sink body for a source", stderr, `but "jdbc-orders-source" is a source connector`)
	_, stderr = c.mustRun(1, "restore", "--from-file", badJSON, "--connector", "no-such-connector")
	wantLines(t, "unknown connector", stderr, `connector "no-such-connector" is unknown here`)
	c.mustRun(2, "restore", "--from-file", badJSON)
	c.mustRun(2, "restore", id, "--from-file", badJSON)
	if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Error("bad files wrote")
	}
}

// TestShowAndDiffRESTState: show and diff report the REST state next to
// the config topic's; a deleted connector is unknown to Connect.
func TestShowAndDiffRESTState(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	srv := c.startConnect(connectsim.Options{})
	out, _ := c.mustRun(0, "show", id, "--connect-url", srv.URL)
	wantLines(t, "show", out, "rest RUNNING, 1 task", "rest unknown to Connect")
	c.badReset()
	out, _ = c.mustRun(0, "diff", id, "--connect-url", srv.URL)
	wantLines(t, "diff", out, "state  mongodb-connector  REST STOPPED  config topic STOPPED", "state  jdbc-orders-source  REST RUNNING, 2 tasks  config topic STARTED, 2 tasks")
	c.mustRun(2, "show", id, "--output", "connect-rest")
	c.mustRun(2, "show", id, "--output-dir", t.TempDir())
	c.mustRun(2, "restore", id, "--resume", "--connect-url", srv.URL)
	c.mustRun(2, "restore", id, "--stop-connectors")
	c.mustRun(2, "restore", id, "--via", "rest", "--connect-url", srv.URL)
}

func findKey(s *snapshot.Snapshot, topic string, partition int32, key []byte) (snapshot.SourceOffset, bool) {
	for _, o := range s.SourceTable().Collect() {
		if o.Topic == topic && o.Partition == partition && bytes.Equal(o.Key, key) {
			return o, true
		}
	}
	return snapshot.SourceOffset{}, false
}

// sameOffset compares two offset values as Connect does.
func sameOffset(t *testing.T, a, b []byte) bool {
	t.Helper()
	ma, err1 := connectjson.ParseMap(a)
	mb, err2 := connectjson.ParseMap(b)
	if err1 != nil || err2 != nil {
		return bytes.Equal(a, b)
	}
	return connectjson.Equal(ma, mb)
}

func describeGroup(t *testing.T, adm *kadm.Client, group string) kadm.DescribedGroup {
	t.Helper()
	d, err := adm.DescribeGroups(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	return d[group]
}

func TestConnectorFileName(t *testing.T) {
	for in, want := range map[string]string{
		"jdbc-orders_source.v2":        "jdbc-orders_source.v2.json",
		"eu->us.MirrorSourceConnector": "eu-%3Eus.MirrorSourceConnector.json",
		"a/b c":                        "a%2Fb%20c.json",
		"..":                           "%2E..json",
		".hidden":                      "%2Ehidden.json",
		"café":                         "caf%C3%A9.json",
	} {
		got := connectorFileName(in)
		if got != want {
			t.Errorf("connectorFileName(%q) = %q, want %q", in, got, want)
		}
		if back, err := url.PathUnescape(strings.TrimSuffix(got, ".json")); err != nil || back != in {
			t.Errorf("%q does not unescape to %q: %q %v", got, in, back, err)
		}
	}
}

// TestRestoreConnectorWithoutStatusYet: a connector Connect has a config
// for but no status yet (created a moment ago: a real worker leaves it out
// of GET /connectors?expand=status) is written when the config topic has
// it stopped with no tasks, and refused, saying to try again, when not.
func TestRestoreConnectorWithoutStatusYet(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	c.badReset()
	srv := c.startConnect(connectsim.Options{})
	if err := restClient(t, srv).Stop(context.Background(), connectdemo.ConnMySQL); err != nil {
		t.Fatal(err)
	}
	srv.HideStatus(connectdemo.ConnMySQL, true)
	srv.HideStatus(connectdemo.ConnJDBC, true)
	_, stderr := c.mustRun(3, "restore", id, "--connector", connectdemo.ConnJDBC, "--connect-url", srv.URL)
	wantLines(t, "stderr (words)", flat(stderr), `connector "jdbc-orders-source": Connect has its config but no status for it yet (just created, or being assigned to a worker): try again in a moment`)
	out, _ := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL, "--connect-url", srv.URL)
	wantLines(t, "stdout", out, "connector inventory-connector (source, STOPPED; REST no status yet)", "verified: 1 connector matches the snapshot")
}

// TestRestoreNamesConnectorLeftStopped: a restore that writes a connector
// it finds STOPPED (and that was STOPPED in the snapshot too) leaves it so,
// and says so in --output json, with the command that starts it.
func TestRestoreNamesConnectorLeftStopped(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	c.badReset() // tombstones mongodb-connector's keys
	srv := c.startConnect(connectsim.Options{})
	out, stderr := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMongo, "--connect-url", srv.URL, "--output", "json")
	var doc struct {
		LeftStopped []struct{ Connector, State, Why, Start string } `json:"left_stopped"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("restore --output json: %v\n%s", err, out)
	}
	want := "curl -sS --fail-with-body -X PUT " + srv.URL + "/connectors/" + connectdemo.ConnMongo + "/resume"
	if len(doc.LeftStopped) != 1 || doc.LeftStopped[0].Connector != connectdemo.ConnMongo || doc.LeftStopped[0].State != snapshot.StateStopped || doc.LeftStopped[0].Start != want {
		t.Fatalf("left_stopped: %+v, want %s with %q\n%s", doc.LeftStopped, connectdemo.ConnMongo, want, out)
	}
	if !strings.Contains(stderr, "left STOPPED: connector "+connectdemo.ConnMongo) {
		t.Errorf("the text on stderr does not name it:\n%s", stderr)
	}
}
