package main

// This file is what events prints for the expiry guard's events (issue
// 37): the warning ahead (sink-expiring) and a group gone at its expiry
// (sink-expired), each with the restore that also resumes the connector.

import (
	"fmt"
	"io"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// sinkExpiryCommands are the commands of the expiry guard's events: for
// sink-expiring the restore of the moment it was seen (its offsets still
// there), for sink-expired of the moment before the group vanished; both
// resume the connector (--start) when a Connect URL is known, since a
// restore alone would expire again. ok is false for other events.
func sinkExpiryCommands(s restore.CommandSettings, e snapshot.Event) (restore.Commands, bool) {
	var at = e.Before
	switch e.Kind {
	case snapshot.EventSinkExpiring:
		at = e.Time
	case snapshot.EventSinkExpired:
	default:
		return restore.Commands{}, false
	}
	cmds := s.At(at, e.Connector)
	return restore.Commands{DryRun: cmds.DryRun, Run: s.WithStart(cmds.Run)}, true
}

// printSinkExpiring prints the rest of a sink-expiring event's text and
// reports true; false for other events.
func printSinkExpiring(w io.Writer, e eventJSON) bool {
	if e.Kind != snapshot.EventSinkExpiring {
		return false
	}
	group := e.Group
	if group == "" {
		group = e.Connector
	}
	fmt.Fprintf(w, "  offsets of %s expire at %s unless the connector is resumed; after that:\n", group, restore.FormatMoment(e.Before))
	fmt.Fprintf(w, "  check: %s\n", e.UndoDryRun)
	fmt.Fprintf(w, "  undo:  %s\n", e.Undo)
	return true
}
