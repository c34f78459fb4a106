package snapshot

import (
	"iter"
)

// Index looks a snapshot's entries up by connector name in constant time,
// with the answers of the Snapshot methods of the same names (first match
// wins). Building it is linear; a restore plan with thousands of
// connectors would be quadratic without it. It answers for the snapshot as
// it was when the Index was made: make a new one after changing it.
//
// The source offsets of each connector are positions in the snapshot's
// SourceTable (4 bytes a key, not a copy of the 160-byte SourceOffset),
// found on the first call of Positions or SourceOffsetsOf: an index is
// often asked about connectors and groups only.
type Index struct {
	snap   *Snapshot
	conns  map[string]Connector
	groups map[string]SinkGroup
	// offsets holds the positions of each connector's source offsets, nil
	// until indexOffsets fills it (on the first Positions or SourceOffsetsOf).
	offsets map[string][]int32
}

// NewIndex indexes s.
func NewIndex(s *Snapshot) *Index {
	x := &Index{
		snap:   s,
		conns:  make(map[string]Connector, len(s.Connectors)),
		groups: make(map[string]SinkGroup, len(s.SinkGroups)),
	}
	for _, c := range s.Connectors {
		if _, dup := x.conns[c.Name]; !dup {
			x.conns[c.Name] = c
		}
	}
	for _, g := range s.SinkGroups {
		if _, dup := x.groups[g.Connector]; !dup && g.Connector != "" {
			x.groups[g.Connector] = g
		}
	}
	return x
}

// indexOffsets fills x.offsets: one slice of positions for the whole
// snapshot, cut per connector. A snapshot's keys come in runs of one
// connector (they sort by topic, partition and key, and a key starts with
// its connector's name), so the map is looked up once per run.
func (x *Index) indexOffsets() {
	offs := x.snap.SourceTable()
	counts := make(map[string]int32)
	last, n := "", int32(0)
	for i := range int32(offs.Len()) {
		c := offs.Connector(i)
		if c != last {
			if last != "" {
				counts[last] += n
			}
			last, n = c, 0
		}
		n++
	}
	if last != "" {
		counts[last] += n
	}
	total := int32(0)
	for _, n := range counts {
		total += n
	}
	all := make([]int32, total)
	x.offsets = make(map[string][]int32, len(counts))
	at := int32(0)
	for name, n := range counts {
		x.offsets[name] = all[at : at : at+n]
		at += n
	}
	last = ""
	var cur []int32
	for i := range int32(offs.Len()) {
		c := offs.Connector(i)
		if c == "" {
			continue
		}
		if c != last {
			if last != "" {
				x.offsets[last] = cur
			}
			last, cur = c, x.offsets[c]
		}
		cur = append(cur, int32(i))
	}
	if last != "" {
		x.offsets[last] = cur
	}
}

// Connector returns the named connector, or false.
func (x *Index) Connector(name string) (Connector, bool) {
	c, ok := x.conns[name]
	return c, ok
}

// Positions returns the positions in the snapshot's SourceTable of the
// source offsets of connector name, in the snapshot's order.
func (x *Index) Positions(name string) []int32 {
	if x.offsets == nil {
		x.indexOffsets()
	}
	return x.offsets[name]
}

// SourceOffsetsOf yields the source offsets of connector name, in the
// snapshot's order (SourceTable.At: of a compact table, what it keeps).
// They may point into the snapshot: do not change them.
func (x *Index) SourceOffsetsOf(name string) iter.Seq[*SourceOffset] {
	return func(yield func(*SourceOffset) bool) {
		t := x.snap.SourceTable()
		for _, i := range x.Positions(name) {
			if !yield(t.At(i)) {
				return
			}
		}
	}
}

// SinkGroupOf returns the connector's sink group, or false.
func (x *Index) SinkGroupOf(name string) (SinkGroup, bool) {
	g, ok := x.groups[name]
	return g, ok
}
