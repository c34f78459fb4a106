package snapshot

// This file computes the state of the cluster at a moment from a full
// snapshot and the journal after it (Store.StateAt).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// JournalLive is how far the last segment of the newest epoch may lie
// behind a moment for that moment to count as covered: the daemon writes a
// segment at least every JournalHeartbeat, even when nothing changed, so a
// journal whose last segment is younger than this is running.
const JournalLive = 2*JournalHeartbeat + 30*time.Second

// JournalHeartbeat is the longest the daemon goes without writing a
// segment while it journals: a segment with no changes proves that nothing
// changed.
const JournalHeartbeat = time.Minute

// lateRecords is how long after a moment a segment may still hold a
// record whose timestamp is at or before it (a producer's clock behind the
// daemon's): segments that begin later than this after the moment are not
// read. A record appended later than that is never part of the state.
const lateRecords = time.Minute

// ReasonAt is the Reason of a Snapshot made by StateAt.
const ReasonAt = "at"

// StateInfo says how StateAt made a state.
type StateInfo struct {
	// At is the moment asked for; Base the full snapshot the state starts
	// from; Epoch the journal epoch read ("" for a plain fallback to a
	// snapshot), up to segment Seq.
	At    time.Time
	Base  Info
	Epoch string
	Seq   uint64
	// Records, SinkObservations and ConfigRecords count the journal
	// entries applied; Merged the merged segments read.
	Records, SinkObservations, ConfigRecords, Merged int
	// Precision says how exact each part is; Notes what else to know.
	Precision []string
	Notes     []string
	// Fallback is set when no journal covers At: the state is the newest
	// full snapshot at or before At.
	Fallback bool
}

// Coverage is one span of time the store can restore to exactly: an epoch
// from its base snapshot to its last segment.
type Coverage struct {
	Epoch      string    `json:"epoch"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	Segments   int       `json:"segments"`
	Bytes      int64     `json:"bytes"`
	LastSeq    uint64    `json:"last_seq"`
	Broken     string    `json:"broken,omitempty"`
	BaseExists bool      `json:"base_exists"`
}

// JournalCoverage returns, per epoch, the span it covers, oldest first. It
// reads only the listings of snapshots and journal.
func (s *Store) JournalCoverage(ctx context.Context) ([]Coverage, error) {
	infos, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.ListJournal(ctx)
	if err != nil {
		return nil, err
	}
	return coverageOf(infos, l), nil
}

func coverageOf(infos []Info, l *JournalListing) []Coverage {
	byID := make(map[string]Info, len(infos))
	for _, i := range infos {
		byID[i.ID] = i
	}
	var out []Coverage
	for _, e := range l.Epochs {
		if !e.HasFile {
			continue
		}
		base, ok := byID[e.ID]
		from, _ := ParseID(e.ID)
		if ok {
			from = base.CreatedAt
		}
		c := Coverage{Epoch: e.ID, From: from, To: from, BaseExists: ok}
		chain, hole := e.Chain()
		for _, si := range chain {
			c.Segments++
			c.Bytes += si.Size
			c.LastSeq = si.LastSeq
			if si.LastTime.After(c.To) {
				c.To = si.LastTime
			}
		}
		if hole != nil {
			c.Broken = hole.Error()
		}
		out = append(out, c)
	}
	return out
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
func (s *Store) StateAt(ctx context.Context, at time.Time) (*Snapshot, *StateInfo, error) {
	now := time.Now()
	if at.After(now) {
		return nil, nil, fmt.Errorf("%w: %s is in the future (now is %s)", ErrNotRestorable, fmtTime(at), fmtTime(now))
	}
	infos, err := s.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The newest epoch whose base is at or before at and whose journal
	// reaches it, listed only as far as the state at at reads (an epoch's
	// ID is its base snapshot's). A moment past the end of the newest
	// epoch's last segment, or no epoch found among the few snapshots
	// before at, takes the whole listing.
	for i, tried := len(infos)-1, 0; i >= 0 && tried < 8; i-- {
		if infos[i].CreatedAt.After(at) {
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
		c := coverageOf(infos, &JournalListing{Epochs: []EpochInfo{e}})[0]
		if !at.After(c.To) {
			return s.replay(ctx, at, &e, c) // covered
		}
		if c.Broken == "" && s.newestEpoch(ctx, infos[i+1:]) {
			// The newest epoch, still being written if it flushed lately.
			if err := s.flushedLately(ctx, &e, c, at, now); err != nil {
				return nil, nil, err
			}
			return s.replay(ctx, at, &e, c)
		}
		break
	}
	l, err := s.ListJournal(ctx)
	if err != nil {
		return nil, nil, err
	}
	cov := coverageOf(infos, l)
	pick := -1
	for i, c := range cov {
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
	return s.fallback(ctx, at, infos, cov)
}

// flushedLately checks that the journal of the newest epoch e, which ends
// before at, is still being written: its last flush (see journalFlushed)
// is at most two intervals before at. A journal that stopped (the daemon
// killed, the store unreachable) is ErrNotRestorable: the moment is not
// covered yet. A journal that did not record its interval is taken as
// running while its last segment is younger than JournalLive.
func (s *Store) flushedLately(ctx context.Context, e *EpochInfo, c Coverage, at, now time.Time) error {
	last, interval, err := s.journalFlushed(ctx, e, c)
	if err != nil {
		return err
	}
	if interval > 0 && !at.After(last.Add(2*interval)) {
		return nil
	}
	if interval <= 0 && now.Sub(c.To) <= JournalLive {
		return nil
	}
	return fmt.Errorf("%w: %s is not covered yet: the journal's last flush was at %s (epoch %s, segment %d) and it flushes every %v; is the daemon journaling (running, leading, reaching the store)? Pick a moment at or before %s, or restore a snapshot by ID",
		ErrNotRestorable, fmtTime(at), fmtTime(last), e.ID, c.LastSeq, cmp.Or(interval, JournalHeartbeat), fmtTime(last))
}

// newestEpoch reports whether none of the snapshots newer than an
// epoch's base (a few undo or hand-taken ones at most) starts an epoch:
// then that epoch is the newest, the one the daemon still writes.
func (s *Store) newestEpoch(ctx context.Context, newer []Info) bool {
	if len(newer) > 8 {
		return false // the whole listing decides
	}
	for _, i := range newer {
		if ok, err := s.exists(ctx, journalPrefix+i.ID+"/"+epochFile); err != nil || ok {
			return false
		}
	}
	return true
}

// fallback is StateAt for a moment no epoch covers.
func (s *Store) fallback(ctx context.Context, at time.Time, infos []Info, cov []Coverage) (*Snapshot, *StateInfo, error) {
	spans := describeCoverage(cov)
	var base *Info
	for i := range infos {
		if !infos[i].CreatedAt.After(at) && infos[i].Kind == KindFull {
			base = &infos[i]
		}
	}
	for _, c := range cov {
		if c.BaseExists && c.From.Before(at) {
			// After the first epoch began: between epochs, or past the end.
			for _, c := range cov {
				if c.Broken != "" && c.From.Before(at) {
					return nil, nil, fmt.Errorf("%w: %s: the journal of epoch %s cannot be crossed: %s", ErrNotRestorable, fmtTime(at), c.Epoch, c.Broken)
				}
			}
			return nil, nil, fmt.Errorf("%w: %s is inside a gap of the journal (restorable: %s); pick a moment in one of those spans, or restore a snapshot by ID", ErrNotRestorable, fmtTime(at), spans)
		}
	}
	if base == nil {
		if len(infos) == 0 {
			return nil, nil, fmt.Errorf("%w: %s: the store holds no snapshot", ErrNotRestorable, fmtTime(at))
		}
		for _, i := range infos {
			if i.Kind == KindFull {
				return nil, nil, fmt.Errorf("%w: %s is before the earliest restorable moment, %s (snapshot %s)", ErrNotRestorable, fmtTime(at), fmtTime(i.CreatedAt), i.ID)
			}
		}
		return nil, nil, fmt.Errorf("%w: %s: the store holds no full snapshot", ErrNotRestorable, fmtTime(at))
	}
	snap, info, err := s.Get(ctx, base.ID)
	if err != nil {
		return nil, nil, err
	}
	si := &StateInfo{At: at, Base: info, Fallback: true}
	si.Precision = []string{fmt.Sprintf("everything: as snapshot %s had it at %s (%s before the moment)", base.ID, fmtTime(info.CreatedAt), at.Sub(info.CreatedAt).Round(time.Second))}
	note := "no journal covers this moment: this is the newest snapshot at or before it"
	if len(cov) > 0 {
		note += "; the journal covers " + spans
	}
	si.Notes = append(si.Notes, note)
	out := *snap
	out.ID = fmt.Sprintf("at %s (snapshot %s, no journal)", fmtTime(at), base.ID)
	return &out, si, nil
}

func describeCoverage(cov []Coverage) string {
	var parts []string
	for _, c := range cov {
		if c.BaseExists {
			parts = append(parts, fmtTime(c.From)+" to "+fmtTime(c.To))
		}
	}
	if len(parts) == 0 {
		return "no span (no journal epoch has its snapshot)"
	}
	return strings.Join(parts, ", ")
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// replay builds the state at at from epoch e's base snapshot and segments.
func (s *Store) replay(ctx context.Context, at time.Time, e *EpochInfo, c Coverage) (*Snapshot, *StateInfo, error) {
	// The base is read while the first segments are (eachSegment reads
	// ahead); they are applied once it is.
	type baseRead struct {
		snap *Snapshot
		info Info
		err  error
	}
	bch := make(chan baseRead, 1)
	go func() {
		b, i, err := s.Get(ctx, e.ID)
		bch <- baseRead{b, i, err}
	}()
	var (
		base    *Snapshot
		st      *replayState
		baseErr error
	)
	si := &StateInfo{At: at, Epoch: e.ID}
	readBase := func() error {
		r := <-bch
		switch {
		case r.err != nil:
			baseErr = fmt.Errorf("read base snapshot of journal epoch %s: %w", e.ID, r.err)
		case len(r.snap.Scope) > 0:
			baseErr = fmt.Errorf("read base snapshot of journal epoch %s: %w: it is limited to some connectors", e.ID, ErrCorrupt)
		default:
			base, si.Base, st = r.snap, r.info, newReplayState(r.snap)
			if ep, err := s.GetEpoch(ctx, e.ID); err == nil {
				st.setWorkers(ep.Topics)
			}
		}
		return baseErr
	}
	plan, past, hole := e.PlanAt(at)
	atMs := Ms(at)
	lastSeen := c.From
	// restorable is the last moment the journal read so far restores: the
	// time of the last segment applied.
	restorable := c.From
	read := map[int]int{}
	err := s.eachSegment(ctx, plan, func(seg *Segment) (bool, error) {
		if st == nil && readBase() != nil {
			return false, baseErr
		}
		if seg.FirstTime.After(at.Add(lateRecords)) {
			return false, nil
		}
		// A merged segment is in the plan only when its time, the latest of
		// everything it holds, is at or before the moment: applied whole,
		// it gives what its raw segments give.
		st.apply(seg.Entries, atMs, si)
		si.Seq = seg.LastSeq
		restorable = seg.LastTime
		read[seg.Level]++
		if seg.Level > LevelRaw {
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
		st.notes = append(st.notes, mergedNote(*past, lastSeen))
	}
	if si.Merged > 0 {
		var parts []string
		for _, level := range slices.Backward(slices.Sorted(maps.Keys(read))) {
			parts = append(parts, fmt.Sprintf("%d of level %d", read[level], level))
		}
		st.notes = append(st.notes, "journal segments read: "+strings.Join(parts, ", ")+" (levels 1 and 2 are merged; see docs/journal.md)")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w; restore refuses to cross it: %s", err, s.lastRestorable(ctx, restorable, e, c))
	}
	if hole != nil && c.To.Before(at) {
		return nil, nil, fmt.Errorf("%w; restore refuses to cross it", hole)
	}
	snap := st.build(base)
	snap.ID = fmt.Sprintf("at %s (snapshot %s + journal to seq %d)", fmtTime(at), e.ID, si.Seq)
	snap.CreatedAt = at.UTC()
	snap.Reason = ReasonAt
	si.Precision = []string{
		fmt.Sprintf("source offsets: record time; every offsets topic partition cut at its first record after %s", fmtTime(at)),
		fmt.Sprintf("sink offsets: as observed at %s, at or before the moment (the journal reads the groups once per interval)", fmtTime(lastSeen)),
		"connectors: config topic record time",
	}
	si.Notes = append(si.Notes, st.notes...)
	return snap, si, nil
}

// probingKey marks the context of lastRestorable's trial replay.
type probingKey struct{}

// lastRestorable says what is restorable before a damaged segment: the
// latest moment whose replay stops short of it (late records are read up
// to lateRecords past a moment, so a minute before the last good
// segment's time, tried once), else the epoch's base snapshot by ID.
func (s *Store) lastRestorable(ctx context.Context, good time.Time, e *EpochInfo, c Coverage) string {
	byID := fmt.Sprintf("restore its base snapshot %s by ID", e.ID)
	m := good.Add(-lateRecords - time.Millisecond)
	if m.Before(c.From) || ctx.Value(probingKey{}) != nil {
		return byID
	}
	if _, _, err := s.replay(context.WithValue(ctx, probingKey{}, true), m, e, c); err != nil {
		return byID
	}
	return fmt.Sprintf("the last restorable moment before it is %s (--at %s), or %s", fmtTime(m), m.UTC().Format(time.RFC3339Nano), byID)
}

// replayState is the state being rebuilt.
type replayState struct {
	views   map[string]*keyview.TopicView
	nparts  map[string]int32
	ends    map[string]map[int32]int64
	cut     map[string]map[int32]bool
	groups  map[string]*SinkGroup
	sinks   map[string]map[SinkTP]SinkOffset
	conns   map[string]Connector
	confCut bool
	notes   []string
	// ownTopics are the offsets topics connectors name, not the worker's.
	ownTopics map[string]bool
}

// setWorkers marks the offsets topics that are not the worker's.
func (st *replayState) setWorkers(topics []EpochTopic) {
	st.ownTopics = map[string]bool{}
	for _, t := range topics {
		if t.Role == RoleOffsets && !t.Worker {
			st.ownTopics[t.Name] = true
		}
	}
}

// readable says whether a capture would read offsets topic name: a worker
// topic, or one a connector with a config names.
func (st *replayState) readable(name string) bool {
	if !st.ownTopics[name] {
		return true
	}
	for _, c := range st.conns {
		if c.HasConfig && c.OffsetsTopic == name {
			return true
		}
	}
	return false
}

type SinkTP struct {
	Topic string
	Part  int32
}

func newReplayState(base *Snapshot) *replayState {
	st := &replayState{
		views: map[string]*keyview.TopicView{}, nparts: map[string]int32{}, ends: map[string]map[int32]int64{},
		cut: map[string]map[int32]bool{}, groups: map[string]*SinkGroup{}, sinks: map[string]map[SinkTP]SinkOffset{},
		conns: map[string]Connector{},
	}
	for _, t := range base.Topics {
		if t.Role != RoleOffsets {
			continue
		}
		v := keyview.NewTopicView(t.Name)
		st.views[t.Name] = v
		st.nparts[t.Name] = int32(len(t.Partitions))
		st.ends[t.Name] = map[int32]int64{}
		st.cut[t.Name] = map[int32]bool{}
		for _, p := range t.Partitions {
			v.Parts[p.Partition] = keyview.NewPartView(p.StartOffset)
			v.Parts[p.Partition].Next = p.EndOffset
			st.ends[t.Name][p.Partition] = p.EndOffset
		}
	}
	for _, o := range base.SourceOffsets {
		if v := st.views[o.Topic]; v != nil && v.Parts[o.Partition] != nil {
			v.Parts[o.Partition].Set(o.Key, o.Value, o.Offset)
		}
	}
	for _, g := range base.SinkGroups {
		g := g
		st.groups[g.Group] = &g
		m := map[SinkTP]SinkOffset{}
		for _, o := range g.Offsets {
			m[SinkTP{o.Topic, o.Partition}] = o
		}
		st.sinks[g.Group] = m
	}
	for _, c := range base.Connectors {
		if c.HasConfig {
			st.conns[c.Name] = c
		}
	}
	return st
}

// apply applies one segment's entries that are at or before atMs.
func (st *replayState) apply(entries []Entry, atMs int64, si *StateInfo) {
	for i := range entries {
		e := &entries[i]
		switch e.Kind {
		case EntrySource:
			v := st.views[e.Topic]
			if v == nil {
				continue
			}
			pv := v.Parts[e.Partition]
			if pv == nil || st.cut[e.Topic][e.Partition] || e.Offset < pv.Next {
				continue
			}
			if e.Time > atMs {
				st.cut[e.Topic][e.Partition] = true
				continue
			}
			if e.Value == nil {
				pv.Remove(e.Key)
			} else {
				pv.Set(e.Key, e.Value, e.Offset)
			}
			pv.Next = e.Offset + 1
			si.Records++
		case EntrySink:
			if e.Time > atMs {
				continue
			}
			m := st.sinks[e.Group]
			if m == nil {
				m = map[SinkTP]SinkOffset{}
				st.sinks[e.Group] = m
			}
			if e.Deleted {
				delete(m, SinkTP{e.Topic, e.Partition})
			} else {
				m[SinkTP{e.Topic, e.Partition}] = SinkOffset{Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, LeaderEpoch: e.LeaderEpoch, Metadata: e.Metadata, LastConsumed: e.LastConsumed}
			}
			si.SinkObservations++
		case EntryGroup:
			if e.Time > atMs {
				continue
			}
			if e.Deleted {
				delete(st.groups, e.Group)
				delete(st.sinks, e.Group)
				continue
			}
			st.groups[e.Group] = &SinkGroup{Group: e.Group, Connector: e.Connector, State: e.State, Members: int(e.Members)}
			if st.sinks[e.Group] == nil {
				st.sinks[e.Group] = map[SinkTP]SinkOffset{}
			}
		case EntryConfig:
			if st.confCut || e.Time > atMs {
				st.confCut = true
				continue
			}
			if e.Deleted {
				delete(st.conns, e.Connector)
			} else {
				c := *e.Conn
				c.Name = e.Connector
				c.Config = configOf(e, st.conns[e.Connector].Config)
				st.conns[e.Connector] = c
			}
			si.ConfigRecords++
		case EntryGap:
			if e.Time <= atMs && atMs <= e.Until {
				st.notes = append(st.notes, fmt.Sprintf("the journal did not observe the sink groups from %s to %s (%s): sink offsets are those observed before", fmtTime(fromMs(e.Time)), fmtTime(fromMs(e.Until)), e.Reason))
			}
		}
	}
}

// build makes the Snapshot, as Capture would have made it at that state.
func (st *replayState) build(base *Snapshot) *Snapshot {
	snap := &Snapshot{
		Version: Version, ProgramVersion: base.ProgramVersion, ClusterID: base.ClusterID,
		SourceOffsets: []SourceOffset{}, SinkGroups: []SinkGroup{}, Connectors: []Connector{},
	}
	conns := map[string]*Connector{}
	for name, c := range st.conns {
		c := c
		conns[name] = &c
	}
	for _, t := range base.Topics {
		if t.Role == RoleOffsets && !st.readable(t.Name) {
			continue
		}
		t2 := Topic{Name: t.Name, Role: t.Role, Partitions: slices.Clone(t.Partitions)}
		if v := st.views[t.Name]; v != nil {
			for i := range t2.Partitions {
				if pv := v.Parts[t2.Partitions[i].Partition]; pv != nil {
					t2.Partitions[i].EndOffset = pv.Next
				}
			}
		}
		snap.Topics = append(snap.Topics, t2)
	}
	b := OffsetBuilder{InScope: func(string) bool { return true }, Connectors: conns, Names: map[string]string{}}
	var names []string
	for n := range st.views {
		names = append(names, n)
	}
	sort.Strings(names)
	var warnings []string
	unparsed := 0
	for _, name := range names {
		if !st.readable(name) {
			continue
		}
		v := st.views[name]
		var suspects []string
		for _, p := range SortedPartitions(v.Parts) {
			from := len(snap.SourceOffsets)
			var sus []string
			snap.SourceOffsets, sus = b.Build(snap.SourceOffsets, name, p, st.nparts[name], v.Parts[p])
			suspects = append(suspects, sus...)
			for i := from; i < len(snap.SourceOffsets); i++ {
				if o := &snap.SourceOffsets[i]; o.ParseError != "" {
					unparsed++
				} else {
					b.Register(o.Connector)
				}
			}
		}
		warnings = append(warnings, duplicateWarnings(v, suspects)...)
	}
	if unparsed > 0 {
		warnings = append(warnings, CountWarning(unparsed, "offsets topic key is not [connector, {partition}] and was kept raw", "offsets topic keys are not [connector, {partition}] and were kept raw"))
	}
	for name, g := range st.groups {
		sg := *g
		sg.Offsets = []SinkOffset{}
		for _, o := range st.sinks[name] {
			sg.Offsets = append(sg.Offsets, o)
		}
		snap.SinkGroups = append(snap.SinkGroups, sg)
		if sg.Connector != "" && conns[sg.Connector] == nil {
			conns[sg.Connector] = &Connector{Name: sg.Connector, Type: TypeSink, Group: sg.Group, Tasks: -1}
		}
	}
	for _, c := range conns {
		snap.Connectors = append(snap.Connectors, *c)
	}
	// Warnings the base had about its config (a missing topic) still hold.
	for _, w := range base.Warnings {
		if strings.HasPrefix(w, "config topic ") || strings.HasPrefix(w, "offsets topic ") {
			warnings = append(warnings, w)
		}
	}
	sort.Strings(warnings)
	snap.Warnings = warnings
	snap.Normalize()
	return snap
}

// IsNotRestorable reports whether err says a moment cannot be restored
// (as opposed to a failure reading the store).
func IsNotRestorable(err error) bool { return errors.Is(err, ErrNotRestorable) }

// JournalHead is where an epoch's journal stands: the state its segments
// reach, its last segment, and the positions that segment recorded, from
// which a new leader (or a restarted daemon) continues it.
type JournalHead struct {
	Epoch *Epoch
	State *Snapshot
	// Last is the last segment, nil when the epoch has none yet.
	Last *Segment
	// Positions are the epoch's topics with Start set to where the
	// journal stands.
	Positions []EpochTopic
}

// JournalHead reads epoch id whole, checking every segment and the chain,
// and returns where it stands.
func (s *Store) JournalHead(ctx context.Context, id string) (*JournalHead, error) {
	ep, err := s.GetEpoch(ctx, id)
	if err != nil {
		return nil, err
	}
	l, err := s.ListJournal(ctx)
	if err != nil {
		return nil, err
	}
	e, ok := l.Epoch(id)
	if !ok {
		return nil, fmt.Errorf("read journal epoch %s: %w", id, ErrNotFound)
	}
	base, _, err := s.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read base snapshot of journal epoch %s: %w", id, err)
	}
	chain, _, hole := e.PlanAt(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if hole != nil {
		return nil, hole
	}
	st := newReplayState(base)
	var prev *Segment
	si := &StateInfo{}
	err = s.eachSegment(ctx, chain, func(seg *Segment) (bool, error) {
		st.apply(seg.Entries, math.MaxInt64, si)
		prev = seg
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	h := &JournalHead{Epoch: ep, State: st.build(base), Last: prev, Positions: slices.Clone(ep.Topics)}
	if prev != nil {
		pos := map[string]map[int32]int64{}
		for _, en := range prev.Entries {
			if en.Kind == EntryPosition {
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

// configOf is the config a config entry leaves its connector with: the
// properties of a connector-<name> record, else (a target state or task
// commit) prev, the config it had.
func configOf(e *Entry, prev map[string]string) map[string]string {
	if e.Conn != nil && e.Conn.Config != nil {
		return e.Conn.Config // made by a Tail, not decoded from a segment
	}
	if string(e.Key) == "connector-"+e.Connector && e.Value != nil {
		if props, ok := connectorProperties(e.Value); ok {
			return props
		}
	}
	return prev
}
