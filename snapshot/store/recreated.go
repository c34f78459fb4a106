package store

import (
	"context"
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// dropSink reads a stored snapshot's source offsets and keeps none: what
// is wanted of it is its topics, read without holding its offsets.
type dropSink struct{}

func (dropSink) Add(*snapshot.SourceOffset, *snapshot.OffsetDecoder) bool { return true }
func (dropSink) Finish(*snapshot.Snapshot)                                {}

// RecreatedSince compares the offsets topics of snap, just stored as
// info, with those of the newest full snapshot before it of the same
// cluster, and says how each differs as only a topic deleted and created
// again does: another partition count, or a partition whose log ends
// before it ended then (a log never goes back). It returns that earlier
// snapshot and the differences; nil and none when there are none, when
// snap is scoped, or when no earlier snapshot can be read. Without the
// journal, the snapshot of such a topic holds its loss, and restore latest
// restores that.
func RecreatedSince(ctx context.Context, st *Store, snap *snapshot.Snapshot, info snapshot.Info) (*snapshot.Info, []string) {
	if len(snap.Scope) > 0 || info.Kind != snapshot.KindFull {
		return nil, nil
	}
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return nil, nil
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
		return nil, nil
	}
	then, _, err := st.Snapshots().GetWith(ctx, prev.ID, dropSink{})
	if err != nil {
		return nil, nil
	}
	var why []string
	for _, t := range snap.Topics {
		if t.Role != snapshot.RoleOffsets {
			continue
		}
		if w := recreatedTopic(t, then.Topics); w != "" {
			why = append(why, w)
		}
	}
	if len(why) == 0 {
		return nil, nil
	}
	return prev, why
}

// recreatedTopic says how offsets topic t differs from the same topic in
// then as only a topic deleted and created again does, "" when it does
// not (or then did not read it).
func recreatedTopic(t snapshot.Topic, then []snapshot.Topic) string {
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
