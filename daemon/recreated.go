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
	prev, why := store.RecreatedSince(ctx, d.Store, snap, info)
	if prev == nil {
		return
	}
	d.log().Warn("snapshot of an offsets topic deleted and created again? it holds what the topic holds now; restore the earlier snapshot (dry run first), not latest",
		"snapshot_id", info.ID, "source_keys", info.SourceKeys, "earlier_snapshot_id", prev.ID, "earlier_source_keys", prev.SourceKeys,
		"why", strings.Join(why, "; "))
}
