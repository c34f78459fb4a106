package snapshot

// This file merges an epoch's raw segments into one level 1 segment, as
// Litestream compacts LTX files: the newest value per key, per group
// partition, per group and per connector, in the order a replay applies
// them. A merged segment's time is its last entry's (the last raw
// segment's), so it never looks older than the changes it holds; a moment
// inside its span can only be restored to its start.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// MergeEpoch merges the raw segments of epoch e, which no daemon writes any
// more, into one level 1 segment and deletes them. An epoch already
// merged, or with fewer than two raw segments, is left as it is.
func (s *Store) MergeEpoch(ctx context.Context, e EpochInfo) (bool, error) {
	chain, hole := e.Chain()
	if hole != nil {
		return false, fmt.Errorf("merge journal epoch %s: %w", e.ID, hole)
	}
	if len(chain) < 2 || chain[0].Level > 0 {
		return false, nil
	}
	var segs []*Segment
	var prev *Segment
	for _, si := range chain {
		seg, err := s.ReadSegment(ctx, si)
		if err != nil {
			return false, fmt.Errorf("merge journal epoch %s: %w", e.ID, err)
		}
		if err := checkLink(prev, seg, si.Key); err != nil {
			return false, fmt.Errorf("merge journal epoch %s: %w", e.ID, err)
		}
		segs, prev = append(segs, seg), seg
	}
	first, last := segs[0], segs[len(segs)-1]
	merged := &Segment{
		Epoch: e.ID, Level: 1, FirstSeq: first.FirstSeq, LastSeq: last.LastSeq,
		FirstTime: first.FirstTime, LastTime: last.LastTime, LastDigest: last.LastDigest,
		Entries: mergeEntries(segs),
	}
	if _, err := s.PutSegment(ctx, merged); err != nil {
		return false, fmt.Errorf("merge journal epoch %s: %w", e.ID, err)
	}
	for _, si := range chain {
		if err := s.DeleteJournalObject(ctx, si.Key); err != nil {
			return true, fmt.Errorf("merge journal epoch %s: %w", e.ID, err)
		}
	}
	return true, nil
}

// mergeEntries keeps, of the entries of segs in order, the last of each
// source key per partition (in offset order), of each sink group
// partition, group and connector, every event and gap, and the last
// positions.
func mergeEntries(segs []*Segment) []Entry {
	type srcKey struct {
		topic string
		part  int32
		key   string
	}
	src := map[srcKey]Entry{}
	sinks := map[string]Entry{}
	groups := map[string]Entry{}
	conns := map[string]Entry{}
	var keep, pos []Entry
	for _, seg := range segs {
		pos = pos[:0]
		for _, e := range seg.Entries {
			switch e.Kind {
			case EntrySource:
				src[srcKey{e.Topic, e.Partition, string(e.Key)}] = e
			case EntrySink:
				sinks[fmt.Sprintf("%s\x00%s\x00%d", e.Group, e.Topic, e.Partition)] = e
			case EntryGroup:
				groups[e.Group] = e
			case EntryConfig:
				conns[e.Connector] = e
			case EntryPosition:
				pos = append(pos, e)
			default:
				keep = append(keep, e)
			}
		}
	}
	var out []Entry
	srcs := make([]Entry, 0, len(src))
	for _, e := range src {
		srcs = append(srcs, e)
	}
	slices.SortFunc(srcs, func(a, b Entry) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	out = append(out, srcs...)
	cs := make([]Entry, 0, len(conns))
	for _, e := range conns {
		cs = append(cs, e)
	}
	slices.SortFunc(cs, func(a, b Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	out = append(out, cs...)
	// Groups before their partitions: a group entry resets what a replay
	// knows of the group, its partitions then set it.
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, groups[k])
	}
	for _, k := range slices.Sorted(maps.Keys(sinks)) {
		e := sinks[k]
		if g, ok := groups[e.Group]; ok && g.Deleted && g.Time >= e.Time {
			continue // the group was deleted after
		}
		out = append(out, e)
	}
	out = append(out, keep...)
	return append(out, pos...)
}

// mergedNote says what a merged segment did to a moment inside it.
func mergedNote(seg *Segment, at time.Time) string {
	return fmt.Sprintf("the journal from %s to %s was merged (older than --journal-keep-within): a moment inside it is restored as of %s, its start", fmtTime(seg.FirstTime), fmtTime(seg.LastTime), fmtTime(seg.FirstTime))
}
