package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob/fileblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// journalWorld is a seeded cluster, a file store holding a base snapshot
// and the epoch started from it, and a Tail that journals into it.
type journalWorld struct {
	t     *testing.T
	cl    *kgo.Client
	adm   *kadm.Client
	store *store.Store
	dir   string
	base  *snapshot.Snapshot
	tail  *capture.Tail
	chain journal.ChainWriter
}

func newJournalWorld(t *testing.T, keeper *store.Keeper) *journalWorld {
	t.Helper()
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	return newJournalWorldOn(t, keeper, cl)
}

// newVirtualJournalWorld is newJournalWorld on kfake's virtual network,
// for a test inside a testing/synctest bubble (testkit.VirtualSeeded).
func newVirtualJournalWorld(t *testing.T) *journalWorld {
	t.Helper()
	_, cl, _ := testkit.VirtualSeeded(t, connectdemo.DefaultSpec())
	return newJournalWorldOn(t, nil, cl)
}

func newJournalWorldOn(t *testing.T, keeper *store.Keeper, cl *kgo.Client) *journalWorld {
	t.Helper()
	dir := t.TempDir()
	b, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	store := store.NewStore(b)
	t.Cleanup(func() { store.Close() })
	if keeper != nil {
		store.SetKeeper(keeper)
	}
	w := &journalWorld{t: t, cl: cl, adm: kadm.NewClient(cl), store: store, dir: dir}
	w.startEpoch()
	return w
}

func (w *journalWorld) startEpoch() {
	t := w.t
	ctx := context.Background()
	snap, err := capture.Capture(ctx, w.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := w.store.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	base, _, err := w.store.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	topics, err := capture.EpochTopicsOf(ctx, w.cl, capture.Options{}, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.store.Journal().PutEpoch(ctx, &journal.Epoch{ID: base.ID, Reason: journal.EpochFirstRun, Topics: topics}); err != nil {
		t.Fatal(err)
	}
	w.tail = capture.NewTail(w.cl, capture.Options{}, base, nil, topics, base.CreatedAt)
	if err := w.tail.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w.base, w.chain = base, journal.ChainWriter{Epoch: base.ID, Last: base.CreatedAt}
}

// flush polls the tail and writes one segment, as the daemon does.
func (w *journalWorld) flush() []journal.Entry {
	w.t.Helper()
	ctx := context.Background()
	entries, observed, err := w.tail.Poll(ctx)
	if err != nil {
		w.t.Fatalf("poll: %v", err)
	}
	seg := w.chain.Next(append(entries, w.tail.Positions()...), observed)
	if _, err := w.store.Journal().PutSegment(ctx, seg); err != nil {
		w.t.Fatal(err)
	}
	w.chain.Wrote(seg)
	return entries
}

// stamp gives the records without a timestamp one past the last segment's
// end (now, unless now is still the millisecond it ended in) and returns
// them.
func (w *journalWorld) stamp(rs ...*kgo.Record) []*kgo.Record {
	at := time.Now()
	if floor := w.chain.Last.Truncate(time.Millisecond).Add(time.Millisecond); at.Before(floor) {
		at = floor
	}
	for _, r := range rs {
		if r.Timestamp.IsZero() {
			r.Timestamp = at
		}
	}
	return rs
}

// churn writes random source offsets (some tombstones) over the keys of
// the base snapshot and commits random offsets to the empty sink groups.
// Its records carry timestamps past the last segment's end: a record the
// producer stamps in the millisecond the journal read up to is a late
// record (docs/journal.md), which the tests that hold merged levels
// against raw segments must not see by chance on a loaded machine.
func (w *journalWorld) churn(rng *rand.Rand) {
	w.t.Helper()
	ctx := context.Background()
	var rs []*kgo.Record
	for i := 0; i < 60; i++ {
		o := *w.base.SourceTable().At(int32(rng.Intn(w.base.SourceKeys())))
		if o.Connector == "" || o.Topic != snapshot.DefaultOffsetsTopic {
			continue
		}
		var v []byte
		if rng.Intn(8) > 0 {
			v = fmt.Appendf(nil, `{"position":%d}`, rng.Intn(1e6))
		}
		rs = append(rs, &kgo.Record{Topic: o.Topic, Key: o.Key, Value: v})
	}
	// Config changes: a target state, a task count, now and then a
	// Connector deleted.
	var named []snapshot.Connector
	for _, c := range w.base.Connectors {
		if c.HasConfig {
			named = append(named, c)
		}
	}
	c := named[rng.Intn(len(named))]
	states := []string{`{"state":"STARTED","state.v2":"STARTED"}`, `{"state":"PAUSED","state.v2":"PAUSED"}`, `{"state":"PAUSED","state.v2":"STOPPED"}`}
	rs = append(rs,
		&kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("target-state-" + c.Name), Value: []byte(states[rng.Intn(3)])},
		&kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("commit-" + c.Name), Value: fmt.Appendf(nil, `{"tasks":%d}`, rng.Intn(3))},
	)
	if rng.Intn(4) == 0 {
		rs = append(rs, &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("connector-" + named[rng.Intn(len(named))].Name)})
	}
	if err := w.cl.ProduceSync(ctx, w.stamp(rs...)...).FirstErr(); err != nil {
		w.t.Fatal(err)
	}
	for _, g := range w.base.SinkGroups {
		if g.Members > 0 || len(g.Offsets) == 0 {
			continue
		}
		os := kadm.Offsets{}
		for _, o := range g.Offsets {
			if rng.Intn(2) == 0 {
				os.AddOffset(o.Topic, o.Partition, int64(rng.Intn(30)), -1)
			}
		}
		if _, err := w.adm.CommitOffsets(ctx, g.Group, os); err != nil {
			w.t.Fatal(err)
		}
	}
}

// The journal's state at a moment equals a full capture taken at that
// moment, byte for byte for source offsets, and for sinks and connectors.
func TestJournalStateAtEqualsCapture(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	type moment struct {
		at   time.Time
		snap *snapshot.Snapshot
	}
	var moments []moment
	for round := 0; round < 6; round++ {
		w.churn(rng)
		passed(time.Now())
		w.flush()
		full, err := capture.Capture(ctx, w.cl, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		passed(time.Now())
		moments = append(moments, moment{time.Now(), full})
		passed(time.Now())
	}
	w.flush() // the last moment is covered by a later segment
	// The rounds changed both sides, or the comparison proves nothing.
	first, last := w.base, moments[len(moments)-1].snap
	if fmt.Sprint(first.SinkGroups) == fmt.Sprint(last.SinkGroups) || fmt.Sprint(first.SourceTable().Collect()) == fmt.Sprint(last.SourceTable().Collect()) {
		t.Fatal("the churn changed no sink or no source offset")
	}
	for i, m := range moments {
		got, info, err := w.store.Journal().StateAt(ctx, m.at)
		if err != nil {
			t.Fatalf("moment %d: %v", i, err)
		}
		if info.Fallback || info.Epoch != w.base.ID {
			t.Fatalf("moment %d: state from %+v, want the journal of epoch %s", i, info, w.base.ID)
		}
		sameState(t, fmt.Sprintf("moment %d", i), got, m.snap)
	}
}

// sameState compares what a restore uses: source offsets byte for byte,
// sink groups and connectors.
func sameState(t *testing.T, what string, got, want *snapshot.Snapshot) {
	t.Helper()
	if got.SourceKeys() != want.SourceKeys() {
		t.Fatalf("%s: %d source offsets, want %d", what, got.SourceKeys(), want.SourceKeys())
	}
	for i := range want.SourceTable().Collect() {
		g, e := *got.SourceTable().At(int32(i)), *want.SourceTable().At(int32(i))
		if g.Topic != e.Topic || g.Partition != e.Partition || g.Offset != e.Offset || !bytes.Equal(g.Key, e.Key) || !bytes.Equal(g.Value, e.Value) || g.Connector != e.Connector {
			t.Fatalf("%s: source offset %d is %s/%d@%d %s=%s, want %s/%d@%d %s=%s", what, i, g.Topic, g.Partition, g.Offset, g.Key, g.Value, e.Topic, e.Partition, e.Offset, e.Key, e.Value)
		}
	}
	jg, _ := json.Marshal(got.SinkGroups)
	jw, _ := json.Marshal(want.SinkGroups)
	gs, ws := string(jg), string(jw)
	if gs != ws {
		t.Fatalf("%s: sink groups\n got %s\nwant %s", what, gs, ws)
	}
	gc, wc := fmt.Sprintf("%+v", got.Connectors), fmt.Sprintf("%+v", want.Connectors)
	if gc != wc {
		t.Fatalf("%s: connectors\n got %s\nwant %s", what, gc, wc)
	}
}

// A partition is cut at its first record after the moment, even when a
// later record carries an earlier timestamp (a producer's clock behind):
// the state is a prefix of the log, one a worker could have read.
func TestJournalPrefixCutNonMonotonic(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	var key []byte
	for _, o := range w.base.SourceTable().Collect() {
		if o.Topic == snapshot.DefaultOffsetsTopic && o.Connector != "" {
			key = o.Key
			break
		}
	}
	later := time.Now().Add(time.Second)
	testkit.Produce(t, w.cl,
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":4}`), Timestamp: later.Add(-10 * time.Millisecond)},
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":5}`), Timestamp: later.Add(10 * time.Millisecond)},
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":6}`), Timestamp: later.Add(-5 * time.Millisecond)},
	)
	for time.Now().Before(later.Add(20 * time.Millisecond)) {
		passed(time.Now())
	}
	w.flush()
	st, _, err := w.store.Journal().StateAt(ctx, later)
	if err != nil {
		t.Fatal(err)
	}
	var val string
	for _, o := range st.SourceTable().Collect() {
		if bytes.Equal(o.Key, key) {
			val = string(o.Value)
		}
	}
	if val != `{"position":4}` {
		t.Fatalf("value at the moment is %s, want {\"position\":4}: the cut must stop at the first record after it (5), not take 6", val)
	}
}

// A tombstone in the journal removes the key from the state.
func TestJournalTombstone(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	var o snapshot.SourceOffset
	for _, so := range w.base.SourceTable().Collect() {
		if so.Topic == snapshot.DefaultOffsetsTopic && so.Connector != "" {
			o = so
			break
		}
	}
	passed(time.Now())
	before := time.Now()
	passed(time.Now())
	testkit.Produce(t, w.cl, &kgo.Record{Topic: o.Topic, Key: o.Key})
	entries := w.flush()
	passed(time.Now())
	after := time.Now()
	w.flush()
	has := func(at time.Time) bool {
		st, _, err := w.store.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, so := range st.SourceTable().Collect() {
			if bytes.Equal(so.Key, o.Key) {
				return true
			}
		}
		return false
	}
	if !has(before) || has(after) {
		t.Fatalf("key before the tombstone: %v, after: %v; want true, false", has(before), has(after))
	}
	var ev *journal.Entry
	for i := range entries {
		if entries[i].Kind == journal.EntryEvent && entries[i].Reason == snapshot.EventSourceTombstoned {
			ev = &entries[i]
		}
	}
	if ev == nil || ev.Connector != o.Connector || ev.Count != 1 {
		t.Fatalf("no source-tombstoned event for %s with count 1: %+v", o.Connector, ev)
	}
	if !has(time.UnixMilli(ev.Before)) {
		t.Fatalf("the event's moment before (%v) does not hold the key: restoring it would not undo the reset", time.UnixMilli(ev.Before))
	}
}

// Segments: a missing, altered or reordered segment is refused, naming it.
func TestJournalBrokenSegments(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(3))
	for range 3 {
		w.churn(rng)
		w.flush()
		passed(time.Now())
	}
	at := time.Now()
	if _, _, err := w.store.Journal().StateAt(ctx, at); err != nil {
		t.Fatal(err)
	}
	l, err := w.store.Journal().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	segs := l.Epochs[0].Segments
	path := func(si journal.SegmentInfo) string { return filepath.Join(w.dir, filepath.FromSlash(si.Key)) }
	data, err := os.ReadFile(path(segs[1]))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, wantKey string) {
		t.Helper()
		_, _, err := w.store.Journal().StateAt(ctx, at)
		if !errors.Is(err, journal.ErrJournalBroken) && !errors.Is(err, journal.ErrNotRestorable) {
			t.Fatalf("%s: StateAt: %v, want a broken journal", what, err)
		}
		if !strings.Contains(err.Error(), wantKey) {
			t.Fatalf("%s: error %q does not name %s", what, err, wantKey)
		}
	}
	// Altered: one byte of the body flipped.
	bad := bytes.Clone(data)
	bad[len(bad)-3] ^= 0xff
	os.WriteFile(path(segs[1]), bad, 0o644)
	check("altered", segs[1].Key)
	// The refusal says what is restorable before the damage: here, with
	// segments flushed within a minute of the epoch's start (late records
	// reach that far), its base snapshot.
	_, _, err = w.store.Journal().StateAt(ctx, at)
	if want := "restore its base snapshot " + l.Epochs[0].ID + " by ID"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("altered: error %v does not say %q", err, want)
	}
	// Reordered: segment 3's object under segment 2's name.
	other, _ := os.ReadFile(path(segs[2]))
	os.WriteFile(path(segs[1]), other, 0o644)
	check("reordered", segs[1].Key)
	// Missing.
	os.WriteFile(path(segs[1]), data, 0o644)
	if _, _, err := w.store.Journal().StateAt(ctx, at); err != nil {
		t.Fatalf("restored: %v", err)
	}
	os.Remove(path(segs[1]))
	check("missing", segs[2].Key)
	// Past the hole, the refusal says what still restores.
	_, _, err = w.store.Journal().StateAt(ctx, at)
	if want := "(restorable: " + snapshot.FmtTime(w.base.CreatedAt) + " to " + snapshot.FmtTime(segs[0].LastTime) + ")"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("missing: error %v does not say %q", err, want)
	}
	// A moment before the hole is still restorable.
	if _, _, err := w.store.Journal().StateAt(ctx, segs[0].LastTime); err != nil {
		t.Fatalf("moment before the hole: %v", err)
	}
}

// Encrypted segments: the body is not readable without the key, and an
// object moved to another segment's name does not authenticate.
func TestJournalEncrypted(t *testing.T) {
	k, err := store.OpenKeeper(context.Background(), "base64key://smGbjm71Nxd1Ig5FS0wj9SlbzAIrnolCz9bQQ6uAhl4=")
	if err != nil {
		t.Fatal(err)
	}
	w := newJournalWorld(t, k)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	w.churn(rng)
	w.flush()
	w.churn(rng)
	w.flush()
	l, _ := w.store.Journal().List(ctx)
	segs := l.Epochs[0].Segments
	data, _ := os.ReadFile(filepath.Join(w.dir, filepath.FromSlash(segs[0].Key)))
	if bytes.Contains(data, []byte("position")) {
		t.Fatal("an encrypted segment holds plaintext offsets")
	}
	if _, _, err := w.store.Journal().StateAt(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	// Without the key: refused, saying so.
	b, _ := fileblob.OpenBucket(w.dir, nil)
	plain := store.NewStore(b)
	defer plain.Close()
	if _, err := plain.Journal().ReadSegment(ctx, segs[0]); !errors.Is(err, snapshot.ErrEncrypted) {
		t.Fatalf("read without key: %v, want ErrEncrypted", err)
	}
	// Renamed: the name is bound in the additional data.
	moved := segs[0]
	moved.Key = strings.Replace(moved.Key, "/0/", "/1/", 1)
	moved.Level = 1
	os.MkdirAll(filepath.Dir(filepath.Join(w.dir, filepath.FromSlash(moved.Key))), 0o755)
	hdrFixed := bytes.Replace(data, []byte(`"level":0`), []byte(`"level":1`), 1)
	os.WriteFile(filepath.Join(w.dir, filepath.FromSlash(moved.Key)), hdrFixed, 0o644)
	if _, err := w.store.Journal().ReadSegment(ctx, moved); err == nil {
		t.Fatal("a segment under another name authenticated")
	}
}

// Continuity: a recreated topic, a changed partition count and a log
// start moved past the journal's position each break the epoch.
func TestJournalBreaks(t *testing.T) {
	ctx := context.Background()
	breakOf := func(w *journalWorld) *capture.TailBreak {
		t.Helper()
		_, _, err := w.tail.Poll(ctx)
		var tb *capture.TailBreak
		if !errors.As(err, &tb) {
			t.Fatalf("poll: %v, want a TailBreak", err)
		}
		return tb
	}
	t.Run("partitions", func(t *testing.T) {
		w := newJournalWorld(t, nil)
		if _, err := w.adm.CreatePartitions(ctx, 2, snapshot.DefaultOffsetsTopic); err != nil {
			t.Fatal(err)
		}
		if tb := breakOf(w); tb.Reason != journal.EpochPartitions {
			t.Fatalf("reason %q", tb.Reason)
		}
	})
	t.Run("gap", func(t *testing.T) {
		w := newJournalWorld(t, nil)
		rng := rand.New(rand.NewSource(1))
		w.churn(rng)
		ends, err := w.adm.ListEndOffsets(ctx, snapshot.DefaultOffsetsTopic)
		if err != nil {
			t.Fatal(err)
		}
		o := kadm.Offsets{}
		ends.Each(func(e kadm.ListedOffset) {
			if e.Offset > 0 {
				o.AddOffset(e.Topic, e.Partition, e.Offset, -1)
			}
		})
		if _, err := w.adm.DeleteRecords(ctx, o); err != nil {
			t.Fatal(err)
		}
		if tb := breakOf(w); tb.Reason != journal.EpochGap {
			t.Fatalf("reason %q", tb.Reason)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		w := newJournalWorld(t, nil)
		if _, err := w.adm.DeleteTopics(ctx, snapshot.DefaultOffsetsTopic); err != nil {
			t.Fatal(err)
		}
		tb := breakOf(w)
		// Issue 40: "restore latest" is the empty topic once it is back;
		// the break names the topic for the journal's per-connector events.
		if tb.Reason != journal.EpochTopicDeleted || tb.Topic != snapshot.DefaultOffsetsTopic || tb.Role != snapshot.RoleOffsets ||
			!strings.Contains(tb.Detail, "offsetkeeper events") || strings.Contains(tb.Detail, "latest") {
			t.Fatalf("break %+v, want %q naming the topic and pointing at events", tb, journal.EpochTopicDeleted)
		}
	})
	t.Run("recreated", func(t *testing.T) {
		w := newJournalWorld(t, nil)
		if _, err := w.adm.DeleteTopics(ctx, snapshot.DefaultOffsetsTopic); err != nil {
			t.Fatal(err)
		}
		if _, err := w.adm.CreateTopic(ctx, 25, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, snapshot.DefaultOffsetsTopic); err != nil {
			t.Fatal(err)
		}
		if tb := breakOf(w); tb.Reason != journal.EpochTopicRecreated {
			t.Fatalf("reason %q", tb.Reason)
		}
	})
}

// A journal continued from the store (a restart, a new leader) goes on
// without a gap and gives the same state as one that never stopped.
func TestJournalResume(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(9))
	w.churn(rng)
	w.flush()
	// The daemon dies; records are committed meanwhile.
	w.churn(rng)
	head, err := w.store.Journal().Head(ctx, w.base.ID)
	if err != nil {
		t.Fatal(err)
	}
	w.tail = capture.NewTail(w.cl, capture.Options{}, head.State, nil, head.Positions, head.Last.LastTime)
	if err := w.tail.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w.chain.Seq, w.chain.Digest = head.Last.LastSeq, head.Last.LastDigest
	w.flush()
	full, err := capture.Capture(ctx, w.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	passed(time.Now())
	at := time.Now()
	passed(time.Now())
	w.flush()
	got, _, err := w.store.Journal().StateAt(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, "after resume", got, full)
}

// Moments that cannot be restored: the future, before anything stored.
func TestJournalNotRestorable(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	w.flush()
	for _, at := range []time.Time{time.Now().Add(time.Hour), w.base.CreatedAt.Add(-time.Hour)} {
		if _, _, err := w.store.Journal().StateAt(ctx, at); !errors.Is(err, journal.ErrNotRestorable) {
			t.Fatalf("StateAt(%v): %v, want ErrNotRestorable", at, err)
		}
	}
}

// Merging an epoch keeps what a moment past its end restores, and a
// moment inside it is restored as of its start, saying so; the journal of
// an epoch whose snapshot is gone is pruned, the newest epoch never.
func TestJournalMergeAndPrune(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(11))
	var middle time.Time
	for i := range 4 {
		w.churn(rng)
		passed(time.Now())
		w.flush()
		if i == 1 {
			middle = time.Now()
		}
	}
	end := time.Now()
	want, _, err := w.store.Journal().StateAt(ctx, end)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := w.store.Journal().List(ctx)
	segs, err := w.store.CompactLevelsAt(ctx, l.Epochs[0], end, end)
	if err != nil || len(segs) != 1 || segs[0].Level != journal.LevelHour {
		t.Fatalf("merge: %+v %v, want one level 2 segment", segs, err)
	}
	l, _ = w.store.Journal().List(ctx)
	if n, err := w.store.Levels().DropRaw(ctx, l.Epochs[0], 0, time.Now()); err != nil || n != 4 {
		t.Fatalf("drop raw: %d %v, want the 4 raw segments deleted", n, err)
	}
	l, _ = w.store.Journal().List(ctx)
	if n := len(l.Epochs[0].Segments); n != 1 || l.Epochs[0].Segments[0].Level != journal.LevelHour {
		t.Fatalf("after the merge the epoch has %+v, want one level 2 segment", l.Epochs[0].Segments)
	}
	got, _, err := w.store.Journal().StateAt(ctx, end)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, "after the merge", got, want)
	st, info, err := w.store.Journal().StateAt(ctx, middle)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, "inside the merged span", st, w.base)
	if len(info.Notes) == 0 || !strings.Contains(info.Notes[0], "merged") {
		t.Fatalf("no note that the moment is inside a merged span: %+v", info)
	}
	if checks, err := w.store.Journal().Verify(ctx); err != nil || checks[0].Err != nil {
		t.Fatalf("verify after merge: %v %+v", err, checks)
	}

	// A second epoch; then the first's snapshot goes.
	old := w.base.ID
	w.startEpoch()
	w.flush()
	if err := w.store.Snapshots().Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	removed, err := w.store.Journal().Prune(ctx)
	if err != nil || len(removed) != 1 || removed[0] != old {
		t.Fatalf("prune: %v %v, want epoch %s", removed, err, old)
	}
	l, _ = w.store.Journal().List(ctx)
	if len(l.Epochs) != 1 || l.Epochs[0].ID != w.base.ID {
		t.Fatalf("after prune: %+v", l.Epochs)
	}
}

// A connector deleted is an event; its moment before holds the connector.
func TestJournalConnectorDeletedEvent(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	name := connectdemo.ConnFile
	passed(time.Now()) // the moment before it is after the base snapshot
	testkit.Produce(t, w.cl, &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("connector-" + name)})
	passed(time.Now())
	entries := w.flush()
	var ev *journal.Entry
	for i := range entries {
		if entries[i].Kind == journal.EntryEvent && entries[i].Reason == snapshot.EventConnectorDeleted && entries[i].Connector == name {
			ev = &entries[i]
		}
	}
	if ev == nil {
		t.Fatalf("no connector-deleted event for %s in %+v", name, entries)
	}
	hasConfig := func(at time.Time) bool {
		st, _, err := w.store.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := st.Connector(name)
		return ok && c.HasConfig
	}
	if !hasConfig(time.UnixMilli(ev.Before)) || hasConfig(time.Now()) {
		t.Fatal("the connector's config is not there just before the event, or still there after")
	}
	evs, err := w.store.Journal().Events(ctx, time.Time{})
	if err != nil || len(evs) != 1 || evs[0].Kind != snapshot.EventConnectorDeleted {
		t.Fatalf("Events: %+v %v", evs, err)
	}
}

// A moment between two epochs that do not meet is inside a gap: not
// restorable, and the error says which spans are.
func TestJournalGapBetweenEpochs(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	w.flush()
	passed(time.Now())
	inGap := time.Now()
	passed(time.Now())
	w.startEpoch() // as after a break: the old epoch ended at its last flush
	w.flush()
	_, _, err := w.store.Journal().StateAt(ctx, inGap)
	if !errors.Is(err, journal.ErrNotRestorable) || !strings.Contains(err.Error(), "inside a gap") || !strings.Contains(err.Error(), " to ") {
		t.Fatalf("StateAt inside the gap: %v", err)
	}
	if _, _, err := w.store.Journal().StateAt(ctx, time.Now()); err != nil {
		t.Fatalf("StateAt in the new epoch: %v", err)
	}
}
