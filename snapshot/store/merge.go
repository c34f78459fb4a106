package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Compact writes the merged segments epoch e lacks at now, top level
// first, and returns them. A segment another daemon wrote meanwhile is not
// an error.
func (h Levels) Compact(ctx context.Context, e journal.EpochInfo, now time.Time) ([]journal.SegmentInfo, error) {
	s := h.s
	return s.compactAt(ctx, e, func(level int) time.Time { return now.UTC().Truncate(journal.LevelEvery[level]) })
}

// compactAt is Compact with each level's last boundary given.
func (s *Store) compactAt(ctx context.Context, e journal.EpochInfo, boundary func(level int) time.Time) ([]journal.SegmentInfo, error) {
	var out []journal.SegmentInfo
	for level := journal.TopLevel; level >= journal.LevelMinute; level-- {
		cover := e.Compaction(level, boundary(level))
		if len(cover) == 0 {
			continue
		}
		si, err := s.mergeCover(ctx, e.ID, level, cover)
		if errors.Is(err, snapshot.ErrExists) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("compact journal epoch %s to level %d: %w", e.ID, level, err)
		}
		out = append(out, si)
		e.Segments = append(slices.Clone(e.Segments), si)
		journal.SortSegments(e.Segments)
	}
	return out, nil
}

// mergeCover reads the segments of cover, checks that each follows the one
// before, and writes their merge at level.
func (s *Store) mergeCover(ctx context.Context, epoch string, level int, cover []journal.SegmentInfo) (journal.SegmentInfo, error) {
	m := journal.NewMerger(level)
	var first, prev *journal.Segment
	for _, si := range cover {
		seg, err := s.Journal().ReadSegment(ctx, si)
		if err != nil {
			return journal.SegmentInfo{}, err
		}
		if prev != nil && (seg.FirstSeq != prev.LastSeq+1 || seg.PrevDigest != prev.LastDigest) {
			return journal.SegmentInfo{}, fmt.Errorf("read journal segment %s: %w: it does not follow segment %d", si.Key, journal.ErrJournalBroken, prev.LastSeq)
		}
		if first == nil {
			first = seg
		}
		m.Add(seg)
		prev = seg
	}
	merged := &journal.Segment{
		Epoch: epoch, Level: level, FirstSeq: first.FirstSeq, LastSeq: prev.LastSeq,
		FirstTime: first.FirstTime, LastTime: journal.FromMs(m.Latest), PrevDigest: first.PrevDigest, LastDigest: prev.LastDigest,
		Entries: m.Entries(),
	}
	return s.Journal().PutSegment(ctx, merged)
}

// DropRaw deletes the raw segments of e that a merged segment holds and
// whose last time is keep or more before now, and returns how many.
func (h Levels) DropRaw(ctx context.Context, e journal.EpochInfo, keep time.Duration, now time.Time) (int, error) {
	s := h.s
	n := 0
	for _, si := range e.Segments {
		if si.Level != journal.LevelRaw || now.Sub(si.LastTime) < keep {
			continue
		}
		held := false
		for _, m := range e.Segments {
			if m.Level > journal.LevelRaw && m.FirstSeq <= si.FirstSeq && si.LastSeq <= m.LastSeq {
				held = true
				break
			}
		}
		if !held {
			continue
		}
		if err := s.Journal().DeleteObject(ctx, si.Key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ThinMinutes deletes the level 1 segments of e that no restore to a
// moment within keep of now reads, and returns how many: those a later
// level 1 segment supersedes (it starts at the same seq and reaches
// farther), that a level 2 segment holds (their hour is complete), and
// whose last time is more than keep and an hour before now. A moment
// within keep still reads at most one level 2, one level 1 and a minute of
// raw segments; an older one, whose raw segments --journal-keep-within
// deleted, is restored as of the boundary before it that is still kept:
// the hour's level 2 segment, or the hour's last level 1 segment.
func (h Levels) ThinMinutes(ctx context.Context, e journal.EpochInfo, keep time.Duration, now time.Time) (int, error) {
	s := h.s
	if keep <= 0 {
		return 0, nil
	}
	cutoff := now.Add(-keep - time.Hour)
	newest := map[uint64]uint64{} // the farthest level 1 segment from each first seq
	var hour uint64               // the farthest level 2 segment
	for _, si := range e.Segments {
		switch si.Level {
		case journal.LevelMinute:
			newest[si.FirstSeq] = max(newest[si.FirstSeq], si.LastSeq)
		case journal.LevelHour:
			hour = max(hour, si.LastSeq)
		}
	}
	n := 0
	for _, si := range e.Segments {
		if si.Level != journal.LevelMinute || !si.LastTime.Before(cutoff) || si.LastSeq >= newest[si.FirstSeq] || si.LastSeq > hour {
			continue
		}
		if err := s.Journal().DeleteObject(ctx, si.Key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
