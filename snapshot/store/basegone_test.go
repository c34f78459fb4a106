package store_test

import (
	"context"
	"errors"
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
	time.Sleep(5 * time.Millisecond)
	w.startEpoch()
	w.flush()
	time.Sleep(5 * time.Millisecond)
	at := time.Now()
	w.flush()
	if _, _, err := w.store.StateAt(ctx, at); err != nil {
		t.Fatalf("StateAt inside the epoch: %v", err)
	}
	if err := w.store.Delete(ctx, w.base.ID); err != nil {
		t.Fatal(err)
	}
	_, si, err := w.store.StateAt(ctx, at)
	if !errors.Is(err, journal.ErrNotRestorable) || !strings.Contains(err.Error(), "base snapshot was deleted") || !strings.Contains(err.Error(), "offsetkeeper restore "+older+" --dry-run") {
		base := ""
		if si != nil {
			base = si.Base.ID
		}
		t.Fatalf("StateAt inside an epoch whose base is gone: %v (base %s), want ErrNotRestorable naming the base deleted and %s", err, base, older)
	}
}
