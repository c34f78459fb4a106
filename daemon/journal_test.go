package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// The compaction loop itself, under a clock the test moves: over three
// hours of journal written by the daemon's writer (busy minutes, then an
// idle stretch of heartbeats, then busy again) its ticks write level 1
// segments on minute boundaries and level 2 ones on hour boundaries, merge
// nothing while only heartbeats come, delete raw segments older than
// --journal-keep-within once merged, and thin superseded level 1 segments
// older than that. The state at every moment within keep-within read
// through the levels equals the replay of every raw segment, and reads at
// most one level 2, one level 1 and a minute of raw segments; an older
// moment on a kept boundary is still exact. A merge that fails (its level
// directory cannot be written) leaves the journal restorable and deletes
// nothing; the next tick catches up.
func TestJournalCompactionLoop(t *testing.T) {
	ctx := context.Background()
	dir, rawDir := t.TempDir(), t.TempDir()
	st, err := store.OpenStore(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keep := 40 * time.Minute
	d := &Daemon{Store: st, Snapshot: func(context.Context) (*snapshot.Snapshot, error) { return nil, nil },
		Config: Config{Journal: JournalConfig{Interval: 10 * time.Second, KeepWithin: keep}}}
	d.init()
	d.lead.begin()
	j := newJournal(d)
	clock := time.Now().UTC().Add(-4 * time.Hour).Truncate(time.Hour).Add(50 * time.Minute)
	j.now = func() time.Time { return clock }

	base := &snapshot.Snapshot{CreatedAt: clock, Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets,
		Partitions: []snapshot.TopicPartition{{Partition: 0}, {Partition: 1}}}}}
	if _, err := st.Snapshots().Put(ctx, base); err != nil {
		t.Fatal(err)
	}
	topics := []journal.EpochTopic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: 2, Worker: true,
		Start: []journal.PartitionNext{{Partition: 0}, {Partition: 1}}}}
	if err := st.Journal().PutEpoch(ctx, &journal.Epoch{ID: base.ID, Reason: journal.EpochFirstRun, StartedAt: clock, Topics: topics}); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(rawDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	raw, err := store.OpenStore(ctx, "file://"+rawDir)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	j.tail = capture.NewTail(nil, capture.Options{}, base, nil, topics, clock)
	j.chain.Epoch, j.chain.Last = base.ID, clock

	// Level 1 cannot be written at first: a file where its directory goes.
	blocker := filepath.Join(dir, "journal", base.ID, "1")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	next := [2]int64{}
	c := compactor{j: j}
	var idleRuns, idleHours int
	idleFrom, idleTo := clock.Add(70*time.Minute), clock.Add(100*time.Minute)
	end := clock.Add(3*time.Hour + 10*time.Minute)
	for step := 1; clock.Before(end); step++ {
		clock = clock.Add(5 * time.Second)
		if step%2 == 0 { // a flush every 10 s
			var entries []journal.Entry
			if clock.Before(idleFrom) || !clock.Before(idleTo) {
				for i := 0; i < 1+rng.IntN(4); i++ {
					p := rng.IntN(2)
					e := journal.Entry{Kind: journal.EntrySource, Topic: snapshot.DefaultOffsetsTopic, Partition: int32(p), Offset: next[p],
						Time: clock.Add(-time.Duration(rng.IntN(9000)) * time.Millisecond).UnixMilli(),
						Key:  fmt.Appendf(nil, `["c%d",{"file":"f%d"}]`, rng.IntN(3), rng.IntN(12)), Value: fmt.Appendf(nil, `{"position":%d}`, step)}
					if rng.IntN(10) == 0 {
						e.Value = nil // a tombstone
					}
					next[p]++
					entries = append(entries, e)
				}
			}
			seq := j.chain.Seq
			j.write(ctx, entries, clock)
			if j.chain.Seq != seq+1 && (len(entries) > 0 || j.chain.Seq != seq) {
				t.Fatalf("at %s: the writer went from seq %d to %d", clock, seq, j.chain.Seq)
			}
			if j.chain.Seq != seq {
				copyObject(t, dir, rawDir, journal.SegmentKey(j.chain.Epoch, journal.LevelRaw, j.chain.Seq, j.chain.Seq, j.chain.Last))
			}
		}
		if step%3 == 0 { // a compaction tick every 15 s
			before := c.runs
			c.tick(ctx, clock)
			if !clock.Before(idleFrom.Add(time.Minute)) && clock.Before(idleTo) && c.runs > before {
				idleRuns++
				if clock.Truncate(time.Hour).Equal(clock.Truncate(time.Minute)) || clock.Sub(clock.Truncate(time.Hour)) < time.Minute {
					idleHours++
				}
			}
		}
		if clock.Equal(base.CreatedAt.Add(5 * time.Minute)) {
			checkBlocked(t, ctx, d, st, raw)
			if err := os.Remove(blocker); err != nil {
				t.Fatal(err)
			}
		}
	}
	if idleRuns != idleHours {
		t.Errorf("the loop compacted %d times while only heartbeats came (%d of them at an hour boundary, which merges them)", idleRuns, idleHours)
	}

	l, err := st.Journal().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e := l.Epochs[0]
	var levels [3]int
	newest := map[uint64]uint64{}
	for _, si := range e.Segments {
		levels[si.Level]++
		if si.Level == journal.LevelMinute {
			newest[si.FirstSeq] = max(newest[si.FirstSeq], si.LastSeq)
		}
	}
	if levels[journal.LevelHour] != 4 || levels[journal.LevelMinute] < 60 {
		t.Fatalf("segments per level %v: want a level 2 segment per hour boundary (4) and level 1 ones", levels)
	}
	held := func(si journal.SegmentInfo) bool {
		for _, m := range e.Segments {
			if m.Level > journal.LevelRaw && m.FirstSeq <= si.FirstSeq && si.LastSeq <= m.LastSeq {
				return true
			}
		}
		return false
	}
	for _, si := range e.Segments {
		old := clock.Sub(si.LastTime) > keep+time.Minute // the loop runs once a minute
		switch {
		case si.Level == journal.LevelRaw && old && held(si):
			t.Errorf("raw segment %s is older than keep-within and merged, but kept", si.Key)
		case si.Level == journal.LevelMinute && clock.Sub(si.LastTime) > keep+time.Hour+time.Minute && si.LastSeq < newest[si.FirstSeq]:
			t.Errorf("level 1 segment %s is superseded and older than keep-within, but kept", si.Key)
		}
	}
	if levels[journal.LevelRaw] >= int(j.chain.Seq) {
		t.Fatalf("no raw segment was deleted (%d of %d kept)", levels[journal.LevelRaw], j.chain.Seq)
	}
	// The first hour (busy for its 10 minutes, then level 1 segments a
	// minute) keeps one level 1 segment once older than keep-within.
	old := map[uint64]int{}
	for _, si := range e.Segments {
		if si.Level == journal.LevelMinute && clock.Sub(si.LastTime) > keep+time.Hour+time.Minute {
			old[si.FirstSeq]++
		}
	}
	if len(old) == 0 {
		t.Fatal("no level 1 segment is old enough to be thinned: the test's span is too short")
	}
	for first, n := range old {
		if n != 1 {
			t.Errorf("%d level 1 segments from seq %d are older than keep-within, want the newest only", n, first)
		}
	}

	// Within keep-within: exact, and at most one segment of each merged
	// level and a minute of raw ones.
	for at := clock.Add(-keep); !at.After(clock); at = at.Add(97 * time.Second) {
		plan, past, hole := e.PlanAt(at)
		if past != nil || hole != nil {
			t.Fatalf("moment %s within keep-within: plan stops (%v, %v)", at, past, hole)
		}
		var per [3]int // the segments applied: those that end by the moment, and the one holding it
		for _, si := range plan {
			if !si.LastTime.After(at.Add(10 * time.Second)) {
				per[si.Level]++
			}
		}
		if per[journal.LevelHour] > 1 || per[journal.LevelMinute] > 1 || per[journal.LevelRaw] > 8 {
			t.Fatalf("moment %s reads %v segments per level, want at most 1 level 2, 1 level 1 and a minute of raw", at, per)
		}
		sameAt(t, ctx, st, raw, at, at)
	}
	// Older: restored as of the kept boundary before, which is exact.
	for _, si := range e.Segments {
		if si.Level > journal.LevelRaw && clock.Sub(si.LastTime) > keep {
			sameAt(t, ctx, st, raw, si.LastTime, si.LastTime)
		}
	}
	if checks, err := st.Journal().Verify(ctx); err != nil || checks[0].Err != nil {
		t.Fatalf("verify: %v %+v", err, checks)
	}
}

// checkBlocked checks the journal while level 1 cannot be written: the
// merges failed (and said so), no raw segment was deleted, and the state
// at each flush equals the raw replay.
func checkBlocked(t *testing.T, ctx context.Context, d *Daemon, st, raw *store.Store) {
	t.Helper()
	e := mustList(t, st)
	for _, si := range e.Segments {
		if si.Level == journal.LevelMinute {
			t.Fatalf("a level 1 segment %s was written where it cannot be", si.Key)
		}
	}
	if n := len(mustList(t, raw).Segments); n != len(e.Segments) {
		t.Fatalf("%d segments in the store, %d raw written", len(e.Segments), n)
	}
	var m dto.Metric
	if err := d.m.journalErrors.Write(&m); err != nil || m.GetCounter().GetValue() == 0 {
		t.Fatalf("the failed merges were not counted: %v %v", m.GetCounter().GetValue(), err)
	}
	for _, si := range e.Segments {
		sameAt(t, ctx, st, raw, si.LastTime, si.LastTime)
	}
}

func mustList(t *testing.T, s *store.Store) journal.EpochInfo {
	t.Helper()
	l, err := s.Journal().List(context.Background())
	if err != nil || len(l.Epochs) != 1 {
		t.Fatalf("list journal: %v %v", l, err)
	}
	return l.Epochs[0]
}

// sameAt checks that the state at at in s equals the state at want in raw.
func sameAt(t *testing.T, ctx context.Context, s, raw *store.Store, at, want time.Time) {
	t.Helper()
	got, _, err := s.Journal().StateAt(ctx, at)
	if err != nil {
		t.Fatalf("state at %s: %v", at, err)
	}
	exp, _, err := raw.Journal().StateAt(ctx, want)
	if err != nil {
		t.Fatalf("raw state at %s: %v", want, err)
	}
	a, _ := json.Marshal(got.SourceTable().Collect())
	b, _ := json.Marshal(exp.SourceTable().Collect())
	if !bytes.Equal(a, b) {
		t.Fatalf("state at %s through the levels:\n%s\nwant (raw replay at %s)\n%s", at, a, want, b)
	}
}

// copyObject copies one object of the store in dir to rawDir.
func copyObject(t *testing.T, dir, rawDir, key string) {
	t.Helper()
	for _, suffix := range []string{"", ".attrs"} {
		from := filepath.Join(dir, filepath.FromSlash(key)) + suffix
		in, err := os.Open(from)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(rawDir, filepath.FromSlash(key)) + suffix
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(to)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}
