package snapshot

// This file tells offsetkeeper's own restores from resets. A source
// offset a restore writes carries RestoreHeader, so the journal never
// counts it as a reset. Sink group offsets carry no header: a sink event
// is the tool's own when a restore of its connector ran just before it was
// seen (OwnRestore). Either way events lists the restore once, from its
// undo snapshot, as "restored" (Restored).

import (
	"slices"
	"time"
)

// OwnRestoreSlack is how long before the previous observation of a sink
// group a restore's undo snapshot may have been taken for the group's
// move to count as that restore's: a restore captures the live state,
// stores it, then commits, and the journal sees the commit at its next
// read.
const OwnRestoreSlack = 2 * time.Minute

// OwnRestore returns the undo snapshot ID of the restore of connector that
// a sink event of kind (seen at at, the group read before at before) is
// the writes of, "" when there is none or kind is no sink kind.
func OwnRestore(infos []Info, kind, connector string, before, at time.Time) string {
	if kind != EventSinkRewound && kind != EventSinkDeleted {
		return ""
	}
	id := ""
	for _, i := range infos {
		if i.EffectiveKind() != KindUndo || !slices.Contains(i.Scope, connector) {
			continue
		}
		if !i.CreatedAt.After(at) && !i.CreatedAt.Before(before.Add(-OwnRestoreSlack)) {
			id = i.ID
		}
	}
	return id
}

// Restored are the restores of offsetkeeper since since, one event per
// connector of each undo snapshot's scope, kind EventRestored: its Time
// and Before are the undo snapshot's, RestoreID its ID.
func Restored(infos []Info, since time.Time) []Event {
	var out []Event
	for _, i := range infos {
		if i.EffectiveKind() != KindUndo || i.CreatedAt.Before(since) {
			continue
		}
		for _, c := range i.Scope {
			out = append(out, Event{Time: i.CreatedAt, Connector: c, Kind: EventRestored, Before: i.CreatedAt, RestoreID: i.ID})
		}
	}
	return out
}
