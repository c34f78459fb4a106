package restore

import "github.com/offsetkeeper/offsetkeeper/snapshot"

// index looks a snapshot's entries up by connector name in constant time,
// with the answers of the Snapshot methods of the same names (first match
// wins). Building it is linear; a plan with thousands of connectors would
// be quadratic without it.
type index struct {
	conns   map[string]snapshot.Connector
	offsets map[string][]snapshot.SourceOffset
	groups  map[string]snapshot.SinkGroup
}

func newIndex(s *snapshot.Snapshot) *index {
	x := &index{
		conns:   make(map[string]snapshot.Connector, len(s.Connectors)),
		offsets: make(map[string][]snapshot.SourceOffset),
		groups:  make(map[string]snapshot.SinkGroup, len(s.SinkGroups)),
	}
	for _, c := range s.Connectors {
		if _, dup := x.conns[c.Name]; !dup {
			x.conns[c.Name] = c
		}
	}
	for _, o := range s.SourceOffsets {
		if o.Connector != "" {
			x.offsets[o.Connector] = append(x.offsets[o.Connector], o)
		}
	}
	for _, g := range s.SinkGroups {
		if _, dup := x.groups[g.Connector]; !dup && g.Connector != "" {
			x.groups[g.Connector] = g
		}
	}
	return x
}

func (x *index) connector(name string) (snapshot.Connector, bool) {
	c, ok := x.conns[name]
	return c, ok
}

func (x *index) sourceOffsetsOf(name string) []snapshot.SourceOffset { return x.offsets[name] }

func (x *index) sinkGroupOf(name string) (snapshot.SinkGroup, bool) {
	g, ok := x.groups[name]
	return g, ok
}
