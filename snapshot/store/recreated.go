package store

import (
	"context"
	"fmt"
	"strings"

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
	prev, why, _ := ChangedSince(ctx, st, snap, info)
	if len(why) == 0 {
		return nil, nil
	}
	return prev, why
}

// ChangedSince is RecreatedSince, and also names the offsets topics whose
// partitions were added since that earlier snapshot (added): more
// partitions, and every partition it had still ends at or past where it
// ended then. Nothing was lost from such a topic, and its earlier snapshot
// is no better to restore; but Connect's producer now writes each key to
// its murmur2 partition of the new count, while the key's older copy stays
// on its partition of the old one. prev is the earlier snapshot when either
// list holds something.
func ChangedSince(ctx context.Context, st *Store, snap *snapshot.Snapshot, info snapshot.Info) (prev *snapshot.Info, why, added []string) {
	if len(snap.Scope) > 0 || info.Kind != snapshot.KindFull {
		return nil, nil, nil
	}
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return nil, nil, nil
	}
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
		return nil, nil, nil
	}
	then, _, err := st.Snapshots().GetWith(ctx, prev.ID, dropSink{})
	if err != nil {
		return nil, nil, nil
	}
	for _, t := range snap.Topics {
		if t.Role != snapshot.RoleOffsets {
			continue
		}
		if w := addedPartitions(t, then.Topics); w != "" {
			added = append(added, w)
		} else if w := recreatedTopic(t, then.Topics); w != "" {
			why = append(why, w)
		}
	}
	if len(why) == 0 && len(added) == 0 {
		return nil, nil, nil
	}
	return prev, why, added
}

// addedPartitions says how offsets topic t has more partitions than in
// then with every partition it had there still ending at or past where it
// ended ("" otherwise): partitions added, nothing lost.
func addedPartitions(t snapshot.Topic, then []snapshot.Topic) string {
	for _, old := range then {
		if old.Name != t.Name || old.Role != snapshot.RoleOffsets || len(t.Partitions) <= len(old.Partitions) {
			continue
		}
		for _, op := range old.Partitions {
			kept := false
			for _, p := range t.Partitions {
				if p.Partition == op.Partition && p.EndOffset >= op.EndOffset {
					kept = true
				}
			}
			if !kept {
				return ""
			}
		}
		return fmt.Sprintf("offsets topic %q has %d partitions, it had %d", t.Name, len(t.Partitions), len(old.Partitions))
	}
	return ""
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

// AddedAdvice says what partitions added to an offsets topic (added, from
// ChangedSince, since snapshot prevID) mean for Connect and what to do.
func AddedAdvice(added []string, prevID string) string {
	return fmt.Sprintf("%s: partitions were added, and no record was lost (every partition it had ends at or past where it "+
		"ended in snapshot %s, which is no better to restore). Connect's producer writes each key to its murmur2 partition of "+
		"the new count once it sees it, while the key's older copy stays where it was: a worker that starts reads both, and "+
		"which it keeps depends on read order, so a connector can start from an older offset. Kafka cannot remove partitions. "+
		"From now on each snapshot names the keys found in two partitions, and the plan of a restore of the connector prints, "+
		"for each, the kcat tombstone that removes the copy off its murmur2 partition: run it once the connector has "+
		"committed on its new partition", strings.Join(added, "; "), prevID)
}
