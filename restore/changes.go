package restore

import (
	"fmt"
	"iter"
)

// This file holds a SourcePlan's changes compactly. A plan compares every
// key of the snapshot and of the live state, so a restore of 800,000 keys
// has 800,000 changes: as SourceChange structs (136 bytes, three slices
// and two strings) they were the largest part of a restore's heap after
// the snapshot itself. A srcChange is 16 bytes without pointers and names
// the snapshot's and the live capture's source offsets by position; the
// SourceChange is made when it is asked for.

// srcChange is one key compared: positions in SourcePlan.snap and .live
// (-1 for none), the partition written to, the topic's position in
// SourcePlan.Topics and the action.
type srcChange struct {
	snap, live int32
	part       int32
	topic      uint16
	action     uint8
	stray      bool
}

// Actions of a srcChange, by number.
const (
	actUnchanged uint8 = iota
	actChanged
	actAdded
	actRemoved
)

// actions are the Actions of the srcChange action numbers.
var actions = [...]Action{actUnchanged: Unchanged, actChanged: Changed, actAdded: Added, actRemoved: Removed}

// srcWrites reports whether an action number writes something.
func srcWrites(a uint8) bool { return a != actUnchanged }

// Len is the number of keys compared, unchanged ones included.
func (sp *SourcePlan) Len() int { return len(sp.changes) }

// Change returns key i of those compared (0 <= i < Len()), in the order of
// Changes. Its Key, Old and New share the bytes of the snapshot and of the
// live capture: do not modify them.
func (sp *SourcePlan) Change(i int) SourceChange { return sp.change(&sp.changes[i]) }

// Changes yields every key compared, unchanged ones included, sorted by
// topic, partition and key, with its position (see Change).
func (sp *SourcePlan) Changes() iter.Seq2[int, SourceChange] {
	return func(yield func(int, SourceChange) bool) {
		for i := range sp.changes {
			if !yield(i, sp.change(&sp.changes[i])) {
				return
			}
		}
	}
}

// Writes yields the keys the plan writes (changed, added and removed), in
// the order of Changes, with their positions.
func (sp *SourcePlan) Writes() iter.Seq2[int, SourceChange] {
	return func(yield func(int, SourceChange) bool) {
		for i := range sp.changes {
			if c := &sp.changes[i]; srcWrites(c.action) && !yield(i, sp.change(c)) {
				return
			}
		}
	}
}

// writes reports whether the plan writes any key.
func (sp *SourcePlan) writes() bool {
	for i := range sp.changes {
		if srcWrites(sp.changes[i].action) {
			return true
		}
	}
	return false
}

// writtenTopics are the topics the plan writes keys to, in order.
func (sp *SourcePlan) writtenTopics() []string {
	var out []string
	last := -1
	for i := range sp.changes {
		if c := &sp.changes[i]; srcWrites(c.action) && int(c.topic) != last {
			last = int(c.topic)
			if t := sp.Topics[c.topic]; len(out) == 0 || out[len(out)-1] != t {
				out = append(out, t)
			}
		}
	}
	return out
}

// change makes the SourceChange of c.
func (sp *SourcePlan) change(c *srcChange) SourceChange {
	ch := SourceChange{Action: actions[c.action], Topic: sp.Topics[c.topic], Partition: c.part, Stray: c.stray}
	if c.snap >= 0 {
		ch.Key, ch.New = sp.snap.Key(c.snap), sp.snap.Value(c.snap)
		if t, part := sp.snap.Topic(c.snap), sp.snap.Partition(c.snap); t != ch.Topic || part != c.part {
			ch.From = sp.from(t, part)
		}
	}
	if c.live >= 0 {
		o := sp.live.At(c.live)
		ch.Old = o.Value
		if c.snap < 0 {
			ch.Key = o.Key
		}
	}
	return ch
}

// from is the From of a key the snapshot held in topic/part.
func (sp *SourcePlan) from(topic string, part int32) string {
	if f, ok := sp.froms[topicPart{topic, part}]; ok {
		return f
	}
	return fmt.Sprintf("%s/%d", topic, part)
}

// key returns the key bytes of c.
func (sp *SourcePlan) key(c *srcChange) []byte {
	if c.snap >= 0 {
		return sp.snap.Key(c.snap)
	}
	return sp.live.Key(c.live)
}

// newValue returns what c writes: the snapshot's value, nil (a tombstone)
// for a removal.
func (sp *SourcePlan) newValue(c *srcChange) []byte {
	if c.snap >= 0 {
		return sp.snap.Value(c.snap)
	}
	return nil
}
