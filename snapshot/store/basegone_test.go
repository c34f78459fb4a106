package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// TestJournalBaseDeletedRefused: restore --at a moment inside an epoch
// whose base snapshot was deleted fell back, silently, to an older
// snapshot, losing everything the epoch recorded (a damaged base was
// refused). It is refused too now, naming the epoch and the snapshot to
// restore instead.
func TestJournalBaseDeletedRefused(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	older := w.base.ID
	w.flush()
	passed(time.Now())
	w.startEpoch()
	w.flush()
	passed(time.Now())
	at := time.Now()
	w.flush()
	if _, _, err := w.store.Journal().StateAt(ctx, at); err != nil {
		t.Fatalf("StateAt inside the epoch: %v", err)
	}
	if err := w.store.Snapshots().Delete(ctx, w.base.ID); err != nil {
		t.Fatal(err)
	}
	_, si, err := w.store.Journal().StateAt(ctx, at)
	if !errors.Is(err, journal.ErrNotRestorable) || !strings.Contains(err.Error(), "base snapshot was deleted") || !strings.Contains(err.Error(), "offsetkeeper restore "+older+" --dry-run") {
		base := ""
		if si != nil {
			base = si.Base.ID
		}
		t.Fatalf("StateAt inside an epoch whose base is gone: %v (base %s), want ErrNotRestorable naming the base deleted and %s", err, base, older)
	}
}

// TestJournalDamagedEpochFileRefused: a damaged epoch.json failed verify
// but not restore --at, which replayed the epoch without it (and without
// the worker topics it names). Both refuse it now.
func TestJournalDamagedEpochFileRefused(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	w.flush()
	passed(time.Now())
	at := time.Now()
	w.flush()
	if _, _, err := w.store.Journal().StateAt(ctx, at); err != nil {
		t.Fatalf("StateAt before the damage: %v", err)
	}
	p := filepath.Join(w.dir, "journal", w.base.ID, "epoch.json")
	if err := os.WriteFile(p, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks, err := w.store.Journal().Verify(ctx)
	if err != nil || len(checks) != 1 || checks[0].Err == nil {
		t.Fatalf("VerifyJournal of a damaged epoch.json: %+v, %v; want it failed", checks, err)
	}
	if _, _, err := w.store.Journal().StateAt(ctx, at); err == nil || !strings.Contains(err.Error(), "'offsetkeeper verify' fails it too") {
		t.Fatalf("StateAt with a damaged epoch.json: %v, want refused as verify does", err)
	}
}
