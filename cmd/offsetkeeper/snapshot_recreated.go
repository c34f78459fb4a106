package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// warnRecreated warns, after a snapshot of an offsets topic that was
// deleted and created again since the newest full snapshot before it of
// the same cluster (store.RecreatedSince), that this snapshot holds what
// the new topic holds, and prints the dry run of the restore of that
// earlier snapshot. Without it the snapshot of the loss was stored in
// silence, and "restore latest" restored the loss.
func (c *snapshotCmd) warnRecreated(ctx context.Context, sto *store.Store, snap *snapshot.Snapshot, info snapshot.Info) {
	prev, why, added := store.ChangedSince(ctx, sto, snap, info)
	if len(added) > 0 {
		warn(c.stderr, "snapshot", store.AddedAdvice(added, prev.ID))
	}
	if len(why) == 0 {
		return
	}
	dry := c.g.commandSettings().Snapshot(prev.ID).DryRun
	msg := fmt.Sprintf("offsetkeeper snapshot: warning: since snapshot %s (taken %s), %s: deleted and created again? This snapshot holds what the topic holds now (%s; %s held %d), and \"restore latest\" would restore that. To bring back the offsets from before, restore %s: %s",
		prev.ID, prev.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), strings.Join(why, "; "), plural(info.SourceKeys, "source key", "source keys"), prev.ID, prev.SourceKeys, prev.ID, dry)
	fmt.Fprintln(c.stderr, english.Advice(msg, lineWidth, []string{dry}))
}
