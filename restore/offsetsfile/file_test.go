package offsetsfile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/offsetsfile"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

func TestParseOffsetsFile(t *testing.T) {
	for _, tc := range []struct {
		name, data, connector string
		// entries or rows when valid; problems when not
		n    int
		want []string
	}{
		{"rest", `{"offsets":[{"partition":{"f":"a"},"offset":{"pos":1}},{"partition":{"f":"b"},"offset":null}]}`, "c", 2, nil},
		{"rest with BOM and CRLF", "\ufeff{\r\n\"offsets\":[\r\n{\"partition\":{\"f\":\"a\"},\"offset\":{\"pos\":1.0E7}}]}\r\n", "c", 1, nil},
		{"rest without connector", `{"offsets":[{"partition":{"f":"a"},"offset":null}]}`, "", 0, []string{"does not name its connector"}},
		{"rest empty", `{"offsets":[]}`, "c", 0, []string{`"offsets" is empty`}},
		{"rest no offsets", `{"partitions":[]}`, "c", 0, []string{`unknown field "partitions"`, `no "offsets" field`}},
		{"rest trailing data", `{"offsets":[{"partition":{"f":"a"},"offset":null}]} x`, "c", 0, []string{"data after the JSON body"}},
		{"rest bad entries", `{"offsets":[
{"partition":{"f":"a","f":"b"},"offset":null},
{"partition":null,"offset":null},
{"partition":{"f":[1]},"offset":{"x":1},"extra":1},
"nope",
{"partition":{"f":"c"},"offset":{"o":{"n":1}}}]}`, "c", 0, []string{
			`offsets[0] (line 2): partition: field "f" appears twice`,
			"offsets[1] (line 3): no partition",
			`offsets[2] (line 4): unknown field "extra"`,
			`offsets[2] (line 4): partition: field "f" is a array`,
			"offsets[3] (line 5): want",
			`offsets[4] (line 6): offset: field "o" is a object`,
		}},
		{"csv", "group,topic,partition,offset\ng1,t,0,5\n\n\"g,2\",t,1,6\r\n", "", 2, nil},
		{"csv with connector", "g1,t,0,5\n", "c", 0, []string{"leave it out"}},
		{"csv bad", "g1,t,0,5\ng1,t,0,6\n,t,1,1\ng1,bad topic,1,1\ng1,t,-1,1\ng1,t,1,-5\nt,1,1\ng1,t,1,1,1\n", "", 0, []string{
			"line 2: group \"g1\" t/0 is also on line 1",
			"line 3: empty group",
			"line 4: topic \"bad topic\"",
			"line 5: partition \"-1\"",
			"line 6: offset \"-5\"",
			"line 7: 3 fields",
			"line 8: 5 fields",
		}},
		{"empty", " \n", "", 0, []string{"the file is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := offsetsfile.ParseOffsetsFile(tc.name, []byte(tc.data), tc.connector)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got := len(f.Entries) + len(f.Rows); got != tc.n {
					t.Errorf("%d entries, want %d", got, tc.n)
				}
				return
			}
			if !errors.Is(err, restore.ErrBadFile) {
				t.Fatalf("err %v, want ErrBadFile", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestFileSnapshot: a file becomes the live state with its offsets on
// top. Existing keys keep their bytes whatever the file's field order; a
// partition only the latest snapshot has takes that snapshot's bytes, in
// their own field order; a new one gets Connect's; a value equal as Connect
// compares keeps its bytes; a null leaves a key Connect does not show.
func TestFileSnapshot(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	_, cl, _ := testkit.Seeded(t, spec)
	ctx := context.Background()
	off := connectdemo.DefaultOffsetsTopic
	odd := []byte(`["jdbc-orders-source",{"table":"shop.refunds","protocol":"1"}]`)
	oddOnly := []byte(`["jdbc-orders-source",{"table":"shop.returns","protocol":"1"}]`)
	produce(t, cl, &kgo.Record{Topic: off, Key: odd, Value: []byte(`{"incrementing":5}`)}, &kgo.Record{Topic: off, Key: oddOnly, Value: []byte(`{"incrementing":6}`)})
	previous, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	produce(t, cl, &kgo.Record{Topic: off, Key: oddOnly}) // gone live, kept in the snapshot

	body := `{"offsets":[
{"partition":{"table":"shop.orders","protocol":"1"},"offset":{"incrementing":42}},
{"partition":{"protocol":"1","table":"shop.customers"},"offset":{"timestamp":1,"timestamp_nanos":2}},
{"partition":{"protocol":"1","table":"shop.returns"},"offset":{"incrementing":7}},
{"partition":{"table":"shop.new","protocol":"1"},"offset":{"incrementing":1.0E2}},
{"partition":{"protocol":"1","table":"shop.refunds"},"offset":null}]}`
	f, err := offsetsfile.ParseOffsetsFile("jdbc.json", []byte(body), connectdemo.ConnJDBC)
	if err != nil {
		t.Fatal(err)
	}
	snap, warnings, err := f.Snapshot(ctx, cl, restore.Options{}, previous)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Reason != offsetsfile.ReasonFile || snap.ClusterID != connectdemo.DefaultClusterID || len(snap.Scope) != 1 {
		t.Errorf("snapshot %+v", snap)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `lives only under key {"table":"shop.refunds","protocol":"1"}`) {
		t.Errorf("warnings %q", warnings)
	}
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ch := range plan.Connectors[0].Source.Changes() {
		if ch.Action != restore.Unchanged {
			got[string(ch.Key)] = string(ch.Action) + " " + string(ch.New)
		}
	}
	want := map[string]string{
		// The stored key; its value is the same Long: nothing to write.
		// shop.customers: other value, written in the stored field order.
		`["jdbc-orders-source",{"protocol":"1","table":"shop.customers"}]`: `changed {"timestamp_nanos":2,"timestamp":1}`,
		// Only in the latest snapshot: its bytes, in their field order.
		string(oddOnly): `added {"incrementing":7}`,
		// New: Connect's bytes (HashMap order), a Double as Java writes it.
		`["jdbc-orders-source",{"protocol":"1","table":"shop.new"}]`: `added {"incrementing":100.0}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("changes %v, want %v", got, want)
	}

	// A sink connector's REST body: numbers as strings too, null deletes.
	sink := `{"offsets":[{"partition":{"kafka_topic":"clicks","kafka_partition":"1"},"offset":{"kafka_offset":"7"}},
{"partition":{"kafka_topic":"orders","kafka_partition":5},"offset":null},
{"partition":{"kafka_topic":"orders","kafka_partition":1.5},"offset":{"kafka_offset":-1}}]}`
	f, err = offsetsfile.ParseOffsetsFile("s3.json", []byte(sink), connectdemo.ConnSinkS3)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = f.Snapshot(ctx, cl, restore.Options{}, previous)
	if !errors.Is(err, restore.ErrBadFile) || !strings.Contains(err.Error(), "offsets[2] (line 3): kafka_partition 1.5") || !strings.Contains(err.Error(), "kafka_offset -1") {
		t.Fatalf("bad sink entry: %v", err)
	}
	f, _ = offsetsfile.ParseOffsetsFile("s3.json", []byte(sink[:strings.LastIndex(sink, ",\n")]+"]}"), connectdemo.ConnSinkS3)
	snap, _, err = f.Snapshot(ctx, cl, restore.Options{}, previous)
	if err != nil {
		t.Fatal(err)
	}
	plan, err = restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ch := range plan.Connectors[0].Sink.Changes() {
		if ch.Action != restore.Unchanged {
			lines = append(lines, string(ch.Action)+" "+ch.Topic)
		}
	}
	if strings.Join(lines, ",") != "changed clicks,removed orders" {
		t.Errorf("sink changes %v", lines)
	}
}

func produce(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestFileSnapshotGroupPrefix: a CSV group of a connector no config names
// is tied to it by Options.GroupPrefix + name, not by the default prefix.
func TestFileSnapshotGroupPrefix(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	_, cl, _ := testkit.Seeded(t, spec)
	ctx := context.Background()
	csv := "team-a.archive-sink,orders,0,5\n"
	f, err := offsetsfile.ParseOffsetsFile("groups.csv", []byte(csv), "")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = f.Snapshot(ctx, cl, restore.Options{}, nil)
	if !errors.Is(err, restore.ErrBadFile) || !strings.Contains(err.Error(), `group "team-a.archive-sink" belongs to no sink connector known here (no connector config names it, it is not connect-<name>,`) {
		t.Fatalf("default prefix: %v", err)
	}
	opts := restore.Options{Options: capture.Options{GroupPrefix: "team-a."}}
	snap, _, err := f.Snapshot(ctx, cl, opts, nil)
	if err != nil {
		t.Fatalf("--group-prefix team-a.: %v", err)
	}
	c, ok := snap.Connector("archive-sink")
	if !ok || c.Type != snapshot.TypeSink || c.Group != "team-a.archive-sink" {
		t.Fatalf("connector %+v (found %v), want the sink of group team-a.archive-sink", c, ok)
	}
	g, ok := snap.SinkGroupOf("archive-sink")
	if !ok || g.Group != "team-a.archive-sink" || len(g.Offsets) != 1 || g.Offsets[0].Offset != 5 {
		t.Fatalf("sink group %+v (found %v)", g, ok)
	}
}

// TestParseGroupCSV: kafka-consumer-groups.sh --reset-offsets --export
// with one --group writes topic,partition,offset lines; with the group
// named they read as that group's rows (and four-field lines must name it).
func TestParseGroupCSV(t *testing.T) {
	f, err := offsetsfile.ParseGroupCSV("g.csv", []byte("topic,partition,offset\norders,0,5\norders,1,7\ng1,clicks,2,9\n"), "g1")
	if err != nil {
		t.Fatal(err)
	}
	want := []offsetsfile.FileRow{{Line: 2, Group: "g1", Topic: "orders", Partition: 0, Offset: 5},
		{Line: 3, Group: "g1", Topic: "orders", Partition: 1, Offset: 7}, {Line: 4, Group: "g1", Topic: "clicks", Partition: 2, Offset: 9}}
	if fmt.Sprint(f.Rows) != fmt.Sprint(want) || f.Format != offsetsfile.FormatCSV {
		t.Errorf("rows %+v\nwant %+v", f.Rows, want)
	}
	for _, tc := range []struct{ data, group, want string }{
		{"orders,0,5\ng2,orders,1,5\n", "g1", `line 2: group "g2", but the file is read for group "g1"`},
		{"orders,0,5\norders,0,6\n", "g1", `line 2: group "g1" orders/0 is also on line 1`},
		{"orders,0\n", "g1", "line 1: 2 fields, want topic,partition,offset"},
		{"orders,0,5\n", "", "no group given"},
		{`{"offsets":[]}`, "g1", "not a group's CSV file"},
	} {
		if _, err := offsetsfile.ParseGroupCSV("g.csv", []byte(tc.data), tc.group); !errors.Is(err, restore.ErrBadFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q for %q: %v, want %q", tc.data, tc.group, err, tc.want)
		}
	}
	// Without a group, the three-field form says how to name it.
	if _, err := offsetsfile.ParseOffsetsFile("g.csv", []byte("orders,0,5\n"), ""); err == nil || !strings.Contains(err.Error(), "--group G") {
		t.Errorf("three fields without a group: %v", err)
	}
}
