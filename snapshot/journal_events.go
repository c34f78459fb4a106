package snapshot

// This file is the resets the journal catches as they happen: the kinds of
// event, the rule that tells a source offset rewritten backwards, and the
// listing of the events a journal holds.

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Event kinds, the kind label of offsetkeeper_reset_events_total.
const (
	// EventSourceTombstoned: a connector's source offset keys were
	// tombstoned (a KIP-875 DELETE /offsets, or a tool writing nulls).
	EventSourceTombstoned = "source-tombstoned"
	// EventSourceRewound: a connector's source offsets were rewritten with
	// a numeric position moving backwards.
	EventSourceRewound = "source-rewound"
	// EventSinkDeleted: a sink group was deleted, or offsets of some of
	// its partitions were.
	EventSinkDeleted = "sink-deleted"
	// EventSinkRewound: sink group offsets moved backwards.
	EventSinkRewound = "sink-rewound"
	// EventConnectorDeleted: a connector's config was deleted.
	EventConnectorDeleted = "connector-deleted"
)

// EventKinds are every kind of event, in a fixed order.
var EventKinds = []string{EventSourceTombstoned, EventSourceRewound, EventSinkDeleted, EventSinkRewound, EventConnectorDeleted}

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
	for _, f := range PositionFields {
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

// Event is one reset the journal recorded.
type Event struct {
	Time      time.Time `json:"time"`
	Connector string    `json:"connector"`
	Group     string    `json:"group,omitempty"`
	Kind      string    `json:"kind"`
	Count     int       `json:"count"`
	// Before is the moment just before the reset: restore --at Before
	// puts things back as they were.
	Before  time.Time `json:"before"`
	Epoch   string    `json:"epoch"`
	Segment uint64    `json:"segment"`
	// UndoGone, when set, says why restore --at Before is no longer
	// possible: retention removed what it reads (see UndoGone).
	UndoGone string `json:"undo_gone,omitempty"`
}

// Events returns the events the journal holds at or after since, oldest
// first. It reads every segment whose last time is at or after since.
func (s *Store) Events(ctx context.Context, since time.Time) ([]Event, error) {
	l, err := s.ListJournal(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	cov := coverageOf(infos, l)
	now := time.Now()
	var out []Event
	for _, e := range l.Epochs {
		chain, _ := e.Chain()
		for _, si := range chain {
			if si.LastTime.Before(since) {
				continue
			}
			seg, err := s.ReadSegment(ctx, si)
			if err != nil {
				return nil, err
			}
			for _, en := range seg.Entries {
				if en.Kind != EntryEvent || fromMs(en.Time).Before(since) {
					continue
				}
				ev := Event{
					Time: fromMs(en.Time), Connector: en.Connector, Group: en.Group, Kind: en.Reason, Count: int(en.Count),
					Before: fromMs(en.Before), Epoch: e.ID, Segment: seg.LastSeq,
				}
				ev.Before = UndoMoment(e.ID, ev.Before, ev.Time)
				out = append(out, ev)
			}
		}
	}
	// An epoch that starts from a snapshot overlaps the one before: the
	// same reset may be seen by both.
	type key struct {
		conn, group, kind string
		before            time.Time
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Time.Compare(b.Time) })
	var dedup []Event
	seen := map[key]bool{}
	for _, ev := range out {
		k := key{ev.Connector, ev.Group, ev.Kind, ev.Before}
		if !seen[k] {
			seen[k] = true
			ev.UndoGone = UndoGone(ev.Before, infos, cov, now)
			dedup = append(dedup, ev)
		}
	}
	return dedup, nil
}

// UndoMoment is the moment a restore --at goes back to for an event of
// epoch recorded with before and at: before, or, when before is earlier
// than the epoch's base snapshot, the first millisecond after the
// snapshot. The first sink observation of an epoch is its base snapshot's,
// to the millisecond, so a reset seen at the next one has its before a
// little before the snapshot, before anything restorable; the millisecond
// after the snapshot holds the same state and is restorable.
func UndoMoment(epoch string, before, at time.Time) time.Time {
	base, err := ParseID(epoch)
	if err != nil {
		return before
	}
	floor := base.Add(time.Microsecond).Add(time.Millisecond - 1).Truncate(time.Millisecond)
	if before.Before(floor) && floor.Before(at) {
		return floor
	}
	return before
}
