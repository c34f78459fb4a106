package journal

// This file computes the state of the cluster at a moment from a full
// snapshot and the journal after it (Store.StateAt).

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// LateRecords is how long after a moment a segment may still hold a
// record whose timestamp is at or before it (a producer's clock behind the
// daemon's): segments that begin later than this after the moment are not
// read. A record appended later than that is never part of the state.
const LateRecords = time.Minute

// ReasonAt is the Reason of a Snapshot made by StateAt.
const ReasonAt = "at"

// StateInfo says how StateAt made a state.
type StateInfo struct {
	// At is the moment asked for; Base the full snapshot the state starts
	// from; Epoch the journal epoch read ("" for a plain fallback to a
	// snapshot), up to segment Seq.
	At    time.Time
	Base  snapshot.Info
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

func CoverageOf(infos []snapshot.Info, l *JournalListing) []snapshot.Coverage {
	byID := make(map[string]snapshot.Info, len(infos))
	for _, i := range infos {
		byID[i.ID] = i
	}
	var out []snapshot.Coverage
	for _, e := range l.Epochs {
		if !e.HasFile {
			continue
		}
		base, ok := byID[e.ID]
		from, _ := snapshot.ParseID(e.ID)
		if ok {
			from = base.CreatedAt
		}
		c := snapshot.Coverage{Epoch: e.ID, From: from, To: from, BaseExists: ok}
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

func DescribeCoverage(cov []snapshot.Coverage) string {
	var parts []string
	for _, c := range cov {
		if c.BaseExists {
			parts = append(parts, snapshot.FmtTime(c.From)+" to "+snapshot.FmtTime(c.To))
		}
	}
	if len(parts) == 0 {
		return "no span (no journal epoch has its snapshot)"
	}
	return strings.Join(parts, ", ")
}

// ProbingKey marks the context of lastRestorable's trial replay.
type ProbingKey struct{}

// ReplayState is the state being rebuilt.
type ReplayState struct {
	views   map[string]*keyview.TopicView
	nparts  map[string]int32
	ends    map[string]map[int32]int64
	cut     map[string]map[int32]bool
	groups  map[string]*snapshot.SinkGroup
	sinks   map[string]map[SinkTP]snapshot.SinkOffset
	Conns   map[string]snapshot.Connector
	confCut bool
	Notes   []string
	// ownTopics are the offsets topics connectors name, not the worker's.
	ownTopics map[string]bool
}

// SetWorkers marks the offsets topics that are not the worker's.
func (st *ReplayState) SetWorkers(topics []EpochTopic) {
	st.ownTopics = map[string]bool{}
	for _, t := range topics {
		if t.Role == snapshot.RoleOffsets && !t.Worker {
			st.ownTopics[t.Name] = true
		}
	}
}

// readable says whether a capture would read offsets topic name: a worker
// topic, or one a connector with a config names.
func (st *ReplayState) readable(name string) bool {
	if !st.ownTopics[name] {
		return true
	}
	for _, c := range st.Conns {
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

func NewReplayState(base *snapshot.Snapshot) *ReplayState {
	st := &ReplayState{
		views: map[string]*keyview.TopicView{}, nparts: map[string]int32{}, ends: map[string]map[int32]int64{},
		cut: map[string]map[int32]bool{}, groups: map[string]*snapshot.SinkGroup{}, sinks: map[string]map[SinkTP]snapshot.SinkOffset{},
		Conns: map[string]snapshot.Connector{},
	}
	for _, t := range base.Topics {
		if t.Role != snapshot.RoleOffsets {
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
	for _, o := range base.SourceTable().All() {
		if v := st.views[o.Topic]; v != nil && v.Parts[o.Partition] != nil {
			v.Parts[o.Partition].Set(o.Key, o.Value, o.Offset)
		}
	}
	for _, g := range base.SinkGroups {
		g := g
		st.groups[g.Group] = &g
		m := map[SinkTP]snapshot.SinkOffset{}
		for _, o := range g.Offsets {
			m[SinkTP{o.Topic, o.Partition}] = o
		}
		st.sinks[g.Group] = m
	}
	for _, c := range base.Connectors {
		if c.HasConfig {
			st.Conns[c.Name] = c
		}
	}
	return st
}

// Apply applies one segment's entries that are at or before atMs.
func (st *ReplayState) Apply(entries []Entry, atMs int64, si *StateInfo) {
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
				m = map[SinkTP]snapshot.SinkOffset{}
				st.sinks[e.Group] = m
			}
			if e.Deleted {
				delete(m, SinkTP{e.Topic, e.Partition})
			} else {
				m[SinkTP{e.Topic, e.Partition}] = snapshot.SinkOffset{Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, LeaderEpoch: e.LeaderEpoch, Metadata: e.Metadata, LastConsumed: e.LastConsumed}
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
			st.groups[e.Group] = &snapshot.SinkGroup{Group: e.Group, Connector: e.Connector, State: e.State, Members: int(e.Members)}
			if st.sinks[e.Group] == nil {
				st.sinks[e.Group] = map[SinkTP]snapshot.SinkOffset{}
			}
		case EntryConfig:
			if st.confCut || e.Time > atMs {
				st.confCut = true
				continue
			}
			if e.Deleted {
				delete(st.Conns, e.Connector)
			} else {
				c := *e.Conn
				c.Name = e.Connector
				c.Config = configOf(e, st.Conns[e.Connector].Config)
				st.Conns[e.Connector] = c
			}
			si.ConfigRecords++
		case EntryGap:
			if e.Time <= atMs && atMs <= e.Until {
				st.Notes = append(st.Notes, fmt.Sprintf("the journal did not observe the sink groups from %s to %s (%s): sink offsets are those observed before", snapshot.FmtTime(FromMs(e.Time)), snapshot.FmtTime(FromMs(e.Until)), e.Reason))
			}
		}
	}
}

// Build makes the Snapshot, as Capture would have made it at that state.
func (st *ReplayState) Build(base *snapshot.Snapshot) *snapshot.Snapshot {
	snap := &snapshot.Snapshot{
		Version: snapshot.Version, ProgramVersion: base.ProgramVersion, ClusterID: base.ClusterID,
		SinkGroups: []snapshot.SinkGroup{}, Connectors: []snapshot.Connector{},
	}
	conns := map[string]*snapshot.Connector{}
	for name, c := range st.Conns {
		c := c
		conns[name] = &c
	}
	for _, t := range base.Topics {
		if t.Role == snapshot.RoleOffsets && !st.readable(t.Name) {
			continue
		}
		t2 := snapshot.Topic{Name: t.Name, Role: t.Role, Partitions: slices.Clone(t.Partitions)}
		if v := st.views[t.Name]; v != nil {
			for i := range t2.Partitions {
				if pv := v.Parts[t2.Partitions[i].Partition]; pv != nil {
					t2.Partitions[i].EndOffset = pv.Next
				}
			}
		}
		snap.Topics = append(snap.Topics, t2)
	}
	b := build.OffsetBuilder{InScope: func(string) bool { return true }, Connectors: conns, Names: map[string]string{}}
	var names []string
	for n := range st.views {
		names = append(names, n)
	}
	sort.Strings(names)
	var warnings []string
	offs := []snapshot.SourceOffset{}
	unparsed := 0
	for _, name := range names {
		v := st.views[name]
		for _, pv := range v.Parts {
			// The snapshot aliases the values: a later Apply (a state kept
			// and moved on, restore/standby's Follower) must not overwrite
			// them in place.
			pv.From = pv.Next
		}
		if !st.readable(name) {
			continue
		}
		var suspects []string
		for _, p := range build.SortedPartitions(v.Parts) {
			from := len(offs)
			var sus []string
			offs, sus = b.Build(offs, name, p, st.nparts[name], v.Parts[p])
			suspects = append(suspects, sus...)
			for i := from; i < len(offs); i++ {
				if o := &offs[i]; o.ParseError != "" {
					unparsed++
				} else {
					b.Register(o.Connector)
				}
			}
		}
		warnings = append(warnings, build.DuplicateWarnings(v, suspects)...)
	}
	snap.SetSourceOffsets(offs)
	if unparsed > 0 {
		warnings = append(warnings, snapshot.CountWarning(unparsed, "offsets topic key is not [connector, {partition}] and was kept raw", "offsets topic keys are not [connector, {partition}] and were kept raw"))
	}
	for name, g := range st.groups {
		sg := *g
		sg.Offsets = []snapshot.SinkOffset{}
		for _, o := range st.sinks[name] {
			sg.Offsets = append(sg.Offsets, o)
		}
		snap.SinkGroups = append(snap.SinkGroups, sg)
		if sg.Connector != "" && conns[sg.Connector] == nil {
			conns[sg.Connector] = &snapshot.Connector{Name: sg.Connector, Type: snapshot.TypeSink, Group: sg.Group, Tasks: -1}
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
	State *snapshot.Snapshot
	// Last is the last segment, nil when the epoch has none yet.
	Last *Segment
	// Positions are the epoch's topics with Start set to where the
	// journal stands.
	Positions []EpochTopic
}

// configOf is the config a config entry leaves its connector with: the
// properties of a connector-<name> record, else (a target state or task
// commit) prev, the config it had.
func configOf(e *Entry, prev map[string]string) map[string]string {
	if e.Conn != nil && e.Conn.Config != nil {
		return e.Conn.Config // made by a Tail, not decoded from a segment
	}
	if string(e.Key) == "connector-"+e.Connector && e.Value != nil {
		if props, ok := build.ConnectorProperties(e.Value); ok {
			return props
		}
	}
	return prev
}
