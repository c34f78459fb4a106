package daemon

import "github.com/offsetkeeper/offsetkeeper/restore"

// undoNote is what to know before running the undo the "reset seen" line
// prints for an event of kind, as events prints it under the event: that
// a deleted connector comes back only with --create-connectors and a
// Connect URL, or that the connector must be stopped first when the
// commands cannot stop it. Without it the undo of a connector-deleted
// event, run as logged, wrote the offsets and left the connector gone.
func undoNote(s restore.CommandSettings, kind, connector string) string {
	if note := s.UndoNote(kind); note != "" {
		return note
	}
	return s.StopFirstOf(connector)
}
