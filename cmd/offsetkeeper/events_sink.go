package main

// This file is what events prints for the expiry guard's events (issue
// 37): the warning ahead (sink-expiring) and a group gone at its expiry
// (sink-expired), each with the restore that also resumes the connector.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// sinkExpiryCommands are the commands of the expiry guard's events: for
// sink-expiring the restore of the moment it was seen (its offsets still
// there), for sink-expired of the moment before the group vanished; both
// resume the connector (--start) when a Connect URL is known, since a
// restore alone would expire again. ok is false for other events.
//
// For a group whose connector has no config (o.orphan, from orphanOf)
// they are restore.Orphaned's instead, with its note: there is no
// connector to resume.
func sinkExpiryCommands(s restore.CommandSettings, e snapshot.Event, o orphan) (restore.Orphan, bool) {
	var at = e.Before
	switch e.Kind {
	case snapshot.EventSinkExpiring, snapshot.EventSinkOrphanExpiring:
		at = e.Time
	case snapshot.EventSinkExpired:
	default:
		return restore.Orphan{}, false
	}
	if o.orphan {
		return s.Orphaned(cmp.Or(e.Group, e.Connector), e.Connector, o.gone, at), true
	}
	cmds := s.At(at, e.Connector)
	return restore.Orphan{Commands: restore.Commands{DryRun: cmds.DryRun, Run: s.WithStart(cmds.Run)}}, true
}

// orphan says whether an expiry guard's event is of a group whose
// connector has no config, and the event that took it when the journal
// saw it (nil otherwise).
type orphan struct {
	orphan bool
	gone   *restore.ConfigGone
}

// orphanOf tells whether e, an expiry guard's event, is of a group whose
// connector has no config, from all (the journal's events, oldest first):
// a sink-orphan-expiring is; a sink-expired is when the daemon warned of
// its group so before it, or when a config-lost event of its connector
// came before it and no restore of the tool's own since.
func orphanOf(all []snapshot.Event, e snapshot.Event) orphan {
	gone := restore.LastConfigGone(all, e.Connector, e.Time)
	switch e.Kind {
	case snapshot.EventSinkOrphanExpiring:
		return orphan{true, gone}
	case snapshot.EventSinkExpired:
	default:
		return orphan{}
	}
	for _, w := range all {
		if w.Kind == snapshot.EventSinkOrphanExpiring && w.Group == e.Group && !w.Time.After(e.Time) {
			return orphan{true, gone}
		}
	}
	if gone == nil {
		return orphan{}
	}
	for _, r := range all {
		// Its own restore since (--create-connectors) gave it back.
		if r.Connector == e.Connector && r.Kind == snapshot.EventRestored && r.Time.After(gone.Before) && !r.Time.After(e.Time) {
			return orphan{}
		}
	}
	return orphan{true, gone}
}

// printSinkExpiring prints the rest of a sink-expiring event's text and
// reports true; false for other events.
func printSinkExpiring(w io.Writer, e eventJSON) bool {
	if e.Kind != snapshot.EventSinkExpiring && e.Kind != snapshot.EventSinkOrphanExpiring {
		return false
	}
	group := e.Group
	if group == "" {
		group = e.Connector
	}
	if e.Note != "" { // orphaned: no connector to resume
		fmt.Fprintf(w, "  offsets of %s expire at %s\n", group, restore.FormatMoment(e.Before))
		printOrphanNote(w, e)
		fmt.Fprintf(w, "  check: %s\n", e.UndoDryRun)
		fmt.Fprintf(w, "  undo:  %s\n", e.Undo)
		return true
	}
	fmt.Fprintf(w, "  offsets of %s expire at %s unless the connector is resumed; after that:\n", group, restore.FormatMoment(e.Before))
	fmt.Fprintf(w, "  check: %s\n", e.UndoDryRun)
	fmt.Fprintf(w, "  undo:  %s\n", e.Undo)
	return true
}

// allEvents is every event of the journal, for orphanOf, when evs (those
// since the listing's start) hold an orphan's or an expiry event: the
// events that tell it may be older; evs otherwise.
func (c *eventsCmd) allEvents(ctx context.Context, st *store.Store, evs []snapshot.Event) ([]snapshot.Event, error) {
	if !slices.ContainsFunc(evs, func(e snapshot.Event) bool {
		return e.Kind == snapshot.EventSinkOrphanExpiring || e.Kind == snapshot.EventSinkExpired
	}) {
		return evs, nil
	}
	return st.Journal().Events(ctx, time.Time{})
}

// printOrphanNote prints the note of an orphaned group's event, wrapped,
// and the command that deletes the group on a line of its own.
func printOrphanNote(w io.Writer, e eventJSON) {
	fmt.Fprintf(w, "  note:  %s\n", english.Wrap(e.Note, 111, "         "))
	fmt.Fprintln(w, english.Continue(e.Delete, lineWidth, "  delete: ", "      "))
}
