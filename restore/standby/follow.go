package standby

// This file is the Follower: LatestState kept between calls, so that a
// daemon syncing every second applies only the journal segments written
// since its last sync instead of replaying the epoch from its base
// snapshot each time (a replay grows with the epoch until the next full
// snapshot).

import (
	"context"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Reads of a Follower (Follower.Latest) and of a Syncer's live view
// (Report.LiveRead).
const (
	// ReadFull: read whole (the first call, after a restart, an error, a
	// new epoch, or anything the kept state cannot be moved on from).
	ReadFull = "full"
	// ReadIncremental: only what was written since the last read.
	ReadIncremental = "incremental"
)

// Follower is LatestState that keeps the replayed state of the newest
// journal epoch between calls and applies only the segments written
// since. Each call gives the state LatestState gives at the same moment
// (the same snapshot, field for field): it starts over from the base
// snapshot whenever the kept state could differ from a replay from
// scratch (another epoch, segments merged or missing, a segment that does
// not link to the last applied, a record timestamped after the moment
// its segment was applied at). Not safe for concurrent use; the zero
// value is ready.
type Follower struct {
	epoch string
	base  *snapshot.Snapshot
	st    *journal.ReplayState
	// last is the last segment applied (the next must link to it), seq
	// its last sequence number; at the moment of the state built, snap.
	last *journal.Segment
	seq  uint64
	at   time.Time
	snap *snapshot.Snapshot
}

// Reset forgets the kept state: the next Latest reads it whole.
func (f *Follower) Reset() { *f = Follower{} }

// Latest is LatestState(ctx, st, keep); read says whether it replayed the
// epoch whole (ReadFull) or applied only the segments since the last call
// (ReadIncremental). A state without a journal is read whole.
func (f *Follower) Latest(ctx context.Context, st *store.Store, keep func(cluster string) bool) (snap *snapshot.Snapshot, at time.Time, read string, err error) {
	if keep == nil {
		keep = func(string) bool { return true }
	}
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return nil, time.Time{}, "", fmt.Errorf("list the store: %w", err)
	}
	l, err := st.Journal().List(ctx)
	if err != nil {
		return nil, time.Time{}, "", fmt.Errorf("read the journal's coverage: %w", err)
	}
	cluster := make(map[string]string, len(infos))
	for _, i := range infos {
		cluster[i.ID] = i.ClusterID
	}
	cov := journal.CoverageOf(infos, l)
	for i := len(cov) - 1; i >= 0; i-- {
		c := cov[i]
		if !c.BaseExists || c.Broken != "" || c.To.IsZero() || !keep(cluster[c.Epoch]) {
			continue
		}
		e, _ := l.Epoch(c.Epoch)
		plan, past, hole := e.PlanAt(c.To)
		if past != nil || hole != nil {
			break // the store's replay says what is wrong
		}
		snap, read, err := f.follow(ctx, st, e.ID, plan, c.To)
		if err != nil {
			f.Reset()
			return nil, time.Time{}, "", fmt.Errorf("read the state at %s (journal epoch %s): %w", snapshot.FmtTime(c.To), c.Epoch, err)
		}
		return snap, c.To, read, nil
	}
	f.Reset()
	snap, at, err = LatestState(ctx, st, keep)
	return snap, at, ReadFull, err
}

// follow is the state of epoch at moment at, whose replay reads plan:
// from the kept state when plan goes on from it, else from the base.
func (f *Follower) follow(ctx context.Context, st *store.Store, epoch string, plan []journal.SegmentInfo, at time.Time) (*snapshot.Snapshot, string, error) {
	read := ReadIncremental
	from := -1
	if f.epoch == epoch && f.st != nil && !at.Before(f.at) {
		if f.seq == 0 {
			from = 0
		}
		for i, si := range plan {
			if si.FirstSeq == f.seq+1 {
				from = i
			}
		}
		if len(plan) > 0 && plan[len(plan)-1].LastSeq == f.seq {
			from = len(plan)
		}
	}
	if from < 0 {
		read, from = ReadFull, 0
		if err := f.start(ctx, st, epoch); err != nil {
			return nil, "", err
		}
	}
	if from == len(plan) && f.snap != nil && f.at.Equal(at) {
		return f.snap, read, nil // nothing new
	}
	atMs := journal.Ms(at)
	var si journal.StateInfo
	for _, seg := range plan[from:] {
		s, err := st.Journal().ReadSegment(ctx, seg)
		if err != nil {
			return nil, "", err
		}
		if err := journal.CheckLink(f.last, s, seg.Key); err != nil {
			return nil, "", err
		}
		f.st.Apply(s.Entries, atMs, &si)
		f.last, f.seq = s, s.LastSeq
		if after(s.Entries, atMs) {
			// Left out now, applied by a replay to a later moment: the
			// kept state cannot be moved on from.
			defer f.Reset()
		}
	}
	snap := f.st.Build(f.base)
	snap.ID = fmt.Sprintf("at %s (snapshot %s + journal to seq %d)", snapshot.FmtTime(at), epoch, f.seq)
	snap.CreatedAt = at.UTC()
	snap.Reason = journal.ReasonAt
	f.at, f.snap = at, snap
	return snap, read, nil
}

// start reads the base snapshot and the epoch file of epoch into a new
// replay state, as the store's replay does.
func (f *Follower) start(ctx context.Context, st *store.Store, epoch string) error {
	f.Reset()
	base, _, err := st.Snapshots().GetWith(ctx, epoch, nil)
	if err != nil {
		return fmt.Errorf("read base snapshot of journal epoch %s: %w", epoch, err)
	}
	if len(base.Scope) > 0 {
		return fmt.Errorf("read base snapshot of journal epoch %s: %w: it is limited to some connectors", epoch, snapshot.ErrCorrupt)
	}
	ep, err := st.Journal().GetEpoch(ctx, epoch)
	if err != nil {
		return err
	}
	f.epoch, f.base, f.st = epoch, base, journal.NewReplayState(base)
	f.st.SetWorkers(ep.Topics)
	return nil
}

// after reports whether entries hold a change timestamped after atMs,
// which a replay to atMs leaves out.
func after(entries []journal.Entry, atMs int64) bool {
	for i := range entries {
		switch e := &entries[i]; e.Kind {
		case journal.EntrySource, journal.EntrySink, journal.EntryGroup, journal.EntryConfig:
			if e.Time > atMs {
				return true
			}
		}
	}
	return false
}
