package main

import (
	"fmt"

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
