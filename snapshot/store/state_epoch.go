package store

import (
	"context"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// StateIn is StateAt within one journal epoch: the state of the epoch's
// cluster at moment at, at most the epoch's last change, replayed from its
// base snapshot. A store shared by the daemons of two clusters (a standby
// after a failover, a failback) holds epochs of both whose spans overlap;
// StateAt takes the newest epoch that covers a moment, whichever cluster's
// it is, so a caller that picked an epoch for its cluster reads it here.
func (h Journal) StateIn(ctx context.Context, epoch string, at time.Time) (*snapshot.Snapshot, *journal.StateInfo, error) {
	s := h.s
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, nil, err
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range journal.CoverageOf(infos, l) {
		if c.Epoch != epoch {
			continue
		}
		e, _ := l.Epoch(epoch)
		if !c.BaseExists || at.Before(c.From) || at.After(c.To) {
			return nil, nil, fmt.Errorf("%w: %s is not within journal epoch %s (%s to %s, base snapshot stored: %t)",
				journal.ErrNotRestorable, snapshot.FmtTime(at), epoch, snapshot.FmtTime(c.From), snapshot.FmtTime(c.To), c.BaseExists)
		}
		return s.replay(ctx, at, e, c)
	}
	return nil, nil, fmt.Errorf("%w: no journal epoch %s in the store", journal.ErrNotRestorable, epoch)
}
