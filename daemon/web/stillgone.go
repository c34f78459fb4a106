package web

import "github.com/offsetkeeper/offsetkeeper/snapshot"

// stillGone is what the page says of a connector whose config an event
// took away and that a restore of its offsets alone did not bring back.
const stillGone = "it has no config here; its undo with a Connect URL creates it (--create-connectors), as offsetkeeper events prints it"

// configLostStill reports whether an event of kind took the connector's
// config away and the connector, in state (the row's), still has none: a
// restore that wrote its offsets without --create-connectors put back
// what no connector reads, so the reset is not undone.
func configLostStill(kind, state string) bool {
	return snapshot.ConfigLost(kind) && (state == "NO CONFIG" || state == "DELETED")
}
