package journal

// This file is the resets the journal catches as they happen: the kinds of
// event, the rule that tells a source offset rewritten backwards, and the
// listing of the events a journal holds.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// EventKinds are every kind of event, in a fixed order.
var EventKinds = []string{snapshot.EventSourceTombstoned, snapshot.EventSourceRewound, snapshot.EventSinkDeleted, snapshot.EventSinkRewound, snapshot.EventConnectorDeleted}

// Rewound reports whether the source offset value now is a position
// behind was: both JSON objects, and the first known position field (see
// PositionFields) both hold decreased; without a known field, any
// top-level number that both hold decreased.
func Rewound(was, now []byte) bool {
	a, ok1 := numericFields(was)
	b, ok2 := numericFields(now)
	if !ok1 || !ok2 {
		return false
	}
	for _, f := range snapshot.PositionFields {
		x, okx := a[f]
		y, oky := b[f]
		if okx && oky {
			return y < x
		}
	}
	for f, x := range a {
		if y, ok := b[f]; ok && y < x {
			return true
		}
	}
	return false
}

func numericFields(v []byte) (map[string]float64, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, false
	}
	out := map[string]float64{}
	for k, x := range m {
		if n, ok := x.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(n), 64); err == nil {
				out[k] = f
			}
		}
	}
	return out, true
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
