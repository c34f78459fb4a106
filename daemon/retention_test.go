package daemon

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// TestDaemonKeepsPinnedAndManual: a daemon with --keep-last 2 never
// removes a pinned snapshot nor a young manual one, lets neither take a
// keep-last slot, and logs the rule that keeps each.
func TestDaemonKeepsPinnedAndManual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memStore(t)
	old, err := store.Snapshots().Put(ctx, &snapshot.Snapshot{ClusterID: "test-cluster", Reason: snapshot.ReasonScheduled, CreatedAt: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Pins().Pin(ctx, old.ID, "INC-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	manual, err := store.Snapshots().Put(ctx, &snapshot.Snapshot{ClusterID: "test-cluster", Reason: snapshot.ReasonManual, CreatedAt: time.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{
		Config:   Config{Schedule: "@every 1s", Policy: snapshot.Policy{Last: 2, ManualWithin: snapshot.DefaultManualWithin}},
		Store:    store,
		Snapshot: okSnapshot,
	}
	r := start(t, d)
	waitFor(t, "5 successful runs", func() bool { return runs(t, d, ResultSuccess) >= 5 })
	r.stop(t)
	ids := listIDs(t, store)
	if !slices.Contains(ids, old.ID) || !slices.Contains(ids, manual.ID) || len(ids) != 4 {
		t.Fatalf("store holds %v; want the pinned %s, the manual %s and the 2 newest scheduled", ids, old.ID, manual.ID)
	}
	logs := r.logs.String()
	for _, want := range []string{
		`msg="snapshot kept by retention" snapshot_id=` + old.ID + ` kind=full reason=scheduled`,
		`why="pinned (INC-1)"`,
		`msg="snapshot kept by retention" snapshot_id=` + manual.ID,
		`why="manual within 30d"`,
		`why="no rule keeps it"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// TestRetainEpochKeepsRawSegmentsOfAReset: --journal-keep-within thins
// an old epoch's raw segments, except in an epoch a young reset keeps, so
// that restore --at the moment before the reset stays exact.
func TestRetainEpochKeepsRawSegmentsOfAReset(t *testing.T) {
	ctx := context.Background()
	for _, held := range []bool{false, true} {
		store := memStore(t)
		base := time.Now().Add(-10 * 24 * time.Hour).Truncate(time.Hour)
		info, err := store.Snapshots().Put(ctx, &snapshot.Snapshot{ClusterID: "test-cluster", Reason: snapshot.ReasonScheduled, CreatedAt: base})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Journal().PutEpoch(ctx, &journal.Epoch{ID: info.ID, Reason: journal.EpochSnapshot, StartedAt: base}); err != nil {
			t.Fatal(err)
		}
		prev, last := "", base
		for seq := uint64(1); seq <= 4; seq++ {
			next := last.Add(20 * time.Second)
			seg := &journal.Segment{Epoch: info.ID, FirstSeq: seq, LastSeq: seq, FirstTime: last, LastTime: next, PrevDigest: prev}
			if seq == 2 {
				seg.Entries = []journal.Entry{{Kind: journal.EntryEvent, Time: next.Add(-time.Second).UnixMilli(), Before: next.Add(-time.Second).UnixMilli() - 1,
					Connector: "inventory-connector", Reason: snapshot.EventSourceTombstoned, Count: 1}}
			}
			if _, err := store.Journal().PutSegment(ctx, seg); err != nil {
				t.Fatal(err)
			}
			prev, last = seg.LastDigest, next
		}
		l, err := store.Journal().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Levels().Compact(ctx, l.Epochs[0], time.Now()); err != nil {
			t.Fatal(err)
		}
		l, _ = store.Journal().List(ctx)
		d := &Daemon{Config: Config{Journal: JournalConfig{KeepWithin: time.Hour}}, Store: store}
		if held {
			d.ret.resetEpochs = map[string]bool{info.ID: true}
		}
		if err := d.retainEpoch(ctx, l.Epochs[0], time.Now()); err != nil {
			t.Fatal(err)
		}
		l, _ = store.Journal().List(ctx)
		raw := 0
		for _, si := range l.Epochs[0].Segments {
			if si.Level == journal.LevelRaw {
				raw++
			}
		}
		if held && raw != 4 || !held && raw == 4 {
			t.Errorf("held by a reset %v: %d raw segments left of 4", held, raw)
		}
	}
}
