package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestPins pins, lists, re-notes and unpins snapshots on every backend:
// a pin lives beside its snapshot (List, Get and Verify are unchanged),
// resolves IDs as other commands do, and a pin of a snapshot that is not
// stored is refused with nothing written.
func TestPins(t *testing.T) {
	for _, b := range storeBackends {
		t.Run(b.name, func(t *testing.T) {
			st, _ := b.open(t)
			testPins(t, st)
		})
	}
}

func testPins(t *testing.T, st *Store) {
	ctx := context.Background()
	a := mustPut(t, st, testSnapshot())
	bInfo := mustPut(t, st, testSnapshot())
	before := mustList(t, st)
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)

	id, p, err := st.Pins().Pin(ctx, a.ID[:20], "before the upgrade", now)
	if err != nil || id != a.ID || p.Note != "before the upgrade" || !p.PinnedAt.Equal(now) {
		t.Fatalf("Pin(prefix) = %s, %+v, %v; want %s pinned", id, p, err, a.ID)
	}
	if id, _, err := st.Pins().Pin(ctx, "latest", "", now); err != nil || id != bInfo.ID {
		t.Fatalf("Pin(latest) = %s, %v; want %s", id, err, bInfo.ID)
	}
	// Pinning again replaces the note.
	if _, _, err := st.Pins().Pin(ctx, a.ID, "INC-42", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Pins().Pin(ctx, snapshot.NewID(now), "", now); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("Pin(absent ID) = %v, want ErrNotFound", err)
	}
	if _, _, err := st.Pins().Pin(ctx, a.ID, strings.Repeat("x", MaxPinNote+1), now); err == nil {
		t.Fatal("Pin with a too long note succeeded")
	}

	// The snapshots' listing, reads and verification do not see pins.
	if got := idsOf(mustList(t, st)); strings.Join(got, " ") != strings.Join(idsOf(before), " ") {
		t.Fatalf("List after pinning = %v, want %v", got, idsOf(before))
	}
	if _, err := st.Snapshots().Verify(ctx, a.ID); err != nil {
		t.Fatalf("Verify pinned snapshot: %v", err)
	}
	infos, err := st.Pins().Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].Pin == nil || infos[0].Pin.Note != "INC-42" || infos[1].Pin == nil || infos[1].Pin.Note != "" {
		t.Fatalf("ListPinned = %+v, want both pinned, the first with note INC-42", infos)
	}
	if ok, err := st.Pins().Pinned(ctx, bInfo.ID); err != nil || !ok {
		t.Fatalf("Pinned(%s) = %v, %v", bInfo.ID, ok, err)
	}

	if id, err := st.Pins().Unpin(ctx, bInfo.ID); err != nil || id != bInfo.ID {
		t.Fatalf("Unpin = %s, %v", id, err)
	}
	if _, err := st.Pins().Unpin(ctx, bInfo.ID); !errors.Is(err, ErrNotPinned) {
		t.Fatalf("Unpin twice = %v, want ErrNotPinned", err)
	}
	// A pin whose snapshot was removed by hand can still be unpinned by ID.
	if err := st.Snapshots().Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	pins, err := st.Pins().All(ctx)
	if err != nil || len(pins) != 1 {
		t.Fatalf("Pins = %v, %v; want the orphan pin of %s", pins, err, a.ID)
	}
	if _, err := st.Pins().Unpin(ctx, a.ID); err != nil {
		t.Fatalf("Unpin of a removed snapshot's pin: %v", err)
	}
	if pins, err := st.Pins().All(ctx); err != nil || len(pins) != 0 {
		t.Fatalf("Pins after unpinning all = %v, %v", pins, err)
	}
}
