package restore

// This file is the expiry guard's advice for an orphaned sink group: one
// whose connector has no config (deleted, or its config topic lost).
// Nothing will ever commit to it again, so Kafka deletes its offsets
// offsets.retention.minutes after it became Empty; resuming the connector,
// the advice for a stopped sink, is not possible: it does not exist.

import (
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// ConfigGone is when and how a connector's config went: the kind of the
// event that took it (snapshot.ConfigLost) and the moment just before it,
// whose state still holds the config.
type ConfigGone struct {
	Kind   string
	Before time.Time
}

// Orphan is the advice for the offsets of a sink group whose connector
// has no config (Orphaned).
type Orphan struct {
	// Note says what the group is and what to do, on purpose or not.
	Note string
	// Delete is the command that deletes the group, for a connector
	// deleted on purpose (Kafka's own tool: the tool deletes no group).
	Delete string
	// Commands are the undo: see Orphaned.
	Commands Commands
}

// Orphaned is the advice for the offsets of sink group, whose connector
// has no config, that expire (or expired) at a moment whose state still
// holds them (at). With gone known, its commands are the undo of the
// config's loss: it creates the connector again with its config and its
// offsets as they were just before (--create-connectors, with a Connect
// URL), so that its tasks join the group and nothing expires. Without it,
// they restore the offsets of at alone, and the note says where the config
// is. It never tells to resume the connector: there is none.
func (s CommandSettings) Orphaned(group, connector string, gone *ConfigGone, at time.Time) Orphan {
	o := Orphan{
		Note: fmt.Sprintf("connector %s has no config (deleted, or its config topic lost): nothing commits to group %s again. "+
			"Deleted on purpose: the group is orphaned; let it expire, or delete it now (delete)", connector, group),
		Delete: "kafka-consumer-groups.sh --bootstrap-server " + s.bootstrap() + " --delete --group " + ShellQuote(group),
	}
	if gone != nil {
		o.Commands = s.Undo(gone.Kind, gone.Before, connector)
		o.Note += fmt.Sprintf(". Not on purpose: create it again, with its config and its offsets of %s (just before its %s): the undo",
			FormatMoment(gone.Before), gone.Kind)
		if n := s.UndoNote(gone.Kind); n != "" {
			o.Note += " (" + n + ")"
		}
		return o
	}
	o.Commands = s.At(at, connector)
	o.Note += ". Not on purpose: its config went before the journal saw it: create the connector again from a snapshot " +
		"that holds it (list shows them; restore one with --connector " + ShellQuote(connector) + " --create-connectors), " +
		"or restore its offsets alone with the undo"
	return o
}

// bootstrap is the brokers of s's flags, as a --bootstrap-server value;
// from the environment (the shell that pastes the command has it)
// without one.
func (s CommandSettings) bootstrap() string {
	for i, f := range s.Flags {
		if f == "--brokers" && i+1 < len(s.Flags) {
			return ShellQuote(s.Flags[i+1])
		}
		if v, ok := strings.CutPrefix(f, "--brokers="); ok {
			return ShellQuote(v)
		}
	}
	return `"$OFFSETKEEPER_BROKERS"`
}

// LastConfigGone is the newest event of evs, oldest first, that took
// connector's config at or before at (snapshot.ConfigLost), or nil.
func LastConfigGone(evs []snapshot.Event, connector string, at time.Time) *ConfigGone {
	var out *ConfigGone
	for _, e := range evs {
		if e.Connector == connector && snapshot.ConfigLost(e.Kind) && !e.Time.After(at) {
			out = &ConfigGone{Kind: e.Kind, Before: e.Before}
		}
	}
	return out
}

// orphanTrap words t, an offsets-expire trap of a group whose connector
// has no config here, for a connector that is not there: its offsets
// (n of them) expire when, and resuming it is not possible. Its command
// creates the connector again from snap when snap holds its config and a
// Connect URL is known (restore --create-connectors); else the message
// says how.
func orphanTrap(t *SinkTrap, snap *snapshot.Snapshot, s CommandSettings, n int, when string, retention time.Duration) {
	t.Message = fmt.Sprintf("group %q has no members and connector %s has no config here (deleted, or its config topic lost): "+
		"nothing commits to it again, and Kafka deletes its %s %s (offsets.retention.minutes=%d). "+
		"Deleted on purpose: the group is orphaned; let it expire, or delete it (delete)",
		t.Group, t.Connector, plural(n, "committed offset", "committed offsets"), when, int64(retention/time.Minute))
	t.Delete = s.Orphaned(t.Group, t.Connector, nil, time.Time{}).Delete
	c, ok := snapshot.Connector{}, false
	if snap != nil {
		c, ok = snap.Connector(t.Connector)
	}
	switch {
	case !ok || !c.HasConfig:
		t.Message += ". Not on purpose: create the connector again from a snapshot that holds its config " +
			"(list shows them; restore one with --connector " + ShellQuote(t.Connector) + " --create-connectors and the Connect REST URL, --connect-url)"
	case !s.ConnectURL || s.Cloud || s.Layout:
		t.Message += fmt.Sprintf(". Not on purpose: snapshot %s holds its config: restore it with --connector %s --create-connectors "+
			"and the Connect REST URL (--connect-url)", snap.ID, ShellQuote(t.Connector))
	default:
		t.Message += fmt.Sprintf(". Not on purpose: create it again from snapshot %s, with its offsets (command)", snap.ID)
		t.Command = s.commands([]string{snap.ID, "--create-connectors"}, []string{t.Connector}).Run
	}
}
