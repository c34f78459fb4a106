package capture

import "github.com/offsetkeeper/offsetkeeper/snapshot"

// SinkGroups are the sink groups as the last Poll read them, by name (the
// daemon's expiry guard, issue 37). The map and its groups belong to the
// Tail: read them only, before the next Poll.
func (t *Tail) SinkGroups() map[string]snapshot.SinkGroup { return t.groups }

// HasConfig reports whether connector has a config in the config topic
// as the Tail last read it. Safe while the Tail's hooks run.
func (t *Tail) HasConfig(connector string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.conf.Connectors[connector]
	return ok
}
