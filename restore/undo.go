package restore

// This file is the restore that undoes an event the journal caught, as
// events, the daemon's log, the page and the plan's header print it: one
// command for every kind, so that they agree.

import (
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Undo is the restore that puts connector back as it was at before, the
// moment just before an event of kind. An event that took the connector's
// config away (connector-deleted, config-topic-deleted) is undone only by
// creating the connector again: with a Connect URL in the settings the
// run form creates it (--create-connectors, STOPPED, then --resume starts
// it); without one, UndoNote says what to add.
func (s CommandSettings) Undo(kind string, before time.Time, connector string) Commands {
	if kind == snapshot.EventSinkExpired {
		// The connector stayed stopped, which is why Kafka deleted the
		// offsets: restored into the group it left Empty they go again at
		// the next expiry check unless the restore also starts it.
		c := s.At(before, connector)
		return Commands{DryRun: c.DryRun, Run: s.WithStart(c.Run)}
	}
	if !snapshot.ConfigLost(kind) || !s.ConnectURL || s.Cloud || s.Layout {
		return s.At(before, connector)
	}
	args := []string{"--at", FormatMoment(before), "--create-connectors"}
	return s.commands(args, []string{connector})
}

// UndoNote is what to know before running Undo's commands for an event of
// kind, "" when nothing: the undo of a deleted connector creates it only
// through the Connect REST API.
func (s CommandSettings) UndoNote(kind string) string {
	if kind == snapshot.EventSinkExpired && (!s.ConnectURL || s.Cloud || s.Layout) {
		return "the offsets expired because the connector stayed stopped: resume it as soon as the undo is verified, or Kafka deletes them again at its next expiry check (with --connect-url the undo resumes it itself: --start)"
	}
	switch {
	case !snapshot.ConfigLost(kind):
		return ""
	case kind == snapshot.EventConfigTopicDeleted && !s.Cloud && !s.Layout:
		// Seen on Connect 3.8: the workers run them from memory, and
		// --create-connectors creates nothing Connect still reports.
		return "the workers keep running the connectors from memory until they restart, and lose them then: restart the workers first, then run the undo, which creates the connectors again with their configs (add --connect-url URL if none is set)"
	case s.Cloud || s.Layout:
		return "the connector is gone: create it again (its config is in the snapshot: offsetkeeper show), STOPPED, before the undo"
	case !s.ConnectURL:
		return "the connector is gone: add --connect-url URL --create-connectors --resume to the undo and it creates the connector again with its config before the offsets"
	}
	return ""
}

// GoneAdvice is the dry run of the restore of snapshot id, with
// --allow-other-cluster when other: what capture.Gone prints.
func (s CommandSettings) GoneAdvice(id string, other bool) string {
	what := []string{id}
	if other {
		what = append(what, "--allow-other-cluster")
	}
	return s.commands(what, nil).DryRun
}

// Diff is the diff of a state with the live cluster, limited to
// connectors when any are named: of snapshot id, or, when at is set, of
// the state at that moment (diff --at).
func (s CommandSettings) Diff(id string, at time.Time, connectors ...string) string {
	args := []string{"diff", id}
	if !at.IsZero() {
		args = []string{"diff", "--at", FormatMoment(at)}
		if s.FromCluster != "" {
			args = append(args, "--from-cluster", s.FromCluster)
		}
	}
	args = append(args, "--live")
	for _, c := range connectors {
		args = append(args, "--connector", c)
	}
	args = append(args, s.Flags...)
	program := s.Program
	if program == "" {
		program = "offsetkeeper"
	}
	return program + " " + quoteArgs(args)
}
