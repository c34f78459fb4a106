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

// keepOrphans adds to conns, the sink connectors whose groups readGroups
// reads, each group the Tail read for a sink connector that has no config
// now (deleted, or its config topic lost), under that connector: with a
// group.id override nothing else ties the group to a sink, and dropping
// it would record a deletion that did not happen, while nothing will
// commit to it again and Kafka expires it (the daemon's expiry guard
// watches it). It is read until it is really gone.
func (t *Tail) keepOrphans(conns map[string]*snapshot.Connector) {
	for name, g := range t.groups {
		if g.Connector == "" || conns[g.Connector] != nil {
			continue
		}
		if _, ok := t.conf.Connectors[g.Connector]; ok {
			continue // a config again, no longer a sink's
		}
		conns[g.Connector] = &snapshot.Connector{Name: g.Connector, Type: snapshot.TypeSink, Group: name}
	}
}
