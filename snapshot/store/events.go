package store

import (
	"context"
	"slices"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Events returns the events the journal holds at or after since, oldest
// first. It reads every segment whose last time is at or after since.
func (h Journal) Events(ctx context.Context, since time.Time) ([]snapshot.Event, error) {
	s := h.s
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, err
	}
	cov := journal.CoverageOf(infos, l)
	now := time.Now()
	var out []snapshot.Event
	for _, e := range l.Epochs {
		chain, _ := e.Chain()
		for _, si := range chain {
			if si.LastTime.Before(since) {
				continue
			}
			seg, err := s.Journal().ReadSegment(ctx, si)
			if err != nil {
				return nil, err
			}
			for _, en := range seg.Entries {
				if en.Kind != journal.EntryEvent || journal.FromMs(en.Time).Before(since) {
					continue
				}
				ev := snapshot.Event{
					Time: journal.FromMs(en.Time), Connector: en.Connector, Group: en.Group, Kind: en.Reason, Count: int(en.Count),
					Before: journal.FromMs(en.Before), Epoch: e.ID, Segment: seg.LastSeq,
				}
				ev.Before = journal.UndoMoment(e.ID, ev.Before, ev.Time)
				out = append(out, ev)
			}
		}
	}
	// A sink event that is a restore's own writes is listed as the
	// restore, with the others, from the undo snapshots.
	out = slices.DeleteFunc(out, func(ev snapshot.Event) bool {
		return snapshot.OwnRestore(infos, ev.Kind, ev.Connector, ev.Before, ev.Time) != ""
	})
	out = append(out, snapshot.Restored(infos, since)...)
	// An epoch that starts from a snapshot overlaps the one before: the
	// same reset may be seen by both.
	type key struct {
		conn, group, kind string
		before            time.Time
	}
	slices.SortStableFunc(out, func(a, b snapshot.Event) int { return a.Time.Compare(b.Time) })
	var dedup []snapshot.Event
	seen := map[key]bool{}
	for _, ev := range out {
		k := key{ev.Connector, ev.Group, ev.Kind, ev.Before}
		if !seen[k] {
			seen[k] = true
			if ev.Kind != snapshot.EventRestored {
				ev.UndoGone = snapshot.UndoGone(ev.Before, infos, cov, now)
			}
			dedup = append(dedup, ev)
		}
	}
	return dedup, nil
}
