package web

import (
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// deletedCommands are the commands of the page's plan of connector back
// to then when it has a config then but none now (deleted since): the
// undo of a connector-deleted event, which creates it again
// (--create-connectors) when a Connect URL is known, with the note that
// says what to add when none is; ok false for any other plan. Without
// it the page's restore, run as printed, wrote the offsets and left the
// connector deleted.
func deletedCommands(s restore.CommandSettings, p *Plan, then, now *snapshot.Snapshot) (cmds restore.Commands, note string, ok bool) {
	if p.Connector == "" {
		return restore.Commands{}, "", false
	}
	tc, had := then.Connector(p.Connector)
	nc, has := now.Connector(p.Connector)
	if !had || !tc.HasConfig || (has && nc.HasConfig) {
		return restore.Commands{}, "", false
	}
	return s.Undo(snapshot.EventConnectorDeleted, p.At, p.Connector), s.UndoNote(snapshot.EventConnectorDeleted), true
}
