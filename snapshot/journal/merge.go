package journal

// This file compacts an epoch's segments into merged levels kept beside
// the raw ones, as Litestream compacts LTX files: the newest value per
// key, per group partition, per group and per connector, in the order a
// replay applies them, every gap kept, events bounded (see merger). A merged segment's time
// is its last entry's (never older than a change it holds), so a restore
// plan that applies it whole only when its time is at or before the moment
// gets exactly what replaying the raw segments gives.
//
// Levels (wall-clock boundaries, UTC):
//
//	0  raw, one segment per flush
//	1  every minute: everything since the epoch's last level 2 segment
//	2  every hour: everything since the epoch's start
//
// so a restore reads at most one level 2 segment, one level 1 segment and
// a minute of raw segments, whatever the span between the base snapshot
// and the moment. See docs/journal.md.

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Journal levels.
const (
	LevelRaw    = 0
	LevelMinute = 1
	LevelHour   = 2
	TopLevel    = LevelHour
)

// LevelEvery is the wall-clock boundary each merged level is written on.
var LevelEvery = [...]time.Duration{LevelMinute: time.Minute, LevelHour: time.Hour}

// minuteSkip: a level 1 segment is not rewritten at a boundary when the raw
// segments after the current one hold less than 1/minuteSkip of its bytes
// (an idle journal's heartbeats): a restore reads them raw, and the hour's
// level 2 segment covers them.
const minuteSkip = 4

// Compaction returns the segments a level's segment at boundary b merges,
// or nil when it is there already or not worth writing.
func (e *EpochInfo) Compaction(level int, b time.Time) []SegmentInfo {
	var last uint64
	for _, si := range e.Segments {
		if si.Level < level && !si.LastTime.After(b) && si.LastSeq > last {
			last = si.LastSeq
		}
	}
	first := uint64(1)
	if level < TopLevel {
		for _, si := range e.Segments {
			if si.Level > level && si.LastSeq <= last && si.LastSeq >= first {
				first = si.LastSeq + 1
			}
		}
	}
	if last < first {
		return nil
	}
	for _, si := range e.Segments {
		if si.Level == level && si.FirstSeq == first && si.LastSeq >= last {
			return nil
		}
	}
	cover := e.cover(first, last, level)
	if len(cover) == 0 {
		return nil
	}
	if level == LevelMinute && cover[0].Level == LevelMinute {
		var added int64
		for _, si := range cover[1:] {
			added += si.Size
		}
		if added*minuteSkip < cover[0].Size {
			return nil
		}
	}
	return cover
}

// cover returns the fewest segments of levels up to level that lead from
// first to last, or nil when some seq between is in none.
func (e *EpochInfo) cover(first, last uint64, level int) []SegmentInfo {
	var out []SegmentInfo
	starts, _ := e.byFirst()
	for n := first; n <= last; {
		var best *SegmentInfo
		for i := range starts[n] {
			c := &starts[n][i]
			if c.Level > level || c.LastSeq > last {
				continue
			}
			if best == nil || c.LastSeq > best.LastSeq || (c.LastSeq == best.LastSeq && c.Level > best.Level) {
				best = c
			}
		}
		if best == nil {
			return nil
		}
		out = append(out, *best)
		n = best.LastSeq + 1
	}
	return out
}

// merger merges the entries of segments added in order into entries that
// a replay applying them whole turns into the same state as applying every
// entry of those segments: per source partition the last record of each
// key (in offset order; a tombstone stays, so it still removes the key),
// per group a deletion first when the group was deleted, then its last
// state and the last value or deletion of each partition since; per
// connector its last config record; every gap; the last positions. Its
// time is the latest of the segments' last times and of every entry's
// time (a record stamped by a clock ahead of the daemon's), so that a
// moment at or after it sees every entry whole.
//
// Events are kept bounded (a replay does not read them; events lists
// them): those of one connector, group and kind within one bucket (a
// minute for level 1, an hour for level 2) are one, with the first one's
// time and moment before, and the counts summed.
type merger struct {
	parts  map[mergeTP]*partMerge
	last   *partMerge // the partition of the entry before, most often the next's
	lastTP mergeTP
	groups map[string]*groupMerge
	conns  map[string]Entry
	// confs is the last connector-<name> record of each connector whose
	// last entry may be another (a target state, a task commit): a replay
	// takes the connector's config from it.
	confs  map[string]Entry
	events map[eventKey]int // index in keep
	bucket int64            // ms; 0 keeps every event
	keep   []Entry
	pos    []Entry
	Latest int64
}

// partMerge is the records merged of one source partition.
type partMerge struct {
	next int64
	seen bool
	keys map[string]int32 // index in recs
	recs []Entry
}

type mergeTP struct {
	topic string
	part  int32
}

type eventKey struct {
	conn, group, kind string
	bucket            int64
}

type groupMerge struct {
	deleted *Entry
	state   *Entry
	parts   map[mergeTP]Entry
}

// eventBucket is how finely a level keeps events.
func eventBucket(level int) int64 {
	switch level {
	case LevelMinute:
		return time.Minute.Milliseconds()
	case LevelHour:
		return time.Hour.Milliseconds()
	}
	return 0
}

func NewMerger(level int) *merger {
	return &merger{parts: map[mergeTP]*partMerge{}, groups: map[string]*groupMerge{}, conns: map[string]Entry{},
		confs: map[string]Entry{}, events: map[eventKey]int{}, bucket: eventBucket(level)}
}

func (m *merger) group(name string) *groupMerge {
	g := m.groups[name]
	if g == nil {
		g = &groupMerge{parts: map[mergeTP]Entry{}}
		m.groups[name] = g
	}
	return g
}

func (m *merger) part(tp mergeTP) *partMerge {
	if m.last != nil && m.lastTP == tp {
		return m.last
	}
	p := m.parts[tp]
	if p == nil {
		p = &partMerge{keys: map[string]int32{}}
		m.parts[tp] = p
	}
	m.last, m.lastTP = p, tp
	return p
}

// Add merges the entries of the segment that follows the ones added.
func (m *merger) Add(seg *Segment) {
	m.Latest = max(m.Latest, Ms(seg.LastTime))
	m.pos = m.pos[:0]
	for i := range seg.Entries {
		e := &seg.Entries[i]
		switch e.Kind {
		case EntrySource, EntrySink, EntryGroup, EntryConfig:
			m.Latest = max(m.Latest, e.Time)
		}
		switch e.Kind {
		case EntrySource:
			p := m.part(mergeTP{e.Topic, e.Partition})
			if p.seen && e.Offset < p.next {
				continue // a replay skips it too
			}
			p.next, p.seen = e.Offset+1, true
			if j, ok := p.keys[string(e.Key)]; ok {
				p.recs[j] = *e
			} else {
				p.keys[string(e.Key)] = int32(len(p.recs))
				p.recs = append(p.recs, *e)
			}
		case EntrySink:
			m.group(e.Group).parts[mergeTP{e.Topic, e.Partition}] = *e
		case EntryGroup:
			g := m.group(e.Group)
			if e.Deleted {
				c := *e
				g.deleted, g.state, g.parts = &c, nil, map[mergeTP]Entry{}
			} else {
				c := *e
				g.state = &c
			}
		case EntryConfig:
			m.conns[e.Connector] = *e
			switch {
			case e.Deleted:
				delete(m.confs, e.Connector)
			case string(e.Key) == "connector-"+e.Connector && e.Value != nil:
				m.confs[e.Connector] = *e
			}
		case EntryPosition:
			m.pos = append(m.pos, *e)
		case EntryEvent:
			m.event(e)
		default:
			m.keep = append(m.keep, *e)
		}
	}
}

// event keeps e, or counts it in the event of its bucket.
func (m *merger) event(e *Entry) {
	if m.bucket == 0 {
		m.keep = append(m.keep, *e)
		return
	}
	k := eventKey{e.Connector, e.Group, e.Reason, e.Time - e.Time%m.bucket}
	i, ok := m.events[k]
	if !ok {
		m.events[k] = len(m.keep)
		m.keep = append(m.keep, *e)
		return
	}
	w := &m.keep[i]
	w.Count = int32(min(int64(w.Count)+int64(e.Count), math.MaxInt32))
	if e.Time < w.Time {
		w.Time, w.Before = e.Time, e.Before
	}
}

// Entries returns the merge, in the order a replay applies it.
func (m *merger) Entries() []Entry {
	n := len(m.conns) + len(m.confs) + len(m.keep) + len(m.pos)
	for _, p := range m.parts {
		n += len(p.recs)
	}
	out := make([]Entry, 0, n)
	tps := slices.SortedFunc(maps.Keys(m.parts), func(a, b mergeTP) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part))
	})
	type ord struct {
		off int64
		i   int32
	}
	var order []ord
	for _, tp := range tps {
		p := m.parts[tp]
		order = order[:0]
		for i := range p.recs {
			order = append(order, ord{p.recs[i].Offset, int32(i)})
		}
		slices.SortFunc(order, func(a, b ord) int { return cmp.Compare(a.off, b.off) })
		for _, o := range order {
			out = append(out, p.recs[o.i])
		}
	}
	cs := slices.Collect(maps.Values(m.conns))
	for name, c := range m.confs {
		if m.conns[name].Offset != c.Offset {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	out = append(out, cs...)
	// Per group: its deletion (which clears what a replay knows of it),
	// its state, then its partitions.
	for _, name := range slices.Sorted(maps.Keys(m.groups)) {
		g := m.groups[name]
		if g.deleted != nil {
			out = append(out, *g.deleted)
		}
		if g.state != nil {
			out = append(out, *g.state)
		}
		parts := slices.Collect(maps.Values(g.parts))
		slices.SortFunc(parts, func(a, b Entry) int {
			return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		out = append(out, parts...)
	}
	out = append(out, m.keep...)
	return append(out, m.pos...)
}

// MergedNote says that a moment lies where only merged segments are kept.
func MergedNote(si SegmentInfo, asOf time.Time) string {
	return fmt.Sprintf("the raw journal after %s is merged (level %d, up to %s; raw segments are kept for --journal-keep-within): the moment is restored as of %s, the last merged boundary at or before it", snapshot.FmtTime(asOf), si.Level, snapshot.FmtTime(si.LastTime), snapshot.FmtTime(asOf))
}
