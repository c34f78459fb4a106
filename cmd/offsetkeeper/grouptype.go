package main

import (
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// groupTypeText marks a group that is not classic in text output: "" for
// a classic group (and one read before the type was recorded), so the
// lines of classic groups read as they always have.
func groupTypeText(typ string) string {
	if typ == "" || typ == capture.GroupTypeClassic {
		return ""
	}
	return fmt.Sprintf(" (%s protocol)", typ)
}

// unreadText is one line naming a sink group a capture could not read.
func unreadText(u snapshot.UnreadGroup) string {
	who := fmt.Sprintf("group %q", u.Group)
	if u.Connector != "" {
		who = fmt.Sprintf("sink connector %q (group %q)", u.Connector, u.Group)
	}
	return fmt.Sprintf("%s not captured: %s", who, u.Reason)
}

// incompleteError is a snapshot stored with sink groups it could not read
// (exit 4): the snapshot is kept, for everything else it holds.
type incompleteError struct {
	id     string
	unread []snapshot.UnreadGroup
}

func (e incompleteError) Error() string {
	names := make([]string, len(e.unread))
	for i, u := range e.unread {
		names[i] = fmt.Sprintf("%q", u.Group)
	}
	return fmt.Sprintf("snapshot %s stored without %d sink group(s) it could not read (%s): a restore of it leaves their offsets as they are; "+
		"fix what each names (above) and run offsetkeeper snapshot again", e.id, len(e.unread), strings.Join(names, ", "))
}

// incomplete is an incompleteError when snap left sink groups out.
func incomplete(snap *snapshot.Snapshot, id string) error {
	if len(snap.Unread) == 0 {
		return nil
	}
	return incompleteError{id: id, unread: snap.Unread}
}
