package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// mskConnectors are the connectors of seedMSK.
var mskConnectors = connectdemo.MSKConnectors

// seedMSK makes c an MSK Connect-shaped cluster (connectdemo.SeedMSK).
func seedMSK(c *cluster) {
	c.t.Helper()
	if err := connectdemo.SeedMSK(context.Background(), c.cl, 1); err != nil {
		c.t.Fatal(err)
	}
}

func mskStatus(m connectdemo.MSKConnector, state string) []*kgo.Record {
	return connectdemo.MSKStatus(m, state)
}

// On an MSK Connect-shaped cluster: snapshot --layout msk-connect
// captures all three connectors from their own trios; the journal catches a
// bad reset of one (events); its restore is refused while the status topic
// says it runs, and once its workers are gone (UNASSIGNED) puts back
// exactly the offsets from before, in its own offsets topic.
func TestMSKConnectLayout(t *testing.T) {
	c := newCluster(t, nil)
	seedMSK(c)
	layout := []string{"--layout", "msk-connect"}

	id := c.snapshot(layout...)
	out, _ := c.mustRun(0, "show", id, "--output", "json")
	var snap snapshot.Snapshot
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("show --output json: %v\n%s", err, out)
	}
	roles := map[string]string{}
	for _, tp := range snap.Topics {
		roles[tp.Name] = tp.Role
	}
	for _, m := range mskConnectors {
		if roles[m.Topic("configs")] != snapshot.RoleConfig || roles[m.Topic("offsets")] != snapshot.RoleOffsets {
			t.Errorf("snapshot topics lack the trio of %s: %v", m.Name, roles)
		}
	}
	conns := map[string]snapshot.Connector{}
	for _, cn := range snap.Connectors {
		conns[cn.Name] = cn
	}
	for _, m := range mskConnectors {
		cn, ok := conns[m.Name]
		if !ok || !cn.HasConfig || cn.Tasks != 1 {
			t.Errorf("connector %s: %+v (ok %v), want its config with 1 task", m.Name, cn, ok)
		}
	}
	if conns["s3-sink"].Group != "connect-s3-sink" {
		t.Errorf("s3-sink group = %q", conns["s3-sink"].Group)
	}
	where := map[string]string{}
	for _, o := range snap.SourceTable().Collect() {
		where[o.Connector+" "+string(o.Key)] = o.Topic + " " + string(o.Value)
	}
	for k, want := range map[string]string{
		`orders-jdbc ["orders-jdbc",{"protocol":"1","table":"shop.orders"}]`:    mskConnectors[0].Topic("offsets") + ` {"incrementing":4711}`,
		`orders-jdbc ["orders-jdbc",{"protocol":"1","table":"shop.customers"}]`: mskConnectors[0].Topic("offsets") + ` {"incrementing":93}`,
		`clicks-file ["clicks-file",{"filename":"/data/clicks.log"}]`:           mskConnectors[1].Topic("offsets") + ` {"position":81920}`,
	} {
		if where[k] != want {
			t.Errorf("source key %s = %q, want %q", k, where[k], want)
		}
	}
	if len(where) != 3 {
		t.Errorf("%d source keys, want 3 (the tombstoned one gone): %v", len(where), where)
	}
	if len(snap.SinkGroups) != 1 || len(snap.SinkGroups[0].Offsets) != 2 {
		t.Errorf("sink groups: %+v", snap.SinkGroups)
	}
	before := sourceState(mskCapture(c).Filter([]string{"orders-jdbc"}))

	// The journal follows every trio and catches the reset.
	logs := c.startDaemon(append(layout, "--journal-interval", "1s", "--schedule", "@every 1h")...)
	c.waitJournal(time.Now(), logs)
	since := moment()
	jdbc := mskConnectors[0].Topic("offsets")
	c.produce(&kgo.Record{Topic: jdbc, Key: key("orders-jdbc", `{"protocol":"1","table":"shop.orders"}`), Value: []byte(`{"incrementing":0}`)})
	c.waitJournal(moment(), logs)
	evOut, _ := c.mustRun(0, append(layout, "events", "--output", "json", "--since", since.Format(time.RFC3339Nano))...)
	var evs []eventJSON
	if err := json.Unmarshal([]byte(evOut), &evs); err != nil {
		t.Fatalf("events --output json: %v\n%s", err, evOut)
	}
	var caught *eventJSON
	for i, e := range evs {
		if e.Connector == "orders-jdbc" && e.Kind == snapshot.EventSourceRewound {
			caught = &evs[i]
		}
	}
	if caught == nil {
		t.Fatalf("events does not catch the reset of orders-jdbc:\n%s", evOut)
	}

	// The connector still runs as its status topic says: refused, and
	// nothing written.
	_, stderr := c.mustRun(3, append(layout, "restore", id, "--connector", "orders-jdbc")...)
	if !strings.Contains(stderr, "status topic says") || !strings.Contains(stderr, "UNASSIGNED") || strings.Contains(stderr, "--stop-connectors") {
		t.Errorf("refusal does not point at the status topic and MSK's way to stop:\n%s", stderr)
	}
	if got := mskCapture(c).Filter([]string{"orders-jdbc"}); !strings.Contains(string(sourceOffsetValue(got, "shop.orders")), `"incrementing":0`) {
		t.Fatalf("a refused restore wrote: %s", sourceOffsetValue(got, "shop.orders"))
	}

	// Deleted on MSK: its workers write UNASSIGNED. The restore goes ahead
	// and brings back exactly what was there.
	c.produce(mskStatus(mskConnectors[0], "UNASSIGNED")...)
	c.mustRun(0, append(layout, "restore", id, "--connector", "orders-jdbc")...)
	diffMaps(t, "orders-jdbc after the restore", sourceState(mskCapture(c).Filter([]string{"orders-jdbc"})), before)

	// Carried to a new custom offsets topic for a recreated connector: a
	// dry run writes nothing, the run creates it compacted with the
	// partitions of the old one and prints the worker setting; a second
	// run is refused, the topic holding records now.
	custom := "custom-offsets-orders-jdbc"
	out, _ = c.mustRun(0, append(layout, "restore", id, "--connector", "orders-jdbc", "--to-offsets-topic", custom, "--dry-run")...)
	if !strings.Contains(out, "would create offsets topic") {
		t.Errorf("--to-offsets-topic --dry-run:\n%s", out)
	}
	// Like any restore: the plan, and --output json with the topic.
	if !strings.Contains(out, "restore plan: ") {
		t.Errorf("--to-offsets-topic --dry-run prints no plan:\n%s", out)
	}
	out, _ = c.mustRun(0, append(layout, "restore", id, "--connector", "orders-jdbc", "--to-offsets-topic", custom, "--dry-run", "--output", "json")...)
	var doc struct {
		Outcome      string          `json:"outcome"`
		Plan         json.RawMessage `json:"plan"`
		OffsetsTopic struct {
			Topic   string `json:"topic"`
			Created bool   `json:"created"`
		} `json:"offsets_topic"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Outcome != "planned" || len(doc.Plan) < 10 || doc.OffsetsTopic.Topic != custom || !doc.OffsetsTopic.Created {
		t.Errorf("--to-offsets-topic --dry-run --output json (%v):\n%s", err, out)
	}
	if td, err := c.adm.ListTopics(context.Background(), custom); err != nil || td.Has(custom) {
		t.Fatalf("a dry run created %s (%v)", custom, err)
	}
	out, stderr = c.mustRun(0, append(layout, "restore", id, "--connector", "orders-jdbc", "--to-offsets-topic", custom)...)
	if !strings.Contains(out, "  offset.storage.topic="+custom+"\n") || !strings.Contains(out, "verified") || !strings.Contains(out, "undo snapshot: ") {
		t.Errorf("--to-offsets-topic does not print the worker setting:\n%s", out)
	}
	// A name the layout does not match is carried, with a warning.
	if !strings.Contains(stderr, `does not match the offsets topic pattern`) {
		t.Errorf("--to-offsets-topic %s does not warn that the layout will not find it:\n%s", custom, stderr)
	}
	fresh, err := kgo.NewClient(c.cl.Opts()...) // c.cl's metadata cache saw the topic missing
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	moved, err := capture.Capture(context.Background(), fresh, capture.Options{OffsetsTopics: []string{custom}, ConfigTopic: mskConnectors[0].Topic("configs")})
	if err != nil {
		t.Fatal(err)
	}
	wantMoved := map[string]string{}
	for _, o := range snap.SourceTable().Collect() {
		if o.Connector == "orders-jdbc" {
			wantMoved[string(o.Key)] = string(o.Value)
		}
	}
	gotMoved := map[string]string{}
	for _, o := range moved.SourceTable().Collect() {
		gotMoved[string(o.Key)] = string(o.Value)
		if p := snapshot.PartitionFor(o.Key, 5); o.Partition != p {
			t.Errorf("key %s on partition %d of %s, want its murmur2 partition %d", o.Key, o.Partition, custom, p)
		}
	}
	diffMaps(t, "the custom offsets topic", gotMoved, wantMoved)
	_, stderr = c.mustRun(3, append(layout, "restore", id, "--connector", "orders-jdbc", "--to-offsets-topic", custom)...)
	if !strings.Contains(stderr, "already holds records") {
		t.Errorf("a second --to-offsets-topic is not refused for the records there:\n%s", stderr)
	}
}

// sourceOffsetValue is the value of the orders-jdbc key of table in snap.
func sourceOffsetValue(snap *snapshot.Snapshot, table string) []byte {
	for _, o := range snap.SourceTable().Collect() {
		if strings.Contains(string(o.Key), `"table":"`+table+`"`) {
			return o.Value
		}
	}
	return nil
}

// The layout flags are settings: env twins work, and a layout with
// explicit worker topics or a bad pattern is a usage error.
func TestLayoutFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--layout", "strimzi"}, `--layout "strimzi"`},
		{[]string{"--layout", "msk-connect", "--offsets-topic", "x"}, "drop --offsets-topic"},
		{[]string{"--offsets-topic-pattern", "^(a"}, "config topic pattern"},
		{[]string{"--offsets-topic-pattern", "^(a", "--config-topic-pattern", "b"}, "offsets topic pattern"},
	} {
		var g globals
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		g.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		_, err := g.topicLayout()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want one saying %q", tc.args, err, tc.want)
		}
	}
	var g globals
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	if _, err := applyEnv(fs, func(k string) (string, bool) { return "msk-connect", k == "OFFSETKEEPER_LAYOUT" }); err != nil {
		t.Fatal(err)
	}
	l, err := g.topicLayout()
	if err != nil || l == nil || l.Offsets.String() != capture.MSKOffsetsPattern {
		t.Fatalf("OFFSETKEEPER_LAYOUT=msk-connect: %v, %v", l, err)
	}
}

// mskCapture captures c as --layout msk-connect does.
func mskCapture(c *cluster) *snapshot.Snapshot {
	c.t.Helper()
	snap, err := capture.Capture(context.Background(), c.cl, capture.Options{Layout: capture.MSKConnect()})
	if err != nil {
		c.t.Fatal(err)
	}
	return snap
}
