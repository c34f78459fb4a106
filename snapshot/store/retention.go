package store

// This file reads what ApplyPolicy needs to know of the journal.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// EventCache holds the resets read from journal segments, by segment key,
// so that a daemon applying retention after every run reads each segment
// once. The zero EventCache is ready; a nil one caches nothing.
type EventCache struct {
	mu    sync.Mutex
	bySeg map[string][]snapshot.Event
}

// RetentionJournal returns the Journal ApplyPolicy needs to apply p to
// infos (the store's snapshots, as List gives them) at now: the coverage
// of every epoch, and the resets younger than p.ResetWithin. Only the
// segments that can decide something are read: those of the epochs whose
// span, or the span of the epoch before them, holds a snapshot that p
// would remove without the reset rule (a reset only matters for what
// would otherwise go). cache, when not nil, keeps what was read for the
// next call.
func (h Snapshots) RetentionJournal(ctx context.Context, infos []snapshot.Info, p snapshot.Policy, now time.Time, cache *EventCache) (snapshot.Journal, error) {
	s := h.s
	l, err := s.Journal().List(ctx)
	if err != nil {
		return snapshot.Journal{}, err
	}
	j := snapshot.Journal{Coverage: journal.CoverageOf(infos, l)}
	if p.Empty() || p.ResetWithin <= 0 || len(l.Epochs) == 0 {
		return j, nil
	}
	_, remove, _ := snapshot.ApplyPolicy(infos, j, snapshot.Policy{
		Last: p.Last, Hourly: p.Hourly, Daily: p.Daily, Weekly: p.Weekly, Monthly: p.Monthly,
		Within: p.Within, UndoWithin: p.UndoWithin, ManualWithin: p.ManualWithin,
	}, now)
	since := now.Add(-p.ResetWithin)
	if cache == nil {
		cache = &EventCache{}
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	live := map[string]bool{}
	var prevFrom time.Time
	for _, c := range j.Coverage {
		from := prevFrom
		prevFrom = c.From
		if c.To.Before(since) || !slices.ContainsFunc(remove, func(i snapshot.Info) bool {
			return !i.CreatedAt.Before(from) && !i.CreatedAt.After(c.To)
		}) {
			continue
		}
		e, _ := l.Epoch(c.Epoch)
		evs, err := s.epochEvents(ctx, e, since, cache, live)
		if err != nil {
			return snapshot.Journal{}, err
		}
		j.Resets = append(j.Resets, evs...)
	}
	for key := range cache.bySeg {
		if !live[key] {
			delete(cache.bySeg, key)
		}
	}
	j.Resets = dedupEvents(j.Resets)
	return j, nil
}

// epochEvents returns the resets of e's chain at or after since, reading
// the segments cache does not hold and noting every key used in live.
func (s *Store) epochEvents(ctx context.Context, e *journal.EpochInfo, since time.Time, cache *EventCache, live map[string]bool) ([]snapshot.Event, error) {
	var out []snapshot.Event
	chain, _ := e.Chain()
	for _, si := range chain {
		if si.LastTime.Before(since) {
			continue
		}
		live[si.Key] = true
		evs, ok := cache.bySeg[si.Key]
		if !ok {
			seg, err := s.Journal().ReadSegment(ctx, si)
			if errors.Is(err, journal.ErrJournalBroken) {
				continue // deleted since listed (compaction); verify reports damage
			}
			if errors.Is(err, snapshot.ErrEncrypted) {
				return nil, fmt.Errorf("%w: retention needs the key to read the resets of epoch %s (or keep-reset-within 0)", err, e.ID)
			}
			if err != nil {
				return nil, err
			}
			evs = []snapshot.Event{}
			for _, en := range seg.Entries {
				if en.Kind == journal.EntryEvent {
					evs = append(evs, snapshot.Event{
						Time: journal.FromMs(en.Time), Connector: en.Connector, Group: en.Group, Kind: en.Reason, Count: int(en.Count),
						Before: journal.FromMs(en.Before), Epoch: e.ID, Segment: seg.LastSeq,
					})
				}
			}
			if cache.bySeg == nil {
				cache.bySeg = map[string][]snapshot.Event{}
			}
			cache.bySeg[si.Key] = evs
		}
		for _, ev := range evs {
			if !ev.Time.Before(since) {
				out = append(out, ev)
			}
		}
	}
	return out, nil
}

// dedupEvents sorts evs by time and drops the same reset seen twice (by
// two overlapping epochs, or a raw and a merged segment).
func dedupEvents(evs []snapshot.Event) []snapshot.Event {
	type key struct {
		conn, group, kind, epoch string
		before                   time.Time
	}
	slices.SortStableFunc(evs, func(a, b snapshot.Event) int { return a.Time.Compare(b.Time) })
	var out []snapshot.Event
	seen := map[key]bool{}
	for _, ev := range evs {
		k := key{ev.Connector, ev.Group, ev.Kind, ev.Epoch, ev.Before}
		if !seen[k] {
			seen[k] = true
			out = append(out, ev)
		}
	}
	return out
}
