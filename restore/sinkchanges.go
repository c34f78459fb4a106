package restore

import (
	"cmp"
	"iter"
	"slices"
)

// This file holds a SinkPlan's changes compactly, as changes.go does a
// SourcePlan's. A restore of thousands of sink groups compares every
// committed offset of each: as SinkChange structs (96 bytes, five strings)
// 100,000 offsets were a larger part of a drill's heap than the source
// changes. A sinkChange has no pointers: its strings (topic, metadata,
// reason) are positions in its SinkPlan's names, which a group's
// partitions nearly all share. The SinkChange is made when it is asked
// for.

// sinkChange is one group offset compared: the live offset and the
// snapshot's, the partition, the leader epoch committed with new, the
// positions of its topic, metadata and reason in SinkPlan.names, and its
// action (a position in sinkActions).
type sinkChange struct {
	old, new            int64
	part, epoch         int32
	topic, meta, reason uint32
	action              uint8
}

// sinkActions are the Actions of the sinkChange action numbers.
var sinkActions = [...]Action{Unchanged, Changed, Added, Removed, Skipped}

// sinkAction is the number of a.
func sinkAction(a Action) uint8 {
	i := slices.Index(sinkActions[:], a)
	if i < 0 {
		panic("restore: sink change with action " + string(a))
	}
	return uint8(i)
}

// Len is the number of group offsets compared, unchanged ones included.
func (sp *SinkPlan) Len() int { return len(sp.changes) }

// Change returns offset i of those compared (0 <= i < Len()), in the order
// of Changes.
func (sp *SinkPlan) Change(i int) SinkChange { return sp.change(&sp.changes[i]) }

// Changes yields every group offset compared, unchanged ones included,
// sorted by topic and partition, with its position (see Change).
func (sp *SinkPlan) Changes() iter.Seq2[int, SinkChange] {
	return func(yield func(int, SinkChange) bool) {
		for i := range sp.changes {
			if !yield(i, sp.change(&sp.changes[i])) {
				return
			}
		}
	}
}

// has reports whether any offset compared has action a.
func (sp *SinkPlan) has(a Action) bool {
	n := sinkAction(a)
	return slices.ContainsFunc(sp.changes, func(c sinkChange) bool { return c.action == n })
}

func (sp *SinkPlan) change(c *sinkChange) SinkChange {
	return SinkChange{Action: sinkActions[c.action], Topic: sp.names[c.topic], Partition: c.part, Old: c.old, New: c.new,
		LeaderEpoch: c.epoch, Metadata: sp.names[c.meta], Reason: sp.names[c.reason]}
}

// add appends ch to the changes.
func (sp *SinkPlan) add(ch SinkChange) {
	sp.changes = append(sp.changes, sinkChange{old: ch.Old, new: ch.New, part: ch.Partition, epoch: ch.LeaderEpoch,
		topic: sp.name(ch.Topic), meta: sp.name(ch.Metadata), reason: sp.name(ch.Reason), action: sinkAction(ch.Action)})
}

// skip marks change i Skipped, for reason.
func (sp *SinkPlan) skip(i int, reason string) {
	c := &sp.changes[i]
	c.action, c.reason = sinkAction(Skipped), sp.name(reason)
}

// name is the position of s in names, added when missing. The names of a
// group are mostly few (its topics, its metadata, mostly empty, and the
// reasons of skipped offsets), and looked up from the newest; past
// fewNames they are indexed.
func (sp *SinkPlan) name(s string) uint32 {
	if len(sp.names) == 0 {
		sp.names = append(sp.names, "")
	}
	if sp.index != nil {
		if i, ok := sp.index[s]; ok {
			return i
		}
	} else {
		for i := len(sp.names) - 1; i >= 0; i-- {
			if sp.names[i] == s {
				return uint32(i)
			}
		}
	}
	sp.names = append(sp.names, s)
	n := uint32(len(sp.names) - 1)
	switch {
	case sp.index != nil:
		sp.index[s] = n
	case len(sp.names) > fewNames:
		sp.index = make(map[string]uint32, 2*len(sp.names))
		for i, name := range sp.names {
			sp.index[name] = uint32(i)
		}
	}
	return n
}

// fewNames is how many names a SinkPlan looks through before it indexes
// them.
const fewNames = 32

// sortChanges sorts the changes by topic and partition.
func (sp *SinkPlan) sortChanges() {
	slices.SortFunc(sp.changes, func(a, b sinkChange) int {
		if a.topic != b.topic {
			return cmp.Compare(sp.names[a.topic], sp.names[b.topic])
		}
		return cmp.Compare(a.part, b.part)
	})
}
