package standby

import (
	"context"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// LatestState is the last state the store holds of its cluster: the
// newest journal epoch's state at its last flush (the journal's newest
// change), or, without a journal, the newest full snapshot. It reads the
// store only, so it works when the primary cluster is gone. at is the
// moment of the state: its age is the recovery point.
func LatestState(ctx context.Context, st *store.Store) (snap *snapshot.Snapshot, at time.Time, err error) {
	cov, err := st.JournalCoverage(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the journal's coverage: %w", err)
	}
	for i := len(cov) - 1; i >= 0; i-- {
		c := cov[i]
		if !c.BaseExists || c.Broken != "" || c.To.IsZero() {
			continue
		}
		snap, _, err := st.StateAt(ctx, c.To)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("read the state at %s (journal epoch %s): %w", snapshot.FmtTime(c.To), c.Epoch, err)
		}
		return snap, c.To, nil
	}
	snap, info, err := st.Get(ctx, "latest")
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the newest snapshot (no journal): %w", err)
	}
	return snap, info.CreatedAt, nil
}
