package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Coverage returns, per epoch, the span it covers, oldest first. It
// reads only the listings of snapshots and journal.
func (h Journal) Coverage(ctx context.Context) ([]snapshot.Coverage, error) {
	s := h.s
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, err
	}
	return journal.CoverageOf(infos, l), nil
}

// StateAt returns the state of the cluster at moment at: the newest full
// snapshot at or before it of an epoch whose journal covers it, with the
// journal applied up to it. Source records are applied per partition in
// offset order and cut at the first record whose timestamp is after at (a
// prefix: a state a worker could have read); sink offsets are the last
// observed at or before at; connectors as the config topic had them at.
//
// The Snapshot it returns is what Get returns (restore, show and diff take
// it unchanged), its ID a description such as "at 2026-12-01T09:14:03Z
// (snapshot <ID> + journal to seq N)". Without a journal covering at it
// falls back to the newest full snapshot at or before at when at is before
// every epoch, and says so (StateInfo.Fallback).
//
// A moment in the future, before anything restorable or inside a gap
// between epochs is ErrNotRestorable naming the spans that are; a segment
// missing or altered on the way to at is ErrJournalBroken naming it.
func (h Journal) StateAt(ctx context.Context, at time.Time) (*snapshot.Snapshot, *journal.StateInfo, error) {
	return h.stateAt(ctx, at, "")
}

// stateAt is StateAt over the epochs and snapshots of cluster only ("":
// every cluster's; see StateAtFor).
func (h Journal) stateAt(ctx context.Context, at time.Time, only string) (*snapshot.Snapshot, *journal.StateInfo, error) {
	s := h.s
	now := time.Now()
	if at.After(now) {
		return nil, nil, fmt.Errorf("%w: %s is in the future (now is %s)", journal.ErrNotRestorable, snapshot.FmtTime(at), snapshot.FmtTime(now))
	}
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The newest epoch whose base is at or before at and whose journal
	// reaches it, listed only as far as the state at at reads (an epoch's
	// ID is its base snapshot's). A moment past the end of the newest
	// epoch's last segment, or no epoch found among the few snapshots
	// before at, takes the whole listing.
	for i, tried := len(infos)-1, 0; i >= 0 && tried < 8; i-- {
		if infos[i].CreatedAt.After(at) || !ofCluster(infos[i].ClusterID, only) {
			continue
		}
		tried++
		e, err := s.epochFor(ctx, infos[i].ID, at)
		if err != nil {
			return nil, nil, err
		}
		if !e.HasFile {
			continue
		}
		c := journal.CoverageOf(infos, &journal.JournalListing{Epochs: []journal.EpochInfo{e}})[0]
		if !at.After(c.To) {
			return s.replay(ctx, at, &e, c) // covered
		}
		newest := c.Broken == "" && s.newestEpoch(ctx, infosOf(infos[i+1:], only)) && !s.laterEpoch(ctx, e.ID)
		if !newest && !at.After(s.provenTo(ctx, &e, c)) {
			return s.replay(ctx, at, &e, c) // an idle span its flush mark covers
		}
		if newest {
			// The newest epoch, still being written if it flushed lately.
			if err := s.flushedLately(ctx, &e, c, at, now); err != nil {
				return nil, nil, err
			}
			return s.replay(ctx, at, &e, c)
		}
		break
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, nil, err
	}
	cov := covOf(journal.CoverageOf(infos, l), infos, only)
	infos = infosOf(infos, only)
	s.extendIdle(ctx, l, cov, at)
	pick, gone := -1, -1
	for i, c := range cov {
		// A moment after the newest epoch's last segment belongs to that
		// epoch too (its journal is behind the moment, or stopped): with
		// its base gone it is refused as inside it, not called a gap.
		if !c.BaseExists && !c.From.After(at) && (!at.After(c.To) || i == len(cov)-1) {
			gone = i
		}
		if !c.BaseExists || c.From.After(at) {
			continue
		}
		to := c.To
		if i == len(cov)-1 && c.Broken == "" && at.After(to) {
			// The newest epoch, still being written if it flushed lately.
			e, _ := l.Epoch(c.Epoch)
			if err := s.flushedLately(ctx, e, c, at, now); err != nil {
				return nil, nil, err
			}
			to = now
		}
		if !at.After(to) {
			pick = i
		}
	}
	if pick >= 0 {
		e, _ := l.Epoch(cov[pick].Epoch)
		return s.replay(ctx, at, e, cov[pick])
	}
	if gone >= 0 {
		// As a damaged base is refused: an older snapshot in its place
		// would silently lose everything the epoch recorded.
		return nil, nil, baseGone(at, cov[gone].Epoch, infos)
	}
	return s.fallback(ctx, at, infos, cov)
}

// flushedLately checks that the journal of the newest epoch e, which ends
// before at, is still being written: its last flush (see journalFlushed)
// is at most two intervals before at. A journal that stopped (the daemon
// killed, the store unreachable) is ErrNotRestorable: the moment is not
// covered yet. A journal that did not record its interval is taken as
// running while its last segment is younger than JournalLive.
func (s *Store) flushedLately(ctx context.Context, e *journal.EpochInfo, c snapshot.Coverage, at, now time.Time) error {
	last, interval, err := s.journalFlushed(ctx, e, c)
	if err != nil {
		return err
	}
	if interval > 0 && !at.After(last.Add(2*interval)) {
		return nil
	}
	if interval <= 0 && now.Sub(c.To) <= snapshot.JournalLive {
		return nil
	}
	return fmt.Errorf("%w: %s is not covered yet: the journal's last flush was at %s (epoch %s, segment %d) and it flushes every %v; is the daemon journaling (running, leading, reaching the store)? Pick a moment at or before %s, or restore a snapshot by ID",
		journal.ErrNotRestorable, snapshot.FmtTime(at), snapshot.FmtTime(last), e.ID, c.LastSeq, cmp.Or(interval, snapshot.JournalHeartbeat), snapshot.FmtTime(last))
}

// newestEpoch reports whether none of the snapshots newer than an
// epoch's base (a few undo or hand-taken ones at most) starts an epoch:
// then that epoch is the newest, the one the daemon still writes.
func (s *Store) newestEpoch(ctx context.Context, newer []snapshot.Info) bool {
	if len(newer) > 8 {
		return false // the whole listing decides
	}
	for _, i := range newer {
		if ok, err := s.exists(ctx, journal.JournalPrefix+i.ID+"/"+epochFile); err != nil || ok {
			return false
		}
	}
	return true
}

// laterEpoch reports whether the journal holds an epoch after id (whose
// base snapshot is gone, when newestEpoch found none), with one LIST of
// the journal's top level; true when it cannot tell (the whole listing
// decides then).
func (s *Store) laterEpoch(ctx context.Context, id string) bool {
	later := false
	err := s.eachObject(ctx, &blob.ListOptions{Prefix: journal.JournalPrefix, Delimiter: "/"}, func(o *blob.ListObject) error {
		e := strings.TrimSuffix(strings.TrimPrefix(o.Key, journal.JournalPrefix), "/")
		if _, err := snapshot.ParseID(e); err == nil && o.IsDir && e > id {
			later = true
		}
		return nil
	})
	return err != nil || later
}

// fallback is StateAt for a moment no epoch covers.
func (s *Store) fallback(ctx context.Context, at time.Time, infos []snapshot.Info, cov []snapshot.Coverage) (*snapshot.Snapshot, *journal.StateInfo, error) {
	spans := journal.DescribeCoverage(cov)
	var base *snapshot.Info
	for i := range infos {
		if !infos[i].CreatedAt.After(at) && infos[i].Kind == snapshot.KindFull {
			base = &infos[i]
		}
	}
	for _, c := range cov {
		if c.BaseExists && c.From.Before(at) {
			// After the first epoch began: between epochs, or past the end.
			for _, c := range cov {
				if c.Broken != "" && c.From.Before(at) {
					// Say what still restores: the moments before the hole,
					// and every epoch after it (the next snapshot on).
					return nil, nil, fmt.Errorf("%w: %s: the journal of epoch %s cannot be crossed: %s (restorable: %s); pick a moment in one of those spans, or restore a snapshot by ID",
						journal.ErrNotRestorable, snapshot.FmtTime(at), c.Epoch, c.Broken, spans)
				}
			}
			return nil, nil, fmt.Errorf("%w: %s is inside a gap of the journal (restorable: %s); pick a moment in one of those spans, or restore a snapshot by ID", journal.ErrNotRestorable, snapshot.FmtTime(at), spans)
		}
	}
	if base == nil {
		if len(infos) == 0 {
			return nil, nil, fmt.Errorf("%w: %s: the store holds no snapshot", journal.ErrNotRestorable, snapshot.FmtTime(at))
		}
		for _, i := range infos {
			if i.Kind == snapshot.KindFull {
				return nil, nil, fmt.Errorf("%w: %s is before the earliest restorable moment, %s (snapshot %s)", journal.ErrNotRestorable, snapshot.FmtTime(at), snapshot.FmtTime(i.CreatedAt), i.ID)
			}
		}
		return nil, nil, fmt.Errorf("%w: %s: the store holds no full snapshot", journal.ErrNotRestorable, snapshot.FmtTime(at))
	}
	snap, info, err := s.Snapshots().GetWith(ctx, base.ID, nil)
	if err != nil {
		return nil, nil, err
	}
	si := &journal.StateInfo{At: at, Base: info, Fallback: true}
	si.Precision = []string{fmt.Sprintf("everything: as snapshot %s had it at %s (%s before the moment)", base.ID, snapshot.FmtTime(info.CreatedAt), at.Sub(info.CreatedAt).Round(time.Second))}
	note := "no journal covers this moment: this is the newest snapshot at or before it"
	if len(cov) > 0 {
		note += "; the journal covers " + spans
	}
	si.Notes = append(si.Notes, note)
	out := *snap
	out.ID = fmt.Sprintf("at %s (snapshot %s, no journal)", snapshot.FmtTime(at), base.ID)
	return &out, si, nil
}

// replay builds the state at at from epoch e's base snapshot and segments.
func (s *Store) replay(ctx context.Context, at time.Time, e *journal.EpochInfo, c snapshot.Coverage) (*snapshot.Snapshot, *journal.StateInfo, error) {
	// The base is read while the first segments are (eachSegment reads
	// ahead); they are applied once it is.
	type baseRead struct {
		snap *snapshot.Snapshot
		info snapshot.Info
		err  error
	}
	bch := make(chan baseRead, 1)
	go func() {
		b, i, err := s.Snapshots().GetWith(ctx, e.ID, nil)
		bch <- baseRead{b, i, err}
	}()
	var (
		base    *snapshot.Snapshot
		st      *journal.ReplayState
		baseErr error
	)
	si := &journal.StateInfo{At: at, Epoch: e.ID}
	readBase := func() error {
		r := <-bch
		switch {
		case r.err != nil:
			baseErr = fmt.Errorf("read base snapshot of journal epoch %s: %w", e.ID, r.err)
		case len(r.snap.Scope) > 0:
			baseErr = fmt.Errorf("read base snapshot of journal epoch %s: %w: it is limited to some connectors", e.ID, snapshot.ErrCorrupt)
		default:
			base, si.Base, st = r.snap, r.info, journal.NewReplayState(r.snap)
			ep, err := s.Journal().GetEpoch(ctx, e.ID)
			if err != nil {
				// As verify: an epoch file that cannot be read is no
				// journal to restore from (it names the worker topics).
				baseErr = fmt.Errorf("%w; 'offsetkeeper verify' fails it too: restore a snapshot by its ID instead ('offsetkeeper list' shows them)", err)
				break
			}
			st.SetWorkers(ep.Topics)
		}
		return baseErr
	}
	plan, past, hole := e.PlanAt(at)
	atMs := journal.Ms(at)
	lastSeen := c.From
	// restorable is the last moment the journal read so far restores: the
	// time of the last segment applied.
	restorable := c.From
	read := map[int]int{}
	err := s.eachSegment(ctx, plan, func(seg *journal.Segment) (bool, error) {
		if st == nil && readBase() != nil {
			return false, baseErr
		}
		if seg.FirstTime.After(at.Add(journal.LateRecords)) {
			return false, nil
		}
		// A merged segment is in the plan only when its time, the latest of
		// everything it holds, is at or before the moment: applied whole,
		// it gives what its raw segments give.
		st.Apply(seg.Entries, atMs, si)
		si.Seq = seg.LastSeq
		restorable = seg.LastTime
		read[seg.Level]++
		if seg.Level > journal.LevelRaw {
			si.Merged++
		}
		if !seg.LastTime.After(at) {
			lastSeen = seg.LastTime
		}
		return true, nil
	})
	if baseErr == nil && st == nil && err == nil {
		err = readBase()
	}
	if baseErr != nil {
		return nil, nil, baseErr
	}
	if err == nil && past != nil {
		st.Notes = append(st.Notes, journal.MergedNote(*past, lastSeen))
	}
	if si.Merged > 0 {
		var parts []string
		for _, level := range slices.Backward(slices.Sorted(maps.Keys(read))) {
			parts = append(parts, fmt.Sprintf("%d of level %d", read[level], level))
		}
		st.Notes = append(st.Notes, "journal segments read: "+strings.Join(parts, ", ")+" (levels 1 and 2 are merged; see docs/journal.md)")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w; restore refuses to cross it: %s", err, s.lastRestorable(ctx, restorable, e, c))
	}
	if hole != nil && c.To.Before(at) {
		return nil, nil, fmt.Errorf("%w; restore refuses to cross it", hole)
	}
	snap := st.Build(base)
	snap.ID = fmt.Sprintf("at %s (snapshot %s + journal to seq %d)", snapshot.FmtTime(at), e.ID, si.Seq)
	snap.CreatedAt = at.UTC()
	snap.Reason = journal.ReasonAt
	si.Precision = []string{
		fmt.Sprintf("source offsets: record time; every offsets topic partition cut at its first record after %s", snapshot.FmtTime(at)),
		fmt.Sprintf("sink offsets: as observed at %s, at or before the moment (the journal reads the groups once per interval)", snapshot.FmtTime(lastSeen)),
		"connectors: config topic record time",
	}
	si.Notes = append(si.Notes, st.Notes...)
	return snap, si, nil
}

// lastRestorable says what is restorable before a damaged segment: the
// latest moment whose replay stops short of it (late records are read up
// to journal.LateRecords past a moment, so a minute before the last good
// segment's time, tried once), else the epoch's base snapshot by ID.
func (s *Store) lastRestorable(ctx context.Context, good time.Time, e *journal.EpochInfo, c snapshot.Coverage) string {
	byID := fmt.Sprintf("restore its base snapshot %s by ID", e.ID)
	m := good.Add(-journal.LateRecords - time.Millisecond)
	if m.Before(c.From) || ctx.Value(journal.ProbingKey{}) != nil {
		return byID
	}
	if _, _, err := s.replay(context.WithValue(ctx, journal.ProbingKey{}, true), m, e, c); err != nil {
		return byID
	}
	return fmt.Sprintf("the last restorable moment before it is %s (--at %s), or %s", snapshot.FmtTime(m), m.UTC().Format(time.RFC3339Nano), byID)
}

// Head reads epoch id whole, checking every segment and the chain,
// and returns where it stands.
func (jh Journal) Head(ctx context.Context, id string) (*journal.JournalHead, error) {
	s := jh.s
	ep, err := s.Journal().GetEpoch(ctx, id)
	if err != nil {
		return nil, err
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, err
	}
	e, ok := l.Epoch(id)
	if !ok {
		return nil, fmt.Errorf("read journal epoch %s: %w", id, snapshot.ErrNotFound)
	}
	base, _, err := s.Snapshots().GetWith(ctx, id, nil)
	if err != nil {
		return nil, fmt.Errorf("read base snapshot of journal epoch %s: %w", id, err)
	}
	chain, _, hole := e.PlanAt(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if hole != nil {
		return nil, hole
	}
	st := journal.NewReplayState(base)
	var prev *journal.Segment
	si := &journal.StateInfo{}
	err = s.eachSegment(ctx, chain, func(seg *journal.Segment) (bool, error) {
		st.Apply(seg.Entries, math.MaxInt64, si)
		prev = seg
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	h := &journal.JournalHead{Epoch: ep, State: st.Build(base), Last: prev, Positions: slices.Clone(ep.Topics)}
	if prev != nil {
		pos := map[string]map[int32]int64{}
		for _, en := range prev.Entries {
			if en.Kind == journal.EntryPosition {
				if pos[en.Topic] == nil {
					pos[en.Topic] = map[int32]int64{}
				}
				pos[en.Topic][en.Partition] = en.Offset
			}
		}
		for i := range h.Positions {
			t := &h.Positions[i]
			start := slices.Clone(t.Start)
			for j := range start {
				if n, ok := pos[t.Name][start[j].Partition]; ok {
					start[j].Next = n
				}
			}
			t.Start = start
		}
	}
	return h, nil
}

// baseGone is the refusal of a moment inside the journal of epoch, whose
// base snapshot was deleted: the journal cannot be replayed without it.
func baseGone(at time.Time, epoch string, infos []snapshot.Info) error {
	advice := "restore a snapshot by its ID instead ('offsetkeeper list' shows them)"
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].Kind == snapshot.KindFull && !infos[i].CreatedAt.After(at) {
			advice = fmt.Sprintf("to restore the newest snapshot before it instead, run: offsetkeeper restore %s --dry-run", infos[i].ID)
			break
		}
	}
	return fmt.Errorf("%w: %s is inside journal epoch %s, whose base snapshot was deleted: the journal cannot be replayed without it; %s",
		journal.ErrNotRestorable, snapshot.FmtTime(at), epoch, advice)
}
