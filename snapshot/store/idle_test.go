package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// passed waits until the clock has moved past t (by more than a
// millisecond, Kafka's unit). It sleeps rather than spins, so that in a
// synctest bubble, whose clock moves only while every goroutine waits, it
// is fake time.
func passed(t time.Time) time.Time {
	for d := time.Until(t.Add(time.Millisecond)); d >= 0; d = time.Until(t.Add(time.Millisecond)) {
		time.Sleep(d + time.Nanosecond)
	}
	return time.Now()
}

// An idle span between two epochs is restorable: on an idle cluster the
// daemon writes a segment only once a heartbeat and marks each flush that
// found nothing changed, and restore --at a moment after the old epoch's
// last segment but before its last flush mark was refused as "inside a
// gap" though the journal was alive and proves nothing changed. A moment
// after the mark and before the next epoch is still a gap, and the spans
// the refusal names end at the mark.
func TestJournalIdleSpanBetweenEpochs(t *testing.T) {
	w := newJournalWorld(t, nil)
	ctx := context.Background()
	w.flush()
	first := w.chain.Epoch
	lastSeg := w.chain.Last
	idle := passed(lastSeg)
	passed(idle)
	entries, observed, err := w.tail.Poll(ctx)
	if err != nil || len(entries) != 0 {
		t.Fatalf("idle poll: %v %v, want nothing changed", entries, err)
	}
	if err := w.store.Journal().PutFlushMark(ctx, first, w.chain.Seq, observed, time.Second); err != nil {
		t.Fatal(err)
	}
	inGap := passed(observed)
	passed(inGap)
	w.startEpoch()
	w.flush()

	st, info, err := w.store.Journal().StateAt(ctx, idle)
	if err != nil {
		t.Fatalf("StateAt in the idle span: %v", err)
	}
	if info.Epoch != first {
		t.Errorf("the idle span was read from epoch %q, want %q", info.Epoch, first)
	}
	want, _, err := w.store.Journal().StateAt(ctx, lastSeg)
	if err != nil {
		t.Fatal(err)
	}
	sameState(t, "idle span", st, want)
	_, _, err = w.store.Journal().StateAt(ctx, inGap)
	if !errors.Is(err, journal.ErrNotRestorable) || !strings.Contains(err.Error(), "inside a gap") ||
		!strings.Contains(err.Error(), " to "+snapshot.FmtTime(observed)) {
		t.Fatalf("StateAt after the mark, before the next epoch: %v (want a gap, the first span ending at %s)", err, snapshot.FmtTime(observed))
	}
}
