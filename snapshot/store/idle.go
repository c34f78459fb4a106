package store

import (
	"context"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// provenTo is how far epoch e's journal proves the state: to its last
// segment, or to a later flush mark that follows it. A flush that found
// nothing changed writes a mark, not a segment (the daemon writes an idle
// journal's segment only once a JournalHeartbeat), and the daemon flushes
// an epoch once more before the next one starts: so an idle span before
// the next epoch's base snapshot is covered by the mark, not a gap. A
// broken epoch, or a mark that cannot be read, proves only its segments.
func (s *Store) provenTo(ctx context.Context, e *journal.EpochInfo, c snapshot.Coverage) time.Time {
	if c.Broken != "" || e == nil {
		return c.To
	}
	last, _, err := s.journalFlushed(ctx, e, c)
	if err != nil || last.Before(c.To) {
		return c.To
	}
	return last
}

// extendIdle extends, in cov, the epoch at moment at (the newest whose
// base is at or before it) to what its flush mark proves (provenTo), when
// at is past its last segment and a later epoch follows it (the newest
// epoch is judged by flushedLately). One read, of that epoch's mark.
func (s *Store) extendIdle(ctx context.Context, l *journal.JournalListing, cov []snapshot.Coverage, at time.Time) {
	pick := -1
	for i, c := range cov {
		if c.BaseExists && !c.From.After(at) {
			pick = i
		}
	}
	if pick < 0 || pick == len(cov)-1 || !at.After(cov[pick].To) {
		return
	}
	e, ok := l.Epoch(cov[pick].Epoch)
	if !ok {
		return
	}
	cov[pick].To = s.provenTo(ctx, e, cov[pick])
}
