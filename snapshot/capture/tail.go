package capture

// This file reads what the journal records: Tail follows the offsets
// topics and the config topic from exact positions with the snapshot's
// reader (readTopics, read_committed Fetch requests), and reads the sink
// groups with the snapshot's batched group read, turning what changed
// into entries.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// TailBreak is returned by Tail.Poll when the journal cannot go on
// without a gap: a record it needs is gone (the log start moved past its
// position), a topic was recreated or changed its partition count. The
// daemon then takes a full snapshot and starts a new epoch.
type TailBreak struct {
	Reason string // an Epoch* reason
	Detail string
	// Topic and Role name the offsets or config topic deleted or
	// re-created (Reason EpochTopicDeleted or EpochTopicRecreated): what it
	// held is gone, and the journal records an event per connector.
	Topic, Role string
}

func (b *TailBreak) Error() string { return "journal cannot continue: " + b.Reason + ": " + b.Detail }

// Tail follows a cluster for the journal from a known state: a base
// snapshot and its end offsets, or the state a journal epoch reached. It
// is not safe for concurrent use.
type Tail struct {
	capt   *Capturer
	topics []journal.EpochTopic
	// views are the offsets topics read, for their positions: they keep
	// no keys (onRecord); last keeps what event detection needs of them.
	views   map[string]*keyview.TopicView
	last    map[string]map[int32]*lastValues
	nparts  map[string]int
	conf    *build.ConfigState
	confVs  []*keyview.TopicView
	pending []journal.Entry
	// rewound counts, per connector, source keys rewritten backwards and
	// tombstoned in the records read since the last Poll, with the time
	// of the first.
	resets map[string]*resetCount
	groups map[string]snapshot.SinkGroup
	names  map[string]string // interned connector names
	// mu guards pending, resets, names and conf against the record hooks,
	// which readTopics calls from one goroutine per leader broker.
	mu sync.Mutex
	// LastPoll is when the sink groups were last read.
	LastPoll time.Time
}

type resetCount struct {
	tombstoned, rewound int
	first               int64
}

// NewTail returns a Tail continuing from state, whose topics the journal
// reads from the positions given (for a new epoch, the state is the base
// snapshot and the positions its end offsets). The config state is read
// from the config topic up to its position by Start. The last value of
// every key of state is kept for event detection (lastValues): seed, as
// a store read with a SeedSink decoded it beside state, or, when
// seed is nil, made from state's SourceOffsets. A seed seeds one Tail: NewTail panics when given
// one a Tail took already.
func NewTail(cl *kgo.Client, opts Options, state *snapshot.Snapshot, seed *TailSeed, positions []journal.EpochTopic, observed time.Time) *Tail {
	opts.Defaults()
	switch {
	case seed == nil:
		seed = SeedOf(state)
	case seed.Taken:
		panic("capture: a TailSeed seeds one Tail only")
	}
	seed.Taken = true
	t := &Tail{
		capt: NewCapturer(cl, opts), topics: slices.Clone(positions), views: map[string]*keyview.TopicView{}, last: map[string]map[int32]*lastValues{},
		nparts: map[string]int{}, resets: map[string]*resetCount{}, names: map[string]string{}, groups: map[string]snapshot.SinkGroup{}, LastPoll: observed,
	}
	for _, et := range positions {
		t.nparts[et.Name] = et.Partitions
		if et.Role != snapshot.RoleOffsets {
			continue
		}
		v := keyview.NewTopicView(et.Name)
		v.ID = topicIDOf(et.TopicID)
		last := map[int32]*lastValues{}
		for _, p := range et.Start {
			v.Parts[p.Partition] = keyview.NewPartView(p.Next)
			lv := seed.Last[et.Name][p.Partition] // the state's keys; of partitions not tailed, dropped
			if lv == nil {
				lv = newLastValues(seed.Seed)
			}
			last[p.Partition] = lv
		}
		v.OnRecord = func(r keyview.LogRecord) { t.source(v.Name, last[r.Partition], &r) }
		t.views[et.Name] = v
		t.last[et.Name] = last
	}
	for _, g := range state.SinkGroups {
		t.groups[g.Group] = g // with the last consumed records the state read
	}
	return t
}

func topicIDOf(s string) kadm.TopicID {
	var id kadm.TopicID
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(id) {
		copy(id[:], b)
	}
	return id
}

// EpochTopicsOf returns the topics a new epoch based on snap tails: its
// offsets and config topics with their current topic IDs, partition
// counts and the snapshot's end offsets as start positions. opts names the
// worker offsets topics.
func EpochTopicsOf(ctx context.Context, cl *kgo.Client, opts Options, snap *snapshot.Snapshot) ([]journal.EpochTopic, error) {
	opts.Defaults()
	var names []string
	for _, t := range snap.Topics {
		names = append(names, t.Name)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("read metadata of %v: %w", names, err)
	}
	var out []journal.EpochTopic
	for _, t := range snap.Topics {
		td, ok := md.Topics[t.Name]
		if !ok || td.Err != nil {
			return nil, fmt.Errorf("read metadata of topic %q: %v", t.Name, td.Err)
		}
		worker := slices.Contains(opts.OffsetsTopics, t.Name)
		if l := opts.Layout; l != nil && l.Offsets != nil {
			worker = worker || l.Offsets.MatchString(t.Name)
		}
		et := journal.EpochTopic{Name: t.Name, Role: t.Role, TopicID: hex.EncodeToString(td.ID[:]), Partitions: len(t.Partitions),
			Worker: t.Role == snapshot.RoleOffsets && worker}
		for _, p := range t.Partitions {
			et.Start = append(et.Start, journal.PartitionNext{Partition: p.Partition, Next: p.EndOffset})
		}
		out = append(out, et)
	}
	return out, nil
}

// Start reads the config topics (one, or a layout's several) up to their
// positions, as the worker would have them there, without journaling them.
func (t *Tail) Start(ctx context.Context) error {
	t.conf = build.NewConfigState()
	var cts []*journal.EpochTopic
	var names []string
	for i := range t.topics {
		if t.topics[i].Role == snapshot.RoleConfig {
			cts = append(cts, &t.topics[i])
			names = append(names, t.topics[i].Name)
		}
	}
	if len(cts) == 0 {
		return nil // no config topic (a new cluster): every connector has no config
	}
	bs, missing, err := kread.ListBounds(ctx, t.capt.adm, names)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return &TailBreak{Reason: journal.EpochTopicDeleted, Topic: missing[0], Role: snapshot.RoleConfig,
			Detail: fmt.Sprintf("config topic %q is gone (deleted, or these brokers are another cluster): offsetkeeper events lists each connector it held with the restore that brings its offsets back", missing[0])}
	}
	var views []*keyview.TopicView
	upTo := map[string]map[int32]kread.Bounds{}
	pos := map[string]int64{}
	for _, ct := range cts {
		v := keyview.NewTopicView(ct.Name)
		v.ID = topicIDOf(ct.TopicID)
		v.OnRecord = func(r keyview.LogRecord) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.conf.Apply(r)
		}
		if len(ct.Start) > 0 {
			pos[ct.Name] = ct.Start[0].Next
		}
		b := bs[ct.Name][0]
		if b.End < pos[ct.Name] {
			return &TailBreak{Reason: journal.EpochTopicRecreated, Topic: ct.Name, Role: snapshot.RoleConfig,
				Detail: fmt.Sprintf("config topic %q ends at %d, before the journal's position %d", ct.Name, b.End, pos[ct.Name])}
		}
		upTo[ct.Name] = map[int32]kread.Bounds{0: {Start: b.Start, End: pos[ct.Name]}}
		views = append(views, v)
	}
	if _, err := kread.ReadTopics(ctx, t.capt.cl, t.capt.adm, views, upTo); err != nil {
		return fmt.Errorf("read config topic %s: %w", quoteList(names), err)
	}
	for _, v := range views {
		p := pos[v.Name]
		if v.Parts[0] != nil && v.Parts[0].Next != p && p > bs[v.Name][0].Start {
			return &TailBreak{Reason: journal.EpochGap, Detail: fmt.Sprintf("config topic %q could not be read up to %d", v.Name, p)}
		}
		v.OnRecord = t.config
		if v.Parts[0] == nil {
			v.Parts[0] = keyview.NewPartView(p)
		}
	}
	t.confVs = views
	return nil
}

// source journals one offsets topic record and keeps the key's value.
func (t *Tail) source(topic string, lv *lastValues, r *keyview.LogRecord) {
	if r.Key == nil || lv == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old, _ := lv.Get(r.Key) // valid until the set below
	e := journal.Entry{Kind: journal.EntrySource, Topic: topic, Partition: r.Partition, Offset: r.Offset, Time: r.Timestamp.UnixMilli(), Key: slices.Clone(r.Key)}
	if r.Value != nil {
		e.Value = slices.Clone(r.Value)
		if e.Value == nil {
			e.Value = []byte{}
		}
	}
	// offsetkeeper's own restore (its header on the record) is no reset:
	// events lists it from its undo snapshot (restored).
	if name, _, err := snapshot.ParseSourceKey(r.Key, t.names); err == nil && old != nil && r.Restore == "" {
		rc := t.resets[name]
		if r.Value == nil || journal.Rewound(old, r.Value) {
			if rc == nil {
				rc = &resetCount{first: e.Time}
				t.resets[name] = rc
			}
			// Partitions are read in parallel: the earliest record wins.
			rc.first = min(rc.first, e.Time)
			if r.Value == nil {
				rc.tombstoned++
			} else {
				rc.rewound++
			}
		}
	}
	if r.Value == nil {
		lv.Remove(r.Key)
	} else {
		lv.Set(r.Key, r.Value)
	}
	t.pending = append(t.pending, e)
}

// config journals one config topic record that changes a connector.
func (t *Tail) config(r keyview.LogRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.conf.Apply(r)
	key := string(r.Key)
	var name string
	for _, p := range []string{"connector-", "target-state-", "commit-"} {
		if n, ok := strings.CutPrefix(key, p); ok {
			name = n
		}
	}
	if name == "" {
		return
	}
	e := journal.Entry{Kind: journal.EntryConfig, Offset: r.Offset, Time: r.Timestamp.UnixMilli(), Key: slices.Clone(r.Key), Value: slices.Clone(r.Value), Connector: name}
	if _, ok := t.conf.Connectors[name]; ok {
		c := t.conf.Connector(name)
		e.Conn = &c
	} else {
		if !strings.HasPrefix(key, "connector-") || r.Value != nil {
			return // a state for a connector without a config: nothing changes
		}
		e.Deleted = true
		t.pending = append(t.pending, journal.Entry{Kind: journal.EntryEvent, Time: e.Time, Connector: name, Reason: snapshot.EventConnectorDeleted, Count: 1, Before: e.Time - 1})
	}
	t.pending = append(t.pending, e)
}

// Poll reads everything new: offsets and config records up to their last
// stable offsets, and the sink groups. It returns the entries to journal
// (nil when nothing changed), ending with the positions reached, and the
// moment the groups were read. A *TailBreak says the journal cannot go on.
func (t *Tail) Poll(ctx context.Context) ([]journal.Entry, time.Time, error) {
	if t.conf == nil {
		return nil, time.Time{}, errors.New("poll journal tail: Start was not called")
	}
	names := make([]string, 0, len(t.topics))
	for _, et := range t.topics {
		names = append(names, et.Name)
	}
	for _, c := range t.conf.Connectors {
		if ot := c.Props["offsets.storage.topic"]; ot != "" && snapshot.ConnectorType(c.Props) != snapshot.TypeSink && t.nparts[ot] == 0 {
			return nil, time.Time{}, &TailBreak{Reason: journal.EpochTopicRecreated, Detail: fmt.Sprintf("a connector now uses offsets topic %q, which the epoch does not tail", ot)}
		}
	}
	if err := t.checkTopics(ctx, names); err != nil {
		return nil, time.Time{}, err
	}
	if err := t.checkGroups(ctx); err != nil {
		return nil, time.Time{}, err
	}
	bs, missing, err := kread.ListBounds(ctx, t.capt.adm, names)
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(missing) > 0 {
		return nil, time.Time{}, &TailBreak{Reason: journal.EpochTopicDeleted, Topic: missing[0], Role: t.roleOf(missing[0]),
			Detail: fmt.Sprintf("topics %v are gone (deleted, or these brokers are another cluster): offsetkeeper events lists each connector it held with the restore that brings its offsets back", missing)}
	}
	views := slices.Collect(maps.Values(t.views))
	views = append(views, t.confVs...)
	for _, v := range views {
		if len(bs[v.Name]) != t.nparts[v.Name] {
			return nil, time.Time{}, &TailBreak{Reason: journal.EpochPartitions, Detail: fmt.Sprintf("topic %q has %d partitions, the epoch began with %d", v.Name, len(bs[v.Name]), t.nparts[v.Name])}
		}
		for p, pv := range v.Parts {
			b := bs[v.Name][p]
			switch {
			case b.Start > pv.Next:
				return nil, time.Time{}, &TailBreak{Reason: journal.EpochGap, Detail: fmt.Sprintf("%s/%d: the log starts at %d, past the journal's position %d: records it needed are gone", v.Name, p, b.Start, pv.Next)}
			case b.End < pv.Next:
				return nil, time.Time{}, &TailBreak{Reason: journal.EpochTopicRecreated, Topic: v.Name, Role: t.roleOf(v.Name),
					Detail: fmt.Sprintf("%s/%d: the log ends at %d, before the journal's position %d", v.Name, p, b.End, pv.Next)}
			}
			pv.Start = pv.Next // checked above; readTopics must not start over
		}
	}
	// On an error, what was read stays pending, with the positions it
	// reached: the next Poll goes on from there and returns it too.
	resets, err := kread.ReadTopics(ctx, t.capt.cl, t.capt.adm, views, bs)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read journal tail: %w", err)
	}
	if len(resets) > 0 {
		return nil, time.Time{}, &TailBreak{Reason: journal.EpochGap, Detail: strings.Join(resets, "; ")}
	}
	observed := time.Now()
	groups, err := t.readGroups(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	entries := t.pending
	t.pending = nil
	entries = append(entries, t.sourceEvents()...)
	entries = append(entries, t.diffGroups(groups, observed)...)
	t.LastPoll = observed
	return entries, observed, nil
}

// Requeue puts entries a Poll returned back in front of what is pending,
// for the next Poll to return again: the segment that held them was not
// written.
func (t *Tail) Requeue(entries []journal.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(slices.Clip(entries), t.pending...)
}

// Positions are the entries that say where every partition's tail stands.
func (t *Tail) Positions() []journal.Entry {
	var out []journal.Entry
	views := slices.Collect(maps.Values(t.views))
	views = append(views, t.confVs...)
	sort.Slice(views, func(i, j int) bool { return views[i].Name < views[j].Name })
	for _, v := range views {
		for _, p := range build.SortedPartitions(v.Parts) {
			out = append(out, journal.Entry{Kind: journal.EntryPosition, Topic: v.Name, Partition: p, Offset: v.Parts[p].Next})
		}
	}
	return out
}

// roleOf is the role of a topic the epoch tails.
func (t *Tail) roleOf(name string) string {
	for _, et := range t.topics {
		if et.Name == name {
			return et.Role
		}
	}
	return ""
}

// checkTopics compares the topic IDs with the epoch's.
func (t *Tail) checkTopics(ctx context.Context, names []string) error {
	md, err := t.capt.adm.Metadata(ctx, names...)
	if err != nil {
		return fmt.Errorf("read metadata of %v: %w", names, err)
	}
	for _, et := range t.topics {
		td, ok := md.Topics[et.Name]
		switch {
		case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			return &TailBreak{Reason: journal.EpochTopicDeleted, Topic: et.Name, Role: et.Role,
				Detail: fmt.Sprintf("topic %q is gone (deleted, or these brokers are another cluster): offsetkeeper events lists each connector it held with the restore that brings its offsets back", et.Name)}
		case td.Err != nil:
			return fmt.Errorf("read metadata of topic %q: %w", et.Name, td.Err)
		}
		if et.TopicID != "" && hex.EncodeToString(td.ID[:]) != et.TopicID {
			return &TailBreak{Reason: journal.EpochTopicRecreated, Topic: et.Name, Role: et.Role,
				Detail: fmt.Sprintf("topic %q has a new topic ID: what it held is gone; offsetkeeper events lists each connector it held with the restore that brings its offsets back", et.Name)}
		}
	}
	return nil
}

// readGroups reads the sink groups as a snapshot does.
func (t *Tail) readGroups(ctx context.Context) (map[string]snapshot.SinkGroup, error) {
	conns := map[string]*snapshot.Connector{}
	for name, cc := range t.conf.Connectors {
		if snapshot.ConnectorType(cc.Props) != snapshot.TypeSink {
			continue // only sinks own groups: the 1,000 sources of the bench every interval were garbage
		}
		c := t.conf.Connector(name)
		conns[name] = &c
	}
	t.keepOrphans(conns)
	rd, err := t.capt.readSinkGroups(ctx, conns, func(string) bool { return true }, false, t.groups)
	if err != nil {
		return nil, err
	}
	if len(rd.unread) > 0 {
		// A group not read is not a group deleted: the journal records
		// nothing of it rather than a deletion.
		u := rd.unread[0]
		return nil, fmt.Errorf("read sink group %q (%d unread): %s", u.Group, len(rd.unread), u.Reason)
	}
	gs := rd.groups
	t.lastConsumed(ctx, gs)
	out := make(map[string]snapshot.SinkGroup, len(gs))
	for _, g := range gs {
		out[g.Group] = g
	}
	return out, nil
}

// sourceEvents turns the resets counted since the last Poll into events.
func (t *Tail) sourceEvents() []journal.Entry {
	var out []journal.Entry
	for _, name := range slices.Sorted(maps.Keys(t.resets)) {
		rc := t.resets[name]
		if rc.tombstoned > 0 {
			out = append(out, journal.Entry{Kind: journal.EntryEvent, Time: rc.first, Connector: name, Reason: snapshot.EventSourceTombstoned, Count: int32(rc.tombstoned), Before: rc.first - 1})
		}
		if rc.rewound > 0 {
			out = append(out, journal.Entry{Kind: journal.EntryEvent, Time: rc.first, Connector: name, Reason: snapshot.EventSourceRewound, Count: int32(rc.rewound), Before: rc.first - 1})
		}
	}
	clear(t.resets)
	return out
}

// diffGroups returns the sink entries for what changed since the last
// read, and the events it shows, and keeps groups as the last read.
func (t *Tail) diffGroups(groups map[string]snapshot.SinkGroup, observed time.Time) []journal.Entry {
	at := journal.Ms(observed)
	before := journal.Ms(t.LastPoll)
	var out, events []journal.Entry
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g, old := groups[name], t.groups[name]
		_, existed := t.groups[name]
		if !existed || g.State != old.State || g.Members != old.Members || g.Connector != old.Connector {
			out = append(out, journal.Entry{Kind: journal.EntryGroup, Group: name, Connector: g.Connector, State: g.State, Members: int32(g.Members), Time: at})
		}
		if sameSlice(g.Offsets, old.Offsets) {
			continue // the read kept the last one's: nothing changed
		}
		// Both sorted by topic and partition (as a capture sorts them): one
		// walk, no map, every interval.
		back, gone := 0, 0
		was := old.Offsets
		i := 0
		for _, o := range g.Offsets {
			k := journal.SinkTP{Topic: o.Topic, Part: o.Partition}
			for i < len(was) && cmpTP(journal.SinkTP{Topic: was[i].Topic, Part: was[i].Partition}, k) < 0 {
				gone++
				out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: was[i].Topic, Partition: was[i].Partition, Time: at, Deleted: true})
				i++
			}
			ok := i < len(was) && was[i].Topic == o.Topic && was[i].Partition == o.Partition
			var w snapshot.SinkOffset
			if ok {
				w = was[i]
				i++
			}
			if ok && sameSinkOffset(w, o) {
				continue
			}
			if ok && o.Offset < w.Offset {
				back++
			}
			out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, LastConsumed: o.LastConsumed, Time: at})
		}
		for ; i < len(was); i++ {
			gone++
			out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: was[i].Topic, Partition: was[i].Partition, Time: at, Deleted: true})
		}
		conn := cmpOr(g.Connector, name)
		if back > 0 {
			events = append(events, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: conn, Group: name, Reason: snapshot.EventSinkRewound, Count: int32(back), Before: before})
		}
		if gone > 0 {
			events = append(events, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: conn, Group: name, Reason: snapshot.EventSinkDeleted, Count: int32(gone), Before: before})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.groups)) {
		if _, ok := groups[name]; ok {
			continue
		}
		old := t.groups[name]
		for _, o := range old.Offsets {
			out = append(out, journal.Entry{Kind: journal.EntrySink, Group: name, Topic: o.Topic, Partition: o.Partition, Time: at, Deleted: true})
		}
		out = append(out, journal.Entry{Kind: journal.EntryGroup, Group: name, Connector: old.Connector, Time: at, Deleted: true})
		if len(old.Offsets) > 0 {
			events = append(events, journal.Entry{Kind: journal.EntryEvent, Time: at, Connector: cmpOr(old.Connector, name), Group: name, Reason: snapshot.EventSinkDeleted, Count: int32(len(old.Offsets)), Before: before})
		}
	}
	t.groups = groups
	return append(out, events...)
}

func cmpTP(a, b journal.SinkTP) int {
	if a.Topic != b.Topic {
		return strings.Compare(a.Topic, b.Topic)
	}
	return int(a.Part) - int(b.Part)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sameSlice reports whether a and b are the same slice: a group's offsets
// that the read kept from the last one (fetchCommitted).
func sameSlice(a, b []snapshot.SinkOffset) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameSinkOffset compares two sink offsets by value, LastConsumed too.
func sameSinkOffset(a, b snapshot.SinkOffset) bool {
	la, lb := a.LastConsumed, b.LastConsumed
	a.LastConsumed, b.LastConsumed = nil, nil
	return a == b && (la == nil) == (lb == nil) && (la == nil || *la == *lb)
}

// lastConsumed sets the sink offsets' LastConsumed as a capture does, from
// the last read for a position that did not move (most of them, every
// interval) and through the snapshot's read for the others.
func (t *Tail) lastConsumed(ctx context.Context, gs []snapshot.SinkGroup) {
	var (
		moved []snapshot.SinkGroup
		where [][2]int // group and offset index of each moved offset
	)
	for gi := range gs {
		g := &gs[gi]
		prev := t.groups[g.Group].Offsets // sorted like g.Offsets
		if sameSlice(g.Offsets, prev) {
			continue // nothing moved: the last read's, LastConsumed included
		}
		var m snapshot.SinkGroup
		j := 0
		for oi := range g.Offsets {
			o := &g.Offsets[oi]
			for j < len(prev) && cmpTP(journal.SinkTP{Topic: prev[j].Topic, Part: prev[j].Partition}, journal.SinkTP{Topic: o.Topic, Part: o.Partition}) < 0 {
				j++
			}
			if j < len(prev) && prev[j].Topic == o.Topic && prev[j].Partition == o.Partition && prev[j].Offset == o.Offset {
				o.LastConsumed = prev[j].LastConsumed
				continue
			}
			m.Offsets = append(m.Offsets, *o)
			where = append(where, [2]int{gi, oi})
		}
		if len(m.Offsets) > 0 {
			m.Group = g.Group
			moved = append(moved, m)
		}
	}
	if len(moved) == 0 {
		return
	}
	t.capt.captureLastConsumed(ctx, moved)
	k := 0
	for _, m := range moved {
		for _, o := range m.Offsets {
			w := where[k]
			gs[w[0]].Offsets[w[1]].LastConsumed = o.LastConsumed
			k++
		}
	}
}

// checkGroups breaks the epoch when the topic layout finds a worker group
// whose offsets or config topic it does not tail: a connector created
// since, which only a new epoch (on a new snapshot) follows.
func (t *Tail) checkGroups(ctx context.Context) error {
	l := t.capt.opts.Layout
	if l == nil {
		return nil
	}
	gs, err := l.Discover(ctx, t.capt.adm)
	if err != nil {
		return err
	}
	for _, g := range gs {
		for _, name := range []string{g.OffsetsTopic, g.ConfigTopic} {
			if name != "" && t.nparts[name] == 0 {
				return &TailBreak{Reason: journal.EpochNewGroup, Detail: fmt.Sprintf("worker group %q (topic %q) is new: its connectors are journaled from the next epoch", g.ID, name)}
			}
		}
	}
	return nil
}
