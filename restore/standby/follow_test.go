package standby_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// journalWriter writes a journal epoch by hand: a base snapshot of a
// cluster with connectors a (source, 3 keys), b (source, its own offsets
// topic) and s (sink), then segments.
type journalWriter struct {
	t     *testing.T
	st    *store.Store
	chain journal.ChainWriter
	next  map[int32]int64 // next offset per partition of connect-offsets
}

const followParts = 5

func sourceKey(conn, file string) []byte {
	return []byte(fmt.Sprintf(`["%s",{"filename":"%s"}]`, conn, file))
}

func newJournalWriter(t *testing.T, base time.Time) *journalWriter {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := &journalWriter{t: t, st: st, next: map[int32]int64{}}
	snap := &snapshot.Snapshot{ClusterID: "primary", CreatedAt: base, Reason: snapshot.ReasonScheduled}
	parts := make([]snapshot.TopicPartition, followParts)
	for p := range parts {
		parts[p] = snapshot.TopicPartition{Partition: int32(p), EndOffset: 10}
		w.next[int32(p)] = 10
	}
	snap.Topics = []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: parts},
		{Name: "own-offsets", Role: snapshot.RoleOffsets, Partitions: []snapshot.TopicPartition{{Partition: 0, EndOffset: 1}}}}
	for i, f := range []string{"x", "y", "z"} {
		k := sourceKey("a", f)
		p := snapshot.PartitionFor(k, followParts)
		snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic, Partition: p,
			Offset: int64(i), Key: k, Value: []byte(fmt.Sprintf(`{"position":%d}`, i))})
	}
	snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: "own-offsets", Offset: 0, Key: sourceKey("b", "q"), Value: []byte(`{"position":1}`)})
	snap.Connectors = []snapshot.Connector{
		{Name: "a", Type: snapshot.TypeSource, HasConfig: true, Tasks: 1, Config: map[string]string{"connector.class": "FileStreamSource"}},
		{Name: "b", Type: snapshot.TypeSource, HasConfig: true, Tasks: 1, OffsetsTopic: "own-offsets",
			Config: map[string]string{"connector.class": "FileStreamSource", "offsets.storage.topic": "own-offsets"}},
		{Name: "s", Type: snapshot.TypeSink, HasConfig: true, Tasks: 1, Group: "connect-s", Config: map[string]string{"connector.class": "FileStreamSink"}},
	}
	snap.SinkGroups = []snapshot.SinkGroup{{Group: "connect-s", Connector: "s", State: "Empty",
		Offsets: []snapshot.SinkOffset{{Topic: "orders", Partition: 0, Offset: 5}}}}
	snap.Normalize()
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	ep := &journal.Epoch{ID: info.ID, Reason: journal.EpochFirstRun, StartedAt: base, Topics: []journal.EpochTopic{
		{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: followParts, Worker: true},
		{Name: "own-offsets", Role: snapshot.RoleOffsets, Partitions: 1},
	}}
	if err := st.Journal().PutEpoch(ctx, ep); err != nil {
		t.Fatal(err)
	}
	w.chain = journal.ChainWriter{Epoch: info.ID, Last: base}
	return w
}

// source is an entry writing value (nil: a tombstone) to key of
// connector conn on its murmur2 partition at ts.
func (w *journalWriter) source(conn, file string, value []byte, ts time.Time) journal.Entry {
	k := sourceKey(conn, file)
	p := snapshot.PartitionFor(k, followParts)
	e := journal.Entry{Kind: journal.EntrySource, Topic: snapshot.DefaultOffsetsTopic, Partition: p, Offset: w.next[p], Time: ts.UnixMilli(), Key: k, Value: value}
	w.next[p]++
	return e
}

// segment stores a segment of entries ending at end.
func (w *journalWriter) segment(end time.Time, entries ...journal.Entry) {
	w.t.Helper()
	seg := w.chain.Next(entries, end)
	if _, err := w.st.Journal().PutSegment(context.Background(), seg); err != nil {
		w.t.Fatal(err)
	}
	w.chain.Wrote(seg)
}

// TestFollowerEqualsLatestState: the Follower's state after each new
// segment is LatestState's, field for field, read incrementally (source
// changes and tombstones, sink offsets and a group gone, a config change
// and one that drops the own offsets topic of connector b); a record
// timestamped after its segment makes the next read whole again, as do a
// new epoch and Reset.
func TestFollowerEqualsLatestState(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Millisecond)
	w := newJournalWriter(t, t0)
	var f standby.Follower
	// The state handed out by the step before must stay as it was: the
	// Follower moves on from it without overwriting its values.
	var prevGot, prevWant *snapshot.Snapshot
	step := func(name, wantRead string) {
		t.Helper()
		got, gotAt, read, err := f.Latest(ctx, w.st, nil)
		if err != nil {
			t.Fatalf("%s: Follower.Latest: %v", name, err)
		}
		if prevGot != nil && !reflect.DeepEqual(prevGot, prevWant) {
			t.Fatalf("%s: the state handed out before changed since:\n got %+v\nwant %+v", name, prevGot, prevWant)
		}
		want, wantAt, err := standby.LatestState(ctx, w.st, nil)
		if err != nil {
			t.Fatalf("%s: LatestState: %v", name, err)
		}
		if read != wantRead {
			t.Errorf("%s: read %s, want %s", name, read, wantRead)
		}
		if !gotAt.Equal(wantAt) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the Follower's state differs from LatestState's:\n got %v %+v\nwant %v %+v", name, gotAt, got, wantAt, want)
		}
		prevGot, prevWant = got, want
	}
	ts := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	w.segment(ts(1), w.source("a", "x", []byte(`{"position":100}`), ts(1)))
	step("first", standby.ReadFull)
	step("nothing new", standby.ReadIncremental)
	w.segment(ts(2), w.source("a", "y", nil, ts(2)), w.source("a", "w", []byte(`{"position":7}`), ts(2)),
		journal.Entry{Kind: journal.EntrySink, Group: "connect-s", Topic: "orders", Partition: 0, Offset: 9, Time: ts(2).UnixMilli()},
		journal.Entry{Kind: journal.EntrySink, Group: "connect-s", Topic: "orders", Partition: 1, Offset: 3, Time: ts(2).UnixMilli()})
	step("a tombstone, a new key, sink offsets", standby.ReadIncremental)
	w.segment(ts(3), w.source("a", "x", []byte(`{"position":101}`), ts(3)))
	w.segment(ts(4), w.source("a", "x", []byte(`{"position":102}`), ts(4)),
		journal.Entry{Kind: journal.EntrySink, Group: "connect-s", Topic: "orders", Partition: 1, Deleted: true, Time: ts(4).UnixMilli()})
	step("two segments at once", standby.ReadIncremental)
	conf := snapshot.Connector{Type: snapshot.TypeSource, HasConfig: true, Tasks: 1, Config: map[string]string{"connector.class": "FileStreamSource", "tasks.max": "2"}}
	w.segment(ts(5), journal.Entry{Kind: journal.EntryConfig, Connector: "b", Conn: &conf, Time: ts(5).UnixMilli(), Key: []byte("connector-b"), Value: []byte(`{}`)},
		journal.Entry{Kind: journal.EntryGroup, Group: "connect-s", Deleted: true, Time: ts(5).UnixMilli()})
	step("b's config without its own offsets topic, the sink group gone", standby.ReadIncremental)
	// A record whose time is after its segment's (a producer's clock
	// ahead): left out now, taken by a later replay.
	w.segment(ts(6), w.source("a", "z", []byte(`{"position":9}`), ts(8)))
	step("a record from the future", standby.ReadIncremental)
	w.segment(ts(9), w.source("a", "x", []byte(`{"position":103}`), ts(9)))
	step("after the record from the future", standby.ReadFull)
	step("in step again", standby.ReadIncremental)
	f.Reset()
	step("after Reset", standby.ReadFull)

	// A new epoch (the next full snapshot) is read whole.
	w2 := &journalWriter{t: t, st: w.st, next: map[int32]int64{}}
	base, _, err := standby.LatestState(ctx, w.st, nil)
	if err != nil {
		t.Fatal(err)
	}
	base.ID, base.CreatedAt, base.Reason = "", ts(10), snapshot.ReasonScheduled
	info, err := w.st.Snapshots().Put(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.Journal().PutEpoch(ctx, &journal.Epoch{ID: info.ID, Reason: journal.EpochFirstRun, StartedAt: ts(10),
		Topics: []journal.EpochTopic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: followParts, Worker: true}}}); err != nil {
		t.Fatal(err)
	}
	w2.chain = journal.ChainWriter{Epoch: info.ID, Last: ts(10)}
	for p := range int32(followParts) {
		w2.next[p] = 100
	}
	w2.segment(ts(11), w2.source("a", "x", []byte(`{"position":104}`), ts(11)))
	step("a new epoch", standby.ReadFull)
	w2.segment(ts(12), w2.source("a", "x", []byte(`{"position":105}`), ts(12)))
	step("the new epoch goes on", standby.ReadIncremental)
}
