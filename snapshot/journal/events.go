package journal

// This file is the resets the journal catches as they happen: the kinds of
// event, the rule that tells a source offset rewritten backwards, and the
// listing of the events a journal holds.

import (
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// EventKinds are every kind of event, in a fixed order.
var EventKinds = []string{snapshot.EventSourceTombstoned, snapshot.EventSourceRewound, snapshot.EventSinkDeleted, snapshot.EventSinkRewound, snapshot.EventConnectorDeleted,
	snapshot.EventOffsetsTopicDeleted, snapshot.EventConfigTopicDeleted, snapshot.EventSinkExpired}

// Rewound reports whether the source offset value now is a position
// behind was, by snapshot.Movement: the rule the page's plots and diffs
// use too.
func Rewound(was, now []byte) bool {
	_, delta, ok := snapshot.Movement(was, now)
	return ok && delta < 0
}

// UndoMoment is the moment a restore --at goes back to for an event of
// epoch recorded with before and at: before, or, when before is earlier
// than the epoch's base snapshot, the first millisecond after the
// snapshot. The first sink observation of an epoch is its base snapshot's,
// to the millisecond, so a reset seen at the next one has its before a
// little before the snapshot, before anything restorable; the millisecond
// after the snapshot holds the same state and is restorable.
func UndoMoment(epoch string, before, at time.Time) time.Time {
	base, err := snapshot.ParseID(epoch)
	if err != nil {
		return before
	}
	floor := base.Add(time.Microsecond).Add(time.Millisecond - 1).Truncate(time.Millisecond)
	if before.Before(floor) && floor.Before(at) {
		return floor
	}
	return before
}
