package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// cluster is one seeded kfake cluster and a file store, driven through
// run() as a user drives the binary.
type cluster struct {
	t       *testing.T
	kc      *kfake.Cluster
	cl      *kgo.Client
	adm     *kadm.Client
	exp     *connectdemo.Expected
	brokers string
	store   string
}

// newCluster starts a kfake cluster seeded with spec (unseeded when spec
// is nil). The live sink member, if any, runs until the test ends.
func newCluster(t *testing.T, spec *connectdemo.Spec, opts ...kfake.Opt) *cluster {
	t.Helper()
	var kc *kfake.Cluster
	var cl *kgo.Client
	var exp *connectdemo.Expected
	if spec != nil {
		kc, cl, exp = testkit.Seeded(t, *spec, opts...)
	} else {
		kc, cl = testkit.Cluster(t, opts...)
	}
	return &cluster{t: t, kc: kc, cl: cl, adm: kadm.NewClient(cl), exp: exp, brokers: strings.Join(kc.ListenAddrs(), ","), store: filepath.Join(t.TempDir(), "store")}
}

// run runs the CLI against this cluster and store.
func (c *cluster) run(args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--store", c.store)
	if !commands[args[0]].noKafka {
		args = append(args, "--brokers", c.brokers, "--kafka-timeout", "10s")
	}
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustRun runs the CLI and fails the test unless it exits with want.
func (c *cluster) mustRun(want int, args ...string) (stdout, stderr string) {
	c.t.Helper()
	code, stdout, stderr := c.run(args...)
	if code != want {
		c.t.Fatalf("offsetkeeper %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout, stderr
}

// snapshot takes a snapshot through the CLI and returns its ID.
func (c *cluster) snapshot(args ...string) string {
	c.t.Helper()
	out, _ := c.mustRun(0, append([]string{"snapshot"}, args...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// stopConnectors stops connectors the way the Connect herder does: an
// empty task commit, then target state STOPPED, on the config topic.
func (c *cluster) stopConnectors(names ...string) {
	c.t.Helper()
	var recs []*kgo.Record
	for _, n := range names {
		recs = append(recs,
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-" + n), Value: []byte(`{"tasks":0}`)},
			&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-" + n), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)},
		)
	}
	c.produce(recs...)
}

// stopAll stops every connector that has a config.
func (c *cluster) stopAll(except ...string) {
	c.t.Helper()
	var names []string
	for n, conn := range c.exp.Connectors {
		if conn.HasConfig && !slices.Contains(except, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	c.stopConnectors(names...)
}

// produce writes records with a plain producer and the default
// partitioner, as a worker (or a careless user) would.
func (c *cluster) produce(recs ...*kgo.Record) {
	c.t.Helper()
	if err := c.cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		c.t.Fatal(err)
	}
}

// commit commits group offsets as a non-member.
func (c *cluster) commit(group string, offs ...kadm.Offset) {
	c.t.Helper()
	var os kadm.Offsets
	for _, o := range offs {
		o.LeaderEpoch = -1
		os.Add(o)
	}
	if err := c.adm.CommitAllOffsets(context.Background(), group, os); err != nil {
		c.t.Fatalf("commit %s: %v", group, err)
	}
}

// ends returns the end offset of every partition of topics.
func (c *cluster) ends(topics ...string) map[string]map[int32]int64 {
	c.t.Helper()
	listed, err := c.adm.ListEndOffsets(context.Background(), topics...)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			c.t.Fatalf("list end offset %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	return out
}

// groupOffsets returns a group's committed offsets as "topic/p=offset".
func (c *cluster) groupOffsets(group string) []string {
	c.t.Helper()
	fetched, err := c.adm.FetchOffsets(context.Background(), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil
	}
	if err != nil {
		c.t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	var out []string
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			c.t.Fatalf("fetch offset of %s %s/%d: %v", group, o.Topic, o.Partition, o.Err)
		}
		if o.At >= 0 {
			out = append(out, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.At))
		}
	})
	slices.Sort(out)
	return out
}

// capture reads the whole live cluster.
func (c *cluster) capture(offsetsTopics ...string) *snapshot.Snapshot {
	c.t.Helper()
	snap, err := capture.Capture(context.Background(), c.cl, capture.Options{OffsetsTopics: offsetsTopics})
	if err != nil {
		c.t.Fatal(err)
	}
	return snap
}

// storeIDs lists the snapshots in the store.
func (c *cluster) storeIDs() []string {
	c.t.Helper()
	out, _ := c.mustRun(0, "list", "--output", "json")
	var infos []snapshot.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for _, i := range infos {
		ids = append(ids, i.ID+" "+i.Reason)
	}
	return ids
}

// recordsSince reads every record one restore transaction wrote to topic
// after from (end offsets taken before it): in each partition it touched,
// data records then a commit marker at end-1.
func (c *cluster) recordsSince(topic string, from map[int32]int64) []*kgo.Record {
	c.t.Helper()
	to := c.ends(topic)[topic]
	parts := map[int32]kgo.Offset{}
	for p, end := range to {
		if end > from[p] {
			parts[p] = kgo.NewOffset().At(from[p])
		}
	}
	if len(parts) == 0 {
		return nil
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.kc.ListenAddrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	last := map[int32]int64{}
	for p := range parts {
		last[p] = -1
	}
	done := func() bool {
		for p, l := range last {
			if l < to[p]-2 {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("read %s: timed out", topic)
		}
		fs.EachError(func(_ string, _ int32, err error) { c.t.Fatalf("read %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			last[r.Partition] = max(last[r.Partition], r.Offset)
		})
	}
	return out
}

// sourceState is every live source key: "topic/partition key" -> value.
func sourceState(s *snapshot.Snapshot) map[string]string {
	m := map[string]string{}
	for _, o := range s.SourceTable().Collect() {
		m[fmt.Sprintf("%s/%d %s", o.Topic, o.Partition, o.Key)] = string(o.Value)
	}
	return m
}

// groupState is every captured group's offsets: "group topic/p" -> offset.
func groupState(s *snapshot.Snapshot) map[string]int64 {
	m := map[string]int64{}
	for _, g := range s.SinkGroups {
		for _, o := range g.Offsets {
			m[fmt.Sprintf("%s %s/%d", g.Group, o.Topic, o.Partition)] = o.Offset
		}
	}
	return m
}

func diffMaps[V comparable](t *testing.T, what string, got, want map[string]V) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s missing, want %v", what, k, w)
		} else if g != w {
			t.Errorf("%s: %s = %v, want %v", what, k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s = %v is extra", what, k, g)
		}
	}
}

func key(connector, partition string) []byte {
	return []byte(`["` + connector + `",` + partition + `]`)
}

// badReset damages the seeded cluster the way a botched reset would.
func (c *cluster) badReset() {
	c.t.Helper()
	off := connectdemo.DefaultOffsetsTopic
	c.produce(
		// mongodb-connector: every key tombstoned.
		&kgo.Record{Topic: off, Key: key(connectdemo.ConnMongo, `{"rs":"rs0","server_id":"mongo1"}`)},
		&kgo.Record{Topic: off, Key: key(connectdemo.ConnMongo, `{"rs":"rs1","server_id":"mongo1"}`)},
		// jdbc-orders-source: offsets rewritten.
		&kgo.Record{Topic: off, Key: key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`), Value: []byte(`{"incrementing":1}`)},
		&kgo.Record{Topic: off, Key: key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.customers"}`), Value: []byte(`{"timestamp_nanos":0,"timestamp":0}`)},
		// inventory-connector: a source partition that was not there.
		&kgo.Record{Topic: off, Key: key(connectdemo.ConnMySQL, `{"server":"dbserver9"}`), Value: []byte(`{"file":"mysql-bin.000001","pos":4}`)},
		// MirrorMaker key with "->" rewritten (the escaping trap).
		&kgo.Record{Topic: off, Key: key(connectdemo.ConnMirror, `{"cluster":"eu","partition":1,"topic":"orders"}`), Value: []byte(`{"offset":0}`)},
		// payments-cdc: rewritten in its own offsets topic.
		&kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: key(connectdemo.ConnEOS, `{"server":"pgpayments"}`), Value: []byte(`{"lsn":1}`)},
	)
	// archive-loader reset to 0, plus a partition it never had.
	var offs []kadm.Offset
	for p := int32(0); p < 3; p++ {
		offs = append(offs, kadm.Offset{Topic: "clicks", Partition: p, At: 0})
	}
	for p := int32(0); p < 6; p++ {
		offs = append(offs, kadm.Offset{Topic: "orders", Partition: p, At: 0})
	}
	offs = append(offs, kadm.Offset{Topic: "invoices", Partition: 0, At: 5})
	c.commit(connectdemo.GroupSinkS3, offs...)
	// connect-es-sink-orders deleted.
	resp, err := c.adm.DeleteGroups(context.Background(), connectdemo.GroupSinkES)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := resp.Error(); err != nil {
		c.t.Fatal(err)
	}
}

func offsetsTopics() []string {
	return []string{connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic}
}

// TestRestoreBadReset is the acceptance scenario: after a bad reset, a
// restore brings back exactly the snapshot, byte for byte, on murmur2
// partitions, leaves foreign groups alone, lists an undo snapshot, and a
// second run changes nothing.
func TestRestoreBadReset(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	before := c.capture()
	foreign := c.groupOffsets(connectdemo.GroupForeign)

	c.badReset()
	ends := c.ends(offsetsTopics()...)

	began := time.Now()
	out, stderr := c.mustRun(0, "restore", id)
	t.Logf("restore of DefaultSpec after a bad reset took %s", time.Since(began))
	for _, want := range []string{
		"connector mongodb-connector (source, STOPPED)",
		"removed  {\"file\":\"mysql-bin.000001\",\"pos\":4} -> tombstone",
		`changed  {"incrementing":1} -> {"incrementing":42}`,
		"connect-es-sink-orders  the group does not exist here: the commit creates it",
		"archive-loader  invoices/0  removed 5 (offset deleted)",
		"archive-loader  clicks/0  changed 0 -> 60 (forward)",
		"plan: 6 source writes, 1 tombstone, 15 sink commits, 1 sink deletion",
		"undo snapshot: ",
		"verified: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}

	// Exactly the snapshot: every key byte-identical, every group offset.
	after := c.capture()
	diffMaps(t, "source offsets", sourceState(after), sourceState(before))
	diffMaps(t, "group offsets", groupState(after), groupState(before))
	if got := c.groupOffsets(connectdemo.GroupForeign); !slices.Equal(got, foreign) {
		t.Errorf("foreign group %s changed: %v, was %v", connectdemo.GroupForeign, got, foreign)
	}

	// Every restored record sits on its murmur2 partition.
	n := 0
	for _, topic := range offsetsTopics() {
		parts := c.exp.Partitions[topic]
		for _, r := range c.recordsSince(topic, ends[topic]) {
			n++
			if want := connectdemo.Murmur2Partition(r.Key, parts); r.Partition != want {
				t.Errorf("%s: key %s written to partition %d, murmur2 says %d", topic, r.Key, r.Partition, want)
			}
		}
	}
	if n != 7 {
		t.Errorf("restore wrote %d records, want 7", n)
	}

	// An undo snapshot is listed.
	ids := c.storeIDs()
	if len(ids) != 2 || !strings.HasSuffix(ids[1], " undo") {
		t.Errorf("store holds %v, want the snapshot and an undo snapshot", ids)
	}

	// A second run is a no-op.
	ends = c.ends(offsetsTopics()...)
	out, _ = c.mustRun(0, "restore", id)
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("second run:\n%s", out)
	}
	if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Errorf("second run wrote: end offsets %v, were %v", got, ends)
	}
	if got := c.storeIDs(); len(got) != 2 {
		t.Errorf("second run stored a snapshot: %v", got)
	}
}

// TestRestoreRefusesRunning: a restore that would write a STARTED source
// connector, or commit into a sink group with a live member, is refused
// (exit 3), naming only those, and nothing is written; a dry run lists the
// same refusals on stdout after the plan and exits 3. A running connector
// or a live group the restore writes nothing for never blocks, and one out
// of scope neither.
func TestRestoreRefusesRunning(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	spec.LiveSinkMember = true
	c := newCluster(t, &spec)
	c.stopAll(connectdemo.ConnMySQL) // es-sink-orders is stopped, but its group keeps a member
	id := c.snapshot()
	mongo0 := key(connectdemo.ConnMongo, `{"rs":"rs0","server_id":"mongo1"}`)
	mysql := key(connectdemo.ConnMySQL, `{"server":"dbserver1"}`)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mongo0},
		&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mysql, Value: []byte(`{"pos":0}`)})
	csv := filepath.Join(t.TempDir(), "es.csv")
	if err := os.WriteFile(csv, []byte(connectdemo.GroupSinkES+",orders,0,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ends := c.ends(offsetsTopics()...)
	groups := map[string][]string{}
	for _, g := range []string{connectdemo.GroupSinkES, connectdemo.GroupSinkS3} {
		groups[g] = c.groupOffsets(g)
	}
	stored := c.storeIDs()
	nothingWritten := func(what string) {
		t.Helper()
		if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
			t.Errorf("%s wrote to the offsets topics", what)
		}
		for g, want := range groups {
			if got := c.groupOffsets(g); !slices.Equal(got, want) {
				t.Errorf("%s changed group %s: %v, was %v", what, g, got, want)
			}
		}
		if got := c.storeIDs(); !slices.Equal(got, stored) {
			t.Errorf("%s stored a snapshot: %v", what, got)
		}
	}

	running := []string{
		`connector "inventory-connector": is running (target state STARTED, 1 task in the config topic)`,
		`PUT /connectors/inventory-connector/stop`,
		"The restore would write 1 connector inventory-connector: stop it first, restore the other connectors alone with --connector NAME, or let the restore stop and resume it with --connect-url URL --stop-connectors --resume.",
	}
	_, stderr := c.mustRun(3, "restore", id)
	// The refusal wraps to 120 columns: compare its words.
	wantLines(t, "stderr (words)", flat(stderr), append(running, "nothing was written (1 problem)")...)
	nothingWritten("restore")

	// The dry run: the plan, then the refusals, on stdout.
	out, stderr := c.mustRun(3, "restore", id, "--dry-run")
	// The dry run wraps the refusals to 120 columns: compare their words.
	wantLines(t, "dry run stdout (words)", strings.Join(strings.Fields(out), " "), running...)
	wantLines(t, "dry run stdout", out, append([]string{},
		"connector es-sink-orders (sink, STOPPED): unchanged, its sink group has members, left alone\n",
		"connector mongodb-connector (source, STOPPED)\n",
		"dry run: nothing written; the restore would be refused (1 problem):\n  - connector \"inventory-connector\": is running")...)
	if !strings.Contains(stderr, "dry run: restore refused by a safety check, nothing was written (1 problem, listed with the plan)") || strings.Contains(stderr, "PUT /connectors") {
		t.Errorf("dry run stderr:\n%s", stderr)
	}
	if strings.Contains(out+stderr, `connector "es-sink-orders"`) || strings.Contains(out+stderr, `connector "mongodb-connector"`) {
		t.Errorf("a connector the restore leaves alone, or a stopped one, is refused:\n%s\n%s", out, stderr)
	}
	nothingWritten("restore --dry-run")

	// A commit into the live group is refused: it has a member.
	for _, args := range [][]string{{"restore", "--from-file", csv}, {"restore", "--from-file", csv, "--dry-run"}} {
		out, stderr := c.mustRun(3, args...)
		wantLines(t, strings.Join(args, " "), out+stderr, `connector "es-sink-orders": sink group "connect-es-sink-orders" has 1 live member (state Stable)`)
		nothingWritten(strings.Join(args, " "))
	}

	// Out of scope, the running connector and the live group do not block.
	out, _ = c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMongo)
	if !strings.Contains(out, "verified: 1 connector matches the snapshot") {
		t.Errorf("scoped restore:\n%s", out)
	}
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mongo0})
	scoped := c.snapshot("--connector", connectdemo.ConnMongo, "--connector", connectdemo.ConnUnicode)
	c.mustRun(0, "restore", scoped)

	// --force says so loudly and goes ahead.
	out, stderr = c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL, "--force")
	if !strings.Contains(stderr, "WARNING: --force: the safety checks are SKIPPED") || !strings.Contains(stderr, `connector "inventory-connector": is running`) {
		t.Errorf("--force stderr:\n%s", stderr)
	}
	if !strings.Contains(out, "verified: 1 connector matches") {
		t.Errorf("--force stdout:\n%s", out)
	}
}

// TestRestoreDryRun: --dry-run prints the plan and writes nothing.
func TestRestoreDryRun(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	c.badReset()
	ends := c.ends(offsetsTopics()...)
	s3 := c.groupOffsets(connectdemo.GroupSinkS3)

	out, _ := c.mustRun(0, "restore", "--dry-run", id)
	for _, want := range []string{
		`connector jdbc-orders-source (source, STOPPED)`,
		`source  connect-offsets/14  {"protocol":"1","table":"shop.orders"}  changed  {"incrementing":1} -> {"incrementing":42}`,
		`sink  archive-loader  orders/4  changed 0 -> 37 (forward)`,
		"dry run: nothing written",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "undo snapshot") {
		t.Errorf("dry run took an undo snapshot:\n%s", out)
	}
	if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Error("dry run wrote to the offsets topics")
	}
	if got := c.groupOffsets(connectdemo.GroupSinkS3); !slices.Equal(got, s3) {
		t.Errorf("dry run committed offsets: %v, were %v", got, s3)
	}
	if got := c.groupOffsets(connectdemo.GroupSinkES); len(got) != 0 {
		t.Errorf("dry run created group %s: %v", connectdemo.GroupSinkES, got)
	}
	if got := c.storeIDs(); len(got) != 1 {
		t.Errorf("dry run stored a snapshot: %v", got)
	}
}

// TestRestoreBadInput: an unknown or corrupted snapshot, an empty scope,
// an unknown connector and bad arguments fail and write nothing.
func TestRestoreBadInput(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	source := c.snapshot("--connector", connectdemo.ConnMongo)
	c.badReset()
	ends := c.ends(offsetsTopics()...)
	s3 := c.groupOffsets(connectdemo.GroupSinkS3)

	// Corrupt the stored object of the full snapshot: one byte near its end.
	path := filepath.Join(c.store, "snapshots", id+".snap")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := slices.Clone(data)
	corrupt[len(corrupt)-10] ^= 0xff
	if err := os.WriteFile(path, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"restore", "20300101T000000.000000Z-abcdef"}, 1, "snapshot not found"},
		{[]string{"restore", id}, 1, "checksum"},
		{[]string{"restore", source, "--sink-only"}, 1, "holds no sink connectors to restore"},
		{[]string{"restore", source, "--connector", "no-such-connector"}, 1, `connector "no-such-connector" not found`},
		{[]string{"restore", source, "--source-only", "--sink-only"}, 2, "exclude each other"},
		{[]string{"restore"}, 2, "missing snapshot ID"},
		{[]string{"restore", source, "extra"}, 2, `unexpected argument "extra"`},
	} {
		code, out, stderr := c.run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q\nstdout:\n%s", tc.args, code, stderr, tc.code, tc.want, out)
		}
	}
	if got := c.ends(offsetsTopics()...); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Error("bad input wrote to the offsets topics")
	}
	if got := c.groupOffsets(connectdemo.GroupSinkS3); !slices.Equal(got, s3) {
		t.Errorf("bad input committed offsets: %v, were %v", got, s3)
	}
	if got := c.storeIDs(); len(got) != 2 {
		t.Errorf("bad input stored a snapshot: %v", got)
	}
}

// TestRestoreOtherCluster: a snapshot of another cluster is refused unless
// --allow-other-cluster; a missing offsets topic is reported with the
// command that creates it; keys land on murmur2 of the new partition count.
func TestRestoreOtherCluster(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	a.stopAll()
	id := a.snapshot()
	before := a.capture()

	b := newCluster(t, nil, kfake.ClusterID("dr-cluster"))
	b.store = a.store
	ctx := context.Background()
	if err := connectdemo.CreateTopics(ctx, b.cl, connectdemo.Topics{OffsetsPartitions: 10}); err != nil {
		t.Fatal(err)
	}
	for topic, parts := range map[string]int32{"orders": 6, "clicks": 3, "invoices": 2, "legacy.customers": 1} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	ends := b.ends(connectdemo.DefaultOffsetsTopic)

	_, stderr := b.mustRun(3, "restore", id)
	if !strings.Contains(stderr, `taken from cluster "offsetkeeper-demo-cluster", this is cluster "dr-cluster"`) || !strings.Contains(stderr, "--allow-other-cluster") {
		t.Errorf("other cluster refusal:\n%s", stderr)
	}
	_, stderr = b.mustRun(1, "restore", id, "--allow-other-cluster")
	if !strings.Contains(stderr, `payments-cdc-offsets (the offsets topic of connector "payments-cdc")`) || !strings.Contains(stderr, "kafka-topics.sh") || !strings.Contains(stderr, "--partitions 5") {
		t.Errorf("missing topic error:\n%s", stderr)
	}
	if got := b.ends(connectdemo.DefaultOffsetsTopic); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Error("refused restores wrote")
	}
	if _, err := b.adm.CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		t.Fatal(err)
	}

	out, _ := b.mustRun(0, "restore", id, "--allow-other-cluster")
	for _, want := range []string{
		`offsets topic "connect-offsets" has 10 partitions here, the snapshot's "connect-offsets" had 25`,
		"connect-es-sink-orders  the group does not exist here: the commit creates it",
		"verified: 16 connectors match the snapshot",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Every connector's key is in the new cluster once, on murmur2 of the
	// new partition count, with the value of its murmur2 copy in the old.
	after := b.capture(offsetsTopics()...)
	got := map[string]snapshot.SourceOffset{}
	for _, o := range after.SourceTable().Collect() {
		k := o.Topic + " " + string(o.Key)
		if _, dup := got[k]; dup {
			t.Errorf("key %s in two partitions of %s", o.Key, o.Topic)
		}
		got[k] = o
		if want := connectdemo.Murmur2Partition(o.Key, b.partitions(o.Topic)); o.Partition != want {
			t.Errorf("%s: key %s in partition %d, murmur2 says %d", o.Topic, o.Key, o.Partition, want)
		}
	}
	n := 0
	for _, o := range before.SourceTable().Collect() {
		if o.Connector == "" || o.Partition != connectdemo.Murmur2Partition(o.Key, a.exp.Partitions[o.Topic]) {
			continue // unparsed keys are not restored; a hand-made copy yields to the murmur2 one
		}
		n++
		g, ok := got[o.Topic+" "+string(o.Key)]
		if !ok {
			t.Errorf("%s: key %s not restored", o.Topic, o.Key)
		} else if !bytes.Equal(g.Value, o.Value) {
			t.Errorf("%s: key %s = %s, want %s", o.Topic, o.Key, g.Value, o.Value)
		}
	}
	if n != len(got) {
		t.Errorf("%d keys in the new cluster, want %d", len(got), n)
	}
	for _, g := range before.SinkGroups {
		want := []string{}
		for _, o := range g.Offsets {
			want = append(want, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
		}
		slices.Sort(want)
		if got := b.groupOffsets(g.Group); !slices.Equal(got, want) {
			t.Errorf("group %s: %v, want %v", g.Group, got, want)
		}
	}
	out, _ = b.mustRun(0, "restore", id, "--allow-other-cluster")
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("second run:\n%s", out)
	}
}

func (c *cluster) partitions(topic string) int32 {
	c.t.Helper()
	md, err := c.adm.Metadata(context.Background(), topic)
	if err != nil {
		c.t.Fatal(err)
	}
	return int32(len(md.Topics[topic].Partitions))
}

// TestRestoreExactlyOnce: an exactly-once connector is restored into its
// own offsets topic, and an open transaction on its partitions blocks the
// restore until it ends.
func TestRestoreExactlyOnce(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	eosKey := key(connectdemo.ConnEOS, `{"server":"pgpayments"}`)
	want := c.exp.LiveKeys(connectdemo.EOSOffsetsTopic)
	home := connectdemo.Murmur2Partition(eosKey, 5)
	c.produce(&kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: eosKey, Value: []byte(`{"lsn":1}`)})

	// A zombie task's transaction, left open.
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
	_, stderr := c.mustRun(3, "restore", id, "--connector", connectdemo.ConnEOS)
	if !strings.Contains(stderr, `connector "payments-cdc": a transaction of transactional id "connect-cluster-payments-cdc-0"`) || !strings.Contains(stderr, fmt.Sprintf("open on payments-cdc-offsets/%d", home)) {
		t.Errorf("open transaction refusal:\n%s", stderr)
	}
	if got := c.ends(connectdemo.EOSOffsetsTopic); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Error("refused restore wrote")
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	ends = c.ends(connectdemo.EOSOffsetsTopic)
	out, _ := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnEOS)
	// The plan's line is over 120 columns, so broken: compare the words.
	if !strings.Contains(strings.Join(strings.Fields(out), " "), fmt.Sprintf("source payments-cdc-offsets/%d {\"server\":\"pgpayments\"} changed {\"lsn\":1} -> ", home)) {
		t.Errorf("plan:\n%s", out)
	}
	recs := c.recordsSince(connectdemo.EOSOffsetsTopic, ends[connectdemo.EOSOffsetsTopic])
	if len(recs) != 1 || recs[0].Partition != home || !bytes.Equal(recs[0].Key, eosKey) || !bytes.Equal(recs[0].Value, want[home][string(eosKey)]) {
		t.Errorf("restore wrote %v, want the snapshot's value of %s on partition %d", recs, eosKey, home)
	}
	after := c.capture(offsetsTopics()...)
	for _, o := range after.SourceOffsetsOf(connectdemo.ConnEOS) {
		if o.Topic == connectdemo.EOSOffsetsTopic && !bytes.Equal(o.Value, want[o.Partition][string(o.Key)]) {
			t.Errorf("%s/%d %s = %s, want %s", o.Topic, o.Partition, o.Key, o.Value, want[o.Partition][string(o.Key)])
		}
	}
}

// TestRestoreSourceOnlySinkOnly restores the two halves apart, then rolls
// the second back with its undo snapshot.
func TestRestoreSourceOnlySinkOnly(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	before := c.capture()
	c.badReset()
	damaged := c.capture()

	out, _ := c.mustRun(0, "restore", id, "--source-only")
	if strings.Contains(out, "  sink  ") {
		t.Errorf("--source-only planned sink offsets:\n%s", out)
	}
	after := c.capture()
	diffMaps(t, "source offsets after --source-only", sourceState(after), sourceState(before))
	diffMaps(t, "group offsets after --source-only", groupState(after), groupState(damaged))

	out, _ = c.mustRun(0, "restore", id, "--sink-only")
	if strings.Contains(out, "  source  ") {
		t.Errorf("--sink-only planned source offsets:\n%s", out)
	}
	undo := ""
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(line, "undo snapshot: "); ok {
			undo = s
		}
	}
	after = c.capture()
	diffMaps(t, "group offsets after --sink-only", groupState(after), groupState(before))

	// Roll the sink restore back: the groups are as damaged as they were
	// (the deleted group comes back empty, with no offsets).
	c.mustRun(0, "restore", undo)
	after = c.capture()
	diffMaps(t, "source offsets after undo", sourceState(after), sourceState(before))
	diffMaps(t, "group offsets after undo", groupState(after), groupState(damaged))
}

// TestDiff compares a snapshot with the live cluster and with itself.
func TestDiff(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	c.badReset()

	out, _ := c.mustRun(0, "diff", id)
	for _, want := range []string{
		"diff " + id + " -> live (cluster offsetkeeper-demo-cluster)",
		"connector mongodb-connector",
		`source  connect-offsets/4  {"rs":"rs0","server_id":"mongo1"}  vanished  {"sec":1700000000`,
		`source  connect-offsets/21  {"server":"dbserver9"}  appeared  {"file":"mysql-bin.000001","pos":4}`,
		`{"protocol":"1","table":"shop.orders"}  changed  {"incrementing":42} -> {"incrementing":1}`,
		"sink  archive-loader  clicks/0  moved backward  60 -> 0",
		"sink  archive-loader  invoices/0  appeared  5",
		"sink  connect-es-sink-orders  orders/5  vanished  12",
		"diff: 7 connectors differ; source: 4 changed, 1 appeared, 2 vanished; sink: 0 moved forward, 9 moved backward, 1 appeared, 6 vanished",
	} {
		// Lines over 120 columns are broken: compare the words.
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
	out, _ = c.mustRun(0, "diff", id, "--live", "--output", "json", "--connector", connectdemo.ConnSinkS3)
	var changes []restore.Change
	if err := json.Unmarshal([]byte(out), &changes); err != nil {
		t.Fatalf("diff json: %v\n%s", err, out)
	}
	if len(changes) != 10 || changes[0].Kind != restore.KindBackward || changes[0].Group != connectdemo.GroupSinkS3 || *changes[0].OldOffset != 60 || *changes[0].NewOffset != 0 {
		t.Errorf("diff json: %s", out)
	}
	c.mustRun(1, "diff", id, "--exit-code")
	out, _ = c.mustRun(0, "diff", id, id, "--exit-code")
	if !strings.Contains(out, "no differences") {
		t.Errorf("diff of a snapshot with itself:\n%s", out)
	}
	c.mustRun(2, "diff", id, id, "--live")
	c.mustRun(2, "diff", id, "--output", "yaml")
}

// Regression: a bad reset written by a tool that does not partition by
// murmur2 (kcat's default partitioner is CRC32-based) leaves copies of keys
// on other partitions. A worker reads those copies too, so a restore that
// left them alone was not exact; it must tombstone each on the partition it
// lives in, and leave the snapshot's own hand-made duplicates alone.
func TestRestoreTombstonesStrayCopies(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	before := c.capture()

	topic := snapshot.DefaultOffsetsTopic
	n := c.exp.Partitions[topic]
	wrong := func(k []byte) int32 { return (connectdemo.Murmur2Partition(k, n) + 3) % n }
	existing := key(connectdemo.ConnMySQL, `{"server":"dbserver1"}`)
	fresh := key(connectdemo.ConnMySQL, `{"server":"dbserver-new"}`)
	manual, err := kgo.NewClient(append(c.cl.Opts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	if err := manual.ProduceSync(context.Background(),
		&kgo.Record{Topic: topic, Partition: wrong(existing), Key: existing, Value: []byte(`{"pos":1}`)},
		&kgo.Record{Topic: topic, Partition: wrong(fresh), Key: fresh, Value: []byte(`{"pos":2}`)},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	out, stderr := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL)
	if !strings.Contains(out, "tombstoned on this partition") {
		t.Errorf("plan does not show the stray tombstones:\n%s\n%s", out, stderr)
	}
	after := c.capture()
	diffMaps(t, "source offsets", sourceState(after), sourceState(before))
	out, _ = c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL)
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("second run:\n%s", out)
	}
}

// Regression: a disaster-recovery cluster may not have a config topic yet
// (Connect has never run there). The restore must treat every connector as
// having no config (stopped), not fail on the missing topic.
func TestRestoreIntoClusterWithoutConfigTopic(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	a.stopAll()
	id := a.snapshot()

	b := newCluster(t, nil, kfake.ClusterID("fresh-dr"))
	b.store = a.store
	ctx := context.Background()
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, parts := range map[string]int32{connectdemo.DefaultOffsetsTopic: 25, connectdemo.EOSOffsetsTopic: 5} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, compact, topic); err != nil {
			t.Fatal(err)
		}
	}
	for topic, parts := range map[string]int32{"orders": 6, "clicks": 3, "invoices": 2, "legacy.customers": 1} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr := b.mustRun(0, "restore", id, "--allow-other-cluster")
	if !strings.Contains(out, "verified: ") {
		t.Errorf("restore into a cluster without config topic:\n%s\n%s", out, stderr)
	}
	if !strings.Contains(out+stderr, "does not exist") {
		t.Errorf("no warning about the missing config topic:\n%s\n%s", out, stderr)
	}
}
