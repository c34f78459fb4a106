package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// dropSink reads a stored snapshot's source offsets and keeps none: what
// is wanted of it is its topics, read without holding its offsets.
type dropSink struct{}

func (dropSink) Add(*snapshot.SourceOffset, *snapshot.OffsetDecoder) bool { return true }
func (dropSink) Finish(*snapshot.Snapshot)                                {}

// warnRecreated warns, after a snapshot of an offsets topic that was
// deleted and created again since the newest full snapshot before it of
// the same cluster (fewer or more partitions, or a partition whose log
// ends before it ended then: a log never goes back), that this snapshot
// holds what the new topic holds, and prints the dry run of the restore of
// that earlier snapshot. Without it the snapshot of the loss was stored in
// silence, and "restore latest" restored the loss. It says nothing when
// no such snapshot can be read.
func (c *snapshotCmd) warnRecreated(ctx context.Context, sto *store.Store, snap *snapshot.Snapshot, info snapshot.Info) {
	if len(c.connectors) > 0 {
		return // a scoped capture reads only its connectors' topics
	}
	infos, err := sto.Snapshots().List(ctx)
	if err != nil {
		return
	}
	var prev *snapshot.Info
	for i := range infos {
		in := &infos[i]
		if in.ID == info.ID || in.Kind != snapshot.KindFull || in.ClusterID != snap.ClusterID || !in.CreatedAt.Before(info.CreatedAt) {
			continue
		}
		if prev == nil || in.CreatedAt.After(prev.CreatedAt) {
			prev = in
		}
	}
	if prev == nil {
		return
	}
	then, _, err := sto.Snapshots().GetWith(ctx, prev.ID, dropSink{})
	if err != nil {
		return
	}
	var why []string
	for _, t := range snap.Topics {
		if t.Role != snapshot.RoleOffsets {
			continue
		}
		if w := recreatedSince(t, then.Topics); w != "" {
			why = append(why, w)
		}
	}
	if len(why) == 0 {
		return
	}
	dry := c.g.commandSettings().Snapshot(prev.ID).DryRun
	msg := fmt.Sprintf("offsetkeeper snapshot: warning: since snapshot %s (taken %s), %s: deleted and created again? This snapshot holds what the topic holds now (%s; %s held %d), and \"restore latest\" would restore that. To bring back the offsets from before, restore %s: %s",
		prev.ID, prev.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), strings.Join(why, "; "), plural(info.SourceKeys, "source key", "source keys"), prev.ID, prev.SourceKeys, prev.ID, dry)
	fmt.Fprintln(c.stderr, english.Advice(msg, lineWidth, []string{dry}))
}

// recreatedSince says how offsets topic t differs from the same topic in
// then as only a topic deleted and created again does, "" when it does
// not (or then did not read it).
func recreatedSince(t snapshot.Topic, then []snapshot.Topic) string {
	for _, old := range then {
		if old.Name != t.Name || old.Role != snapshot.RoleOffsets {
			continue
		}
		if len(old.Partitions) != len(t.Partitions) {
			return fmt.Sprintf("offsets topic %q has %d partitions, it had %d", t.Name, len(t.Partitions), len(old.Partitions))
		}
		for _, p := range t.Partitions {
			for _, op := range old.Partitions {
				if op.Partition == p.Partition && p.EndOffset < op.EndOffset {
					return fmt.Sprintf("offsets topic %q partition %d ends at offset %d, before where it ended (%d)", t.Name, p.Partition, p.EndOffset, op.EndOffset)
				}
			}
		}
	}
	return ""
}
