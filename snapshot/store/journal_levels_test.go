package store_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob/fileblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// The state at a moment read through the merged levels equals the state
// replaying only the raw segments, at every moment: on a merge boundary,
// a millisecond either side, between flushes; with a key tombstoned inside
// a merged span and re-added after, a sink group deleted and re-created,
// and a record stamped by a clock ahead of the daemon's. Raw segments
// deleted, a moment on a merge boundary is still exact, and the events
// are still found.
//
// It runs in a synctest bubble on kfake's virtual network: the wait for
// the clock to pass the record stamped ahead is fake time, not 1.6 s.
func TestJournalLevelsEqualRaw(t *testing.T) {
	synctest.Test(t, testJournalLevelsEqualRaw)
}

func testJournalLevelsEqualRaw(t *testing.T) {
	w := newVirtualJournalWorld(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(21))
	key := []byte(`["` + connectdemo.ConnFile + `",{"filename":"/tmp/levels"}]`)
	ahead := []byte(`["` + connectdemo.ConnFile + `",{"filename":"/tmp/ahead"}]`)
	var group string
	for _, g := range w.base.SinkGroups {
		if g.Members == 0 && len(g.Offsets) > 0 {
			group = g.Group
			break
		}
	}
	if group == "" {
		t.Fatal("no empty sink group to delete")
	}
	var ends []time.Time // each flush's last time
	for round := 0; round < 12; round++ {
		w.churn(rng)
		switch round {
		case 1:
			testkit.Produce(t, w.cl, w.stamp(&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":1}`)})...)
		case 3:
			testkit.Produce(t, w.cl, w.stamp(&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key})...)
		case 4:
			if _, err := w.adm.DeleteGroups(ctx, group); err != nil {
				t.Fatal(err)
			}
		case 5:
			testkit.Produce(t, w.cl, w.stamp(&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":77}`)})...)
		case 8:
			// The partition is cut at the record ahead until the clock
			// passes it: the value before it, not the last one.
			testkit.Produce(t, w.cl, w.stamp(
				&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: ahead, Value: []byte(`{"position":4}`)},
				&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: ahead, Value: []byte(`{"position":5}`), Timestamp: time.Now().Add(1500 * time.Millisecond)},
				&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: ahead, Value: []byte(`{"position":6}`)})...)
		}
		passed(time.Now())
		w.flush()
		ends = append(ends, w.chain.Last)
		if round == 8 {
			// Later moments are past the record ahead (fake time).
			time.Sleep(1600 * time.Millisecond)
		}
	}
	// The moments read below reach a millisecond past the last flush:
	// they must be in the past (the bubble's clock stands still while
	// the test runs).
	passed(ends[len(ends)-1])
	rawDir := t.TempDir()
	if err := os.CopyFS(rawDir, os.DirFS(w.dir)); err != nil {
		t.Fatal(err)
	}
	rb, err := fileblob.OpenBucket(rawDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := store.NewStore(rb)
	defer raw.Close()

	// The levels as the daemon writes them over time: a minute boundary
	// after every flush, hour boundaries after flushes 2 and 7.
	for i, b := range ends {
		var hour time.Time
		for _, h := range []int{2, 7} {
			if i >= h {
				hour = ends[h]
			}
		}
		l, err := w.store.Journal().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.store.CompactLevelsAt(ctx, l.Epochs[0], b, hour); err != nil {
			t.Fatalf("compact at flush %d: %v", i, err)
		}
	}
	l, _ := w.store.Journal().List(ctx)
	var levels [3]int
	for _, si := range l.Epochs[0].Segments {
		levels[si.Level]++
	}
	if levels[journal.LevelMinute] < 3 || levels[journal.LevelHour] != 2 {
		t.Fatalf("segments per level %v: want several level 1 and two level 2", levels)
	}
	if checks, err := w.store.Journal().Verify(ctx); err != nil || checks[0].Err != nil || checks[0].Segments != len(l.Epochs[0].Segments) {
		t.Fatalf("verify across levels: %v %+v", err, checks)
	}

	var moments []time.Time
	prev := w.base.CreatedAt
	for _, e := range ends {
		moments = append(moments, prev.Add(e.Sub(prev)/2), e.Add(-time.Millisecond), e, e.Add(time.Millisecond))
		prev = e
	}
	merged := 0
	for i, at := range moments {
		got, info, err := w.store.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatalf("moment %d: %v", i, err)
		}
		want, rinfo, err := raw.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatalf("moment %d, raw: %v", i, err)
		}
		if rinfo.Merged != 0 {
			t.Fatalf("the raw store read %d merged segments", rinfo.Merged)
		}
		if info.Merged > 0 {
			merged++
		}
		sameState(t, fmt.Sprintf("moment %d (%s)", i, at.Format(time.RFC3339Nano)), got, want)
	}
	if merged < len(moments)/2 {
		t.Fatalf("only %d of %d moments read merged segments", merged, len(moments))
	}

	// The key: set, tombstoned inside a merged span, re-added after.
	value := func(s *store.Store, at time.Time) string {
		t.Helper()
		st, _, err := s.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range st.SourceTable().Collect() {
			if bytes.Equal(o.Key, key) {
				return string(o.Value)
			}
		}
		return ""
	}
	if v1, v3, v5 := value(w.store, ends[2]), value(w.store, ends[4]), value(w.store, ends[11]); v1 != `{"position":1}` || v3 != "" || v5 != `{"position":77}` {
		t.Fatalf("key set, tombstoned, re-added: %q %q %q", v1, v3, v5)
	}

	// Raw segments deleted: a moment on a merge boundary is still exact;
	// one between boundaries says where it was restored to.
	evs, err := w.store.Journal().Events(ctx, time.Time{})
	if err != nil || len(evs) == 0 {
		t.Fatalf("events: %v %v", evs, err)
	}
	if n, err := w.store.Levels().DropRaw(ctx, l.Epochs[0], 0, time.Now()); err != nil || n == 0 {
		t.Fatalf("drop raw: %d %v", n, err)
	}
	l, _ = w.store.Journal().List(ctx)
	var bounds []time.Time
	for _, si := range l.Epochs[0].Segments {
		if si.Level == journal.LevelRaw {
			continue
		}
		bounds = append(bounds, si.LastTime)
	}
	for _, at := range bounds {
		got, _, err := w.store.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := raw.Journal().StateAt(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		sameState(t, "merged only, on boundary "+at.Format(time.RFC3339Nano), got, want)
	}
	_, info, err := w.store.Journal().StateAt(ctx, ends[0].Add(-time.Millisecond))
	if err != nil || len(info.Notes) == 0 || !regexp.MustCompile(`merged .*restored as of`).MatchString(info.Notes[0]) {
		t.Fatalf("a moment between boundaries, raw deleted: %v %+v", err, info)
	}
	// The merged segments keep a connector's events of one kind bounded,
	// one per minute (level 1) or hour (level 2): the first one's time
	// and moment before, the counts summed.
	evs2, err := w.store.Journal().Events(ctx, time.Time{})
	if err != nil || len(evs2) == 0 || len(evs2) > len(evs) {
		t.Fatalf("events after the raw segments went: %v %v, want at most %d", evs2, err, len(evs))
	}
	if a, b := eventTotals(evs), eventTotals(evs2); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("events after the raw segments went, per connector and kind:\n%v\nwant\n%v", b, a)
	}
	if checks, err := w.store.Journal().Verify(ctx); err != nil || checks[0].Err != nil {
		t.Fatalf("verify with raw deleted: %v %+v", err, checks)
	}

	// A merged segment whose prev_digest is altered breaks the chain.
	var target journal.SegmentInfo
	for _, si := range l.Epochs[0].Segments {
		if si.Level == journal.LevelMinute && si.FirstSeq > 1 {
			target = si
		}
	}
	path := filepath.Join(w.dir, filepath.FromSlash(target.Key))
	data, _ := os.ReadFile(path)
	bad := regexp.MustCompile(`"prev_digest":"[0-9a-f]{8}`).ReplaceAll(data, []byte(`"prev_digest":"00000000`))
	os.WriteFile(path, bad, 0o644)
	checks, err := w.store.Journal().Verify(ctx)
	if err != nil || checks[0].Err == nil || !bytes.Contains([]byte(checks[0].Err.Error()), []byte(target.Key)) {
		t.Fatalf("verify with a merged segment's prev_digest altered: %v %+v, want it named", err, checks)
	}
}

// eventTotal is what the events of one connector, group and kind add up
// to: the first's time and moment before, and their counts.
type eventTotal struct {
	first, before time.Time
	count         int
}

func eventTotals(evs []snapshot.Event) map[string]eventTotal {
	out := map[string]eventTotal{}
	for _, ev := range evs {
		k := ev.Connector + "|" + ev.Group + "|" + ev.Kind
		t, ok := out[k]
		if !ok || ev.Time.Before(t.first) {
			t.first, t.before = ev.Time, ev.Before
		}
		t.count += ev.Count
		out[k] = t
	}
	return out
}

// A state at a moment lists the raw segments a block of seqs at a time
// (see epochFor): across several blocks, with no merged segment, the
// state is the one replaying every segment up to the moment, and a raw
// segment missing in a later block is found and named.
func TestJournalStateAcrossRawBlocks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.OpenStore(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Millisecond)
	base := &snapshot.Snapshot{CreatedAt: t0, Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets,
		Partitions: []snapshot.TopicPartition{{Partition: 0}}}}}
	if _, err := s.Snapshots().Put(ctx, base); err != nil {
		t.Fatal(err)
	}
	topics := []journal.EpochTopic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: 1, Worker: true, Start: []journal.PartitionNext{{Partition: 0}}}}
	if err := s.Journal().PutEpoch(ctx, &journal.Epoch{ID: base.ID, Reason: journal.EpochFirstRun, StartedAt: t0, Topics: topics}); err != nil {
		t.Fatal(err)
	}
	const n = 700 // three blocks of 256
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 10 * time.Second) }
	digest := ""
	for i := 1; i <= n; i++ {
		seg := &journal.Segment{Epoch: base.ID, FirstSeq: uint64(i), LastSeq: uint64(i), FirstTime: at(i - 1), LastTime: at(i), PrevDigest: digest,
			Entries: []journal.Entry{{Kind: journal.EntrySource, Topic: snapshot.DefaultOffsetsTopic, Offset: int64(i - 1), Time: at(i).Add(-time.Second).UnixMilli(),
				Key: fmt.Appendf(nil, `["c",{"k":%d}]`, i%5), Value: fmt.Appendf(nil, `{"position":%d}`, i)}}}
		if _, err := s.Journal().PutSegment(ctx, seg); err != nil {
			t.Fatal(err)
		}
		digest = seg.LastDigest
	}
	want := func(i int) map[string]string {
		m := map[string]string{}
		for j := 1; j <= i; j++ {
			m[fmt.Sprintf(`["c",{"k":%d}]`, j%5)] = fmt.Sprintf(`{"position":%d}`, j)
		}
		return m
	}
	check := func(i int) {
		t.Helper()
		st, info, err := s.Journal().StateAt(ctx, at(i))
		if err != nil {
			t.Fatalf("state after segment %d: %v", i, err)
		}
		got := map[string]string{}
		for _, o := range st.SourceTable().Collect() {
			got[string(o.Key)] = string(o.Value)
		}
		if fmt.Sprint(got) != fmt.Sprint(want(i)) || info.Records != i {
			t.Fatalf("state after segment %d: %v (%d records), want %v", i, got, info.Records, want(i))
		}
	}
	for _, i := range []int{1, 255, 256, 257, 511, 512, 600, n} {
		check(i)
	}
	// Segment 600 gone: a moment before it restores, one after is refused
	// naming it.
	l, err := s.Journal().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, si := range l.Epochs[0].Segments {
		if si.FirstSeq == 600 {
			if err := s.Journal().DeleteObject(ctx, si.Key); err != nil {
				t.Fatal(err)
			}
		}
	}
	check(599)
	if _, _, err := s.Journal().StateAt(ctx, at(650)); err == nil || !regexp.MustCompile(`segment 600 is missing`).MatchString(err.Error()) {
		t.Fatalf("a moment past a missing segment: %v, want it named", err)
	}
}
