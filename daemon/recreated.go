package daemon

import (
	"context"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// warnRecreated logs a warning when the snapshot just stored is of an
// offsets topic deleted and created again since the newest full snapshot
// before it (store.RecreatedSince): the journal names such a loss only
// when it ran across it, and without this the scheduled snapshot of the
// loss was stored in silence, to be restored by "restore latest". It names
// the earlier snapshot to restore (a dry run of it first).
func (d *Daemon) warnRecreated(ctx context.Context, snap *snapshot.Snapshot, info snapshot.Info) {
	prev, why, added := store.ChangedSince(ctx, d.Store, snap, info)
	if len(added) > 0 {
		d.log().Warn("offsets topic partitions added", "snapshot_id", info.ID, "earlier_snapshot_id", prev.ID,
			"why", store.AddedAdvice(added, prev.ID))
	}
	if len(why) == 0 {
		return
	}
	d.log().Warn("snapshot of an offsets topic deleted and created again? it holds what the topic holds now; restore the earlier snapshot (dry run first), not latest",
		"snapshot_id", info.ID, "source_keys", info.SourceKeys, "earlier_snapshot_id", prev.ID, "earlier_source_keys", prev.SourceKeys,
		"why", strings.Join(why, "; "))
}
