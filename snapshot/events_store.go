package snapshot

import (
	"context"
	"slices"
	"time"
)

// Events returns the events the journal holds at or after since, oldest
// first. It reads every segment whose last time is at or after since.
func (s *Store) Events(ctx context.Context, since time.Time) ([]Event, error) {
	l, err := s.ListJournal(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	cov := coverageOf(infos, l)
	now := time.Now()
	var out []Event
	for _, e := range l.Epochs {
		chain, _ := e.Chain()
		for _, si := range chain {
			if si.LastTime.Before(since) {
				continue
			}
			seg, err := s.ReadSegment(ctx, si)
			if err != nil {
				return nil, err
			}
			for _, en := range seg.Entries {
				if en.Kind != EntryEvent || fromMs(en.Time).Before(since) {
					continue
				}
				ev := Event{
					Time: fromMs(en.Time), Connector: en.Connector, Group: en.Group, Kind: en.Reason, Count: int(en.Count),
					Before: fromMs(en.Before), Epoch: e.ID, Segment: seg.LastSeq,
				}
				ev.Before = UndoMoment(e.ID, ev.Before, ev.Time)
				out = append(out, ev)
			}
		}
	}
	// An epoch that starts from a snapshot overlaps the one before: the
	// same reset may be seen by both.
	type key struct {
		conn, group, kind string
		before            time.Time
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Time.Compare(b.Time) })
	var dedup []Event
	seen := map[key]bool{}
	for _, ev := range out {
		k := key{ev.Connector, ev.Group, ev.Kind, ev.Before}
		if !seen[k] {
			seen[k] = true
			ev.UndoGone = UndoGone(ev.Before, infos, cov, now)
			dedup = append(dedup, ev)
		}
	}
	return dedup, nil
}
