package snapshot

// This file compacts an epoch's segments into merged levels kept beside
// the raw ones, as Litestream compacts LTX files: the newest value per
// key, per group partition, per group and per connector, in the order a
// replay applies them, every event and gap kept. A merged segment's time
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
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Journal levels.
const (
	LevelRaw    = 0
	LevelMinute = 1
	LevelHour   = 2
	topLevel    = LevelHour
)

// levelEvery is the wall-clock boundary each merged level is written on.
var levelEvery = [...]time.Duration{LevelMinute: time.Minute, LevelHour: time.Hour}

// minuteSkip: a level 1 segment is not rewritten at a boundary when the raw
// segments after the current one hold less than 1/minuteSkip of its bytes
// (an idle journal's heartbeats): a restore reads them raw, and the hour's
// level 2 segment covers them.
const minuteSkip = 4

// CompactEpoch writes the merged segments epoch e lacks at now, top level
// first, and returns them. A segment another daemon wrote meanwhile is not
// an error.
func (s *Store) CompactEpoch(ctx context.Context, e EpochInfo, now time.Time) ([]SegmentInfo, error) {
	return s.compactAt(ctx, e, func(level int) time.Time { return now.UTC().Truncate(levelEvery[level]) })
}

// compactAt is CompactEpoch with each level's last boundary given.
func (s *Store) compactAt(ctx context.Context, e EpochInfo, boundary func(level int) time.Time) ([]SegmentInfo, error) {
	var out []SegmentInfo
	for level := topLevel; level >= LevelMinute; level-- {
		cover := e.compaction(level, boundary(level))
		if len(cover) == 0 {
			continue
		}
		si, err := s.mergeCover(ctx, e.ID, level, cover)
		if errors.Is(err, ErrExists) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("compact journal epoch %s to level %d: %w", e.ID, level, err)
		}
		out = append(out, si)
		e.Segments = append(slices.Clone(e.Segments), si)
		sortSegments(e.Segments)
	}
	return out, nil
}

// compaction returns the segments a level's segment at boundary b merges,
// or nil when it is there already or not worth writing.
func (e *EpochInfo) compaction(level int, b time.Time) []SegmentInfo {
	var last uint64
	for _, si := range e.Segments {
		if si.Level < level && !si.LastTime.After(b) && si.LastSeq > last {
			last = si.LastSeq
		}
	}
	first := uint64(1)
	if level < topLevel {
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

// mergeCover reads the segments of cover, checks that each follows the one
// before, and writes their merge at level.
func (s *Store) mergeCover(ctx context.Context, epoch string, level int, cover []SegmentInfo) (SegmentInfo, error) {
	m := newMerger()
	var first, prev *Segment
	for _, si := range cover {
		seg, err := s.ReadSegment(ctx, si)
		if err != nil {
			return SegmentInfo{}, err
		}
		if prev != nil && (seg.FirstSeq != prev.LastSeq+1 || seg.PrevDigest != prev.LastDigest) {
			return SegmentInfo{}, fmt.Errorf("read journal segment %s: %w: it does not follow segment %d", si.Key, ErrJournalBroken, prev.LastSeq)
		}
		if first == nil {
			first = seg
		}
		m.add(seg)
		prev = seg
	}
	merged := &Segment{
		Epoch: epoch, Level: level, FirstSeq: first.FirstSeq, LastSeq: prev.LastSeq,
		FirstTime: first.FirstTime, LastTime: fromMs(m.latest), PrevDigest: first.PrevDigest, LastDigest: prev.LastDigest,
		Entries: m.entries(),
	}
	return s.PutSegment(ctx, merged)
}

// DropRaw deletes the raw segments of e that a merged segment holds and
// whose last time is keep or more before now, and returns how many.
func (s *Store) DropRaw(ctx context.Context, e EpochInfo, keep time.Duration, now time.Time) (int, error) {
	n := 0
	for _, si := range e.Segments {
		if si.Level != LevelRaw || now.Sub(si.LastTime) < keep {
			continue
		}
		held := false
		for _, m := range e.Segments {
			if m.Level > LevelRaw && m.FirstSeq <= si.FirstSeq && si.LastSeq <= m.LastSeq {
				held = true
				break
			}
		}
		if !held {
			continue
		}
		if err := s.DeleteJournalObject(ctx, si.Key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// merger merges the entries of segments added in order into entries that
// a replay applying them whole turns into the same state as applying every
// entry of those segments: per source partition the last record of each
// key (in offset order; a tombstone stays, so it still removes the key),
// per group a deletion first when the group was deleted, then its last
// state and the last value or deletion of each partition since; per
// connector its last config record; every gap and event; the last
// positions. Its time is the latest of the segments' last times and of
// every entry's time (a record stamped by a clock ahead of the daemon's),
// so that a moment at or after it sees every entry whole.
type merger struct {
	src    map[mergeKey]Entry
	next   map[mergeTP]int64
	groups map[string]*groupMerge
	conns  map[string]Entry
	keep   []Entry
	pos    []Entry
	latest int64
}

type mergeKey struct {
	topic string
	part  int32
	key   string
}

type mergeTP struct {
	topic string
	part  int32
}

type groupMerge struct {
	deleted *Entry
	state   *Entry
	parts   map[mergeTP]Entry
}

func newMerger() *merger {
	return &merger{src: map[mergeKey]Entry{}, next: map[mergeTP]int64{}, groups: map[string]*groupMerge{}, conns: map[string]Entry{}}
}

func (m *merger) group(name string) *groupMerge {
	g := m.groups[name]
	if g == nil {
		g = &groupMerge{parts: map[mergeTP]Entry{}}
		m.groups[name] = g
	}
	return g
}

// add merges the entries of the segment that follows the ones added.
func (m *merger) add(seg *Segment) {
	m.latest = max(m.latest, ms(seg.LastTime))
	m.pos = m.pos[:0]
	for _, e := range seg.Entries {
		switch e.Kind {
		case EntrySource, EntrySink, EntryGroup, EntryConfig:
			m.latest = max(m.latest, e.Time)
		}
		switch e.Kind {
		case EntrySource:
			p := mergeTP{e.Topic, e.Partition}
			if n, ok := m.next[p]; ok && e.Offset < n {
				continue // a replay skips it too
			}
			m.next[p] = e.Offset + 1
			m.src[mergeKey{e.Topic, e.Partition, string(e.Key)}] = e
		case EntrySink:
			m.group(e.Group).parts[mergeTP{e.Topic, e.Partition}] = e
		case EntryGroup:
			g := m.group(e.Group)
			if e.Deleted {
				g.deleted, g.state, g.parts = &e, nil, map[mergeTP]Entry{}
			} else {
				g.state = &e
			}
		case EntryConfig:
			m.conns[e.Connector] = e
		case EntryPosition:
			m.pos = append(m.pos, e)
		default:
			m.keep = append(m.keep, e)
		}
	}
}

// entries returns the merge, in the order a replay applies it.
func (m *merger) entries() []Entry {
	out := make([]Entry, 0, len(m.src)+len(m.conns)+len(m.keep)+len(m.pos))
	srcs := slices.Collect(maps.Values(m.src))
	slices.SortFunc(srcs, func(a, b Entry) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	out = append(out, srcs...)
	cs := slices.Collect(maps.Values(m.conns))
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

// mergedNote says that a moment lies where only merged segments are kept.
func mergedNote(si SegmentInfo, asOf time.Time) string {
	return fmt.Sprintf("the raw journal after %s is merged (level %d, up to %s; raw segments are kept for --journal-keep-within): the moment is restored as of %s, the last merged boundary at or before it", fmtTime(asOf), si.Level, fmtTime(si.LastTime), fmtTime(asOf))
}
