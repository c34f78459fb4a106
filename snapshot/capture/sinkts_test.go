package capture_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// recordAt reads the record at offset off of topic/p.
func recordAt(t *testing.T, cl *kgo.Client, topic string, p int32, off int64) *kgo.Record {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(off)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s/%d@%d: %v", topic, p, off, err)
		}
		for _, r := range fs.Records() {
			if r.Offset == off {
				return r
			}
		}
	}
}

func TestCaptureLastConsumed(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	// Nothing consumed is left below clicks/1's committed offset 55 once
	// the log starts there; orders/5 is read at 12 as usual.
	if _, err := adm.DeleteRecords(ctx, kadm.Offsets{"clicks": {1: {Topic: "clicks", Partition: 1, At: 56}}}); err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range snap.Warnings {
		if strings.Contains(w, "last consumed") {
			t.Errorf("warning: %s", w)
		}
	}
	n := 0
	for _, g := range snap.SinkGroups {
		for _, o := range g.Offsets {
			lc := o.LastConsumed
			if o.Topic == "clicks" && o.Partition == 1 {
				if lc == nil || lc.Offset != -1 {
					t.Errorf("%s %s/%d: last consumed %+v, want offset -1 (log start past the offset)", g.Group, o.Topic, o.Partition, lc)
				}
				continue
			}
			if lc == nil {
				t.Errorf("%s %s/%d@%d: no last consumed record", g.Group, o.Topic, o.Partition, o.Offset)
				continue
			}
			r := recordAt(t, cl, o.Topic, o.Partition, o.Offset-1)
			if lc.Offset != o.Offset-1 || lc.Timestamp != r.Timestamp.UnixMilli() || lc.LogAppendTime {
				t.Errorf("%s %s/%d@%d: last consumed %+v, want offset %d timestamp %d", g.Group, o.Topic, o.Partition, o.Offset, *lc, r.Offset, r.Timestamp.UnixMilli())
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d sink offsets checked", n)
	}

	// The field round-trips through the document, and a document without
	// it keeps its exact bytes.
	var buf bytes.Buffer
	if err := snap.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`,"last_consumed":{"offset":`)) {
		t.Fatal("no last_consumed in the document")
	}
	back, err := snapshot.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("decoded and encoded again, the document differs")
	}
}

// BenchmarkCaptureLastConsumed captures 100 sink groups reading the 50
// partitions of a topic of 200 records each, every group at its own
// offsets: 5,000 last consumed records to read, in one Fetch per leader
// per round of distinct partitions.
func BenchmarkCaptureLastConsumed(b *testing.B) {
	c, err := connectdemo.NewCluster()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	if err := connectdemo.CreateTopics(ctx, cl, connectdemo.Topics{}); err != nil {
		b.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 50, -1, nil, "data"); err != nil {
		b.Fatal(err)
	}
	var rs []*kgo.Record
	for p := range int32(50) {
		for i := range 200 {
			rs = append(rs, &kgo.Record{Topic: "data", Partition: p, Value: []byte("v"), Timestamp: time.UnixMilli(int64(1_700_000_000_000 + i))})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	for g := range 100 {
		offs := kadm.Offsets{}
		for p := range int32(50) {
			offs.Add(kadm.Offset{Topic: "data", Partition: p, At: int64(1 + (g*7+int(p)*13)%200), LeaderEpoch: -1})
		}
		if _, err := adm.CommitOffsets(ctx, "connect-sink-"+strconv.Itoa(g), offs); err != nil {
			b.Fatal(err)
		}
	}
	var snap *snapshot.Snapshot
	for b.Loop() {
		if snap, err = capture.Capture(ctx, cl, capture.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	for _, g := range snap.SinkGroups {
		for _, o := range g.Offsets {
			if o.LastConsumed != nil {
				n++
			}
		}
	}
	if n != 5000 {
		b.Fatalf("%d last consumed records, want 5000; warnings %q", n, snap.Warnings)
	}
	b.ReportMetric(float64(n), "records-read")
}

// TestCaptureLastConsumedLargeRecords: records larger than the partition
// limit of the fetch (which a broker returns whole only for the first
// partition of a response) are still read, and two groups at different
// offsets of one partition both get theirs.
func TestCaptureLastConsumedLargeRecords(t *testing.T) {
	c, err := connectdemo.NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx := t.Context()
	adm := kadm.NewClient(cl)
	if err := connectdemo.CreateTopics(ctx, cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "big"); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 100<<10)
	for i := range 3 {
		var rs []*kgo.Record
		for p := range int32(3) {
			rs = append(rs, &kgo.Record{Topic: "big", Partition: p, Value: big, Timestamp: time.UnixMilli(int64(1000*i) + int64(p))})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for g, at := range []int64{3, 1} {
		offs := kadm.Offsets{}
		for p := range int32(3) {
			offs.Add(kadm.Offset{Topic: "big", Partition: p, At: at, LeaderEpoch: -1})
		}
		if _, err := adm.CommitOffsets(ctx, "connect-big-"+strconv.Itoa(g), offs); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range snap.SinkGroups {
		for _, o := range g.Offsets {
			lc := o.LastConsumed
			if want := 1000*(o.Offset-1) + int64(o.Partition); lc == nil || lc.Offset != o.Offset-1 || lc.Timestamp != want {
				t.Errorf("%s %s/%d@%d: last consumed %+v, want timestamp %d", g.Group, o.Topic, o.Partition, o.Offset, lc, want)
			}
			n++
		}
	}
	if n != 6 {
		t.Fatalf("%d sink offsets, want 6; warnings %q", n, snap.Warnings)
	}
}

// A sink partition whose committed offset is past the log end keeps no
// last consumed record; the snapshot's warning counts them per topic and
// gives each distinct reason once.
func TestCaptureLastConsumedPastEnd(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	before, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var group string
	for _, g := range before.SinkGroups {
		for _, o := range g.Offsets {
			if o.Topic == "clicks" && group == "" {
				group = g.Group
			}
		}
	}
	if group == "" {
		t.Fatal("no sink group reads clicks")
	}
	past := kadm.Offsets{}
	past.Add(kadm.Offset{Topic: "clicks", Partition: 0, At: 1_000_000})
	past.Add(kadm.Offset{Topic: "clicks", Partition: 2, At: 1_000_001})
	if _, err := adm.CommitOffsets(ctx, group, past); err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `sink topic "clicks": the last consumed record of 2 partitions was not read (the committed offset is past the log end): restore --translate timestamp cannot translate them`
	var got []string
	for _, w := range snap.Warnings {
		if strings.Contains(w, "last consumed") {
			got = append(got, w)
		}
	}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("warnings %q, want [%q]", got, want)
	}
	for _, g := range snap.SinkGroups {
		for _, o := range g.Offsets {
			if g.Group == group && o.Topic == "clicks" && (o.Partition == 0 || o.Partition == 2) && o.LastConsumed != nil {
				t.Errorf("%s %s/%d@%d: last consumed %+v, want none", g.Group, o.Topic, o.Partition, o.Offset, *o.LastConsumed)
			}
		}
	}
}
