package standby

import (
	"context"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// LatestState is the last state the store holds of a cluster keep accepts
// (nil: any): the newest journal epoch's state at its last flush (the
// journal's newest change), or, without a journal, the newest full
// snapshot. It reads the store only, so it works when the primary cluster
// is gone. at is the moment of the state: its age is the recovery point.
// A store shared by the daemons of two clusters (after a failover) holds
// both: keep picks one. None kept is snapshot.ErrNotFound.
func LatestState(ctx context.Context, st *store.Store, keep func(cluster string) bool) (snap *snapshot.Snapshot, at time.Time, err error) {
	if keep == nil {
		keep = func(string) bool { return true }
	}
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("list the store: %w", err)
	}
	cluster := make(map[string]string, len(infos))
	for _, i := range infos {
		cluster[i.ID] = i.ClusterID
	}
	cov, err := st.Journal().Coverage(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the journal's coverage: %w", err)
	}
	for i := len(cov) - 1; i >= 0; i-- {
		c := cov[i]
		if !c.BaseExists || c.Broken != "" || c.To.IsZero() || !keep(cluster[c.Epoch]) {
			continue
		}
		// This epoch's state: another cluster's epoch may cover c.To too.
		snap, _, err := st.Journal().StateIn(ctx, c.Epoch, c.To)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("read the state at %s (journal epoch %s): %w", snapshot.FmtTime(c.To), c.Epoch, err)
		}
		return snap, c.To, nil
	}
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].EffectiveKind() == snapshot.KindFull && keep(infos[i].ClusterID) {
			snap, info, err := st.Snapshots().GetWith(ctx, infos[i].ID, nil)
			if err != nil {
				return nil, time.Time{}, fmt.Errorf("read the newest snapshot (no journal): %w", err)
			}
			return snap, info.CreatedAt, nil
		}
	}
	return nil, time.Time{}, fmt.Errorf("read the last state: %w: no snapshot of the cluster in the store", snapshot.ErrNotFound)
}
