package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Point is one observation of a value.
type Point struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

// positionFields are the source offset fields the connector page plots and
// compares: the journal's, in its order (snapshot.PositionFields), so
// that the page and the journal's events judge one offset by one field.
var positionFields = snapshot.PositionFields

// maxFields is how many position fields of one partition are plotted.
const maxFields = 2

// positions returns the known numeric position fields of a source offset
// value, at most maxFields, in positionFields order.
func positions(v []byte) map[string]float64 {
	if len(v) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	out := map[string]float64{}
	for _, f := range positionFields {
		if len(out) == maxFields {
			break
		}
		var x float64
		var err error
		switch n := m[f].(type) {
		case json.Number:
			x, err = n.Float64()
		case string: // Debezium SQL Server writes LSNs as "0000002a:00000120:0003"
			x, err = lsnNumber(n)
		default:
			continue
		}
		if err == nil {
			out[f] = x
		}
	}
	return out
}

// lsnNumber reads a SQL Server LSN "hhhhhhhh:hhhhhhhh:hhhh" as one number
// that orders as the LSN does.
func lsnNumber(s string) (float64, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, fmt.Errorf("not an LSN: %q", s)
	}
	var a, b, c uint64
	if _, err := fmt.Sscanf(s, "%x:%x:%x", &a, &b, &c); err != nil {
		return 0, err
	}
	return float64(a)*(1<<48) + float64(b)*(1<<16) + float64(c), nil
}

// tp is a sink group's topic partition.
type tp struct {
	Topic     string
	Partition int32
}

// String is topic-partition; a source key captured through the Connect
// REST API, on no partition, is snapshot.Where's "rest" form.
func (t tp) String() string {
	if t.Partition == snapshot.NoPartition {
		return snapshot.Where(t.Topic, t.Partition)
	}
	return fmt.Sprintf("%s-%d", t.Topic, t.Partition)
}

// srcKey is one source partition of a connector: the exact key bytes.
type srcKey struct {
	Connector string
	Key       string
}

// srcSeries is what is known of one source partition over time.
type srcSeries struct {
	Partition string // the partition object as the key holds it
	Fields    map[string][]Point
	Changes   []time.Time // every record: the change markers
	Removed   []time.Time // tombstones
}

// Gap is a span the journal did not observe.
type Gap struct {
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Reason string    `json:"reason"`
}

// history is what the journal and the snapshots say about [from, to].
type history struct {
	from, to time.Time
	sinks    map[string]map[tp][]Point // group → partition → committed offsets
	sources  map[srcKey]*srcSeries
	events   []snapshot.Event
	gaps     []Gap
	journal  bool // the store holds a journal
	// only, when set, keeps the journal epochs readJournal reads: the
	// page's cluster's in a store shared with another cluster's daemon.
	only func(epoch string) bool
}

func newHistory(from, to time.Time) *history {
	return &history{from: from, to: to, sinks: map[string]map[tp][]Point{}, sources: map[srcKey]*srcSeries{}}
}

func (h *history) sink(group string, p tp, pt Point) {
	m := h.sinks[group]
	if m == nil {
		m = map[tp][]Point{}
		h.sinks[group] = m
	}
	m[p] = append(m[p], pt)
}

func (h *history) source(key []byte, value []byte, t time.Time) {
	conn, _, raw, err := connectjson.ParseKey(key)
	if err != nil {
		return
	}
	k := srcKey{conn, string(key)}
	s := h.sources[k]
	if s == nil {
		s = &srcSeries{Partition: string(raw), Fields: map[string][]Point{}}
		h.sources[k] = s
	}
	if value == nil {
		s.Removed = append(s.Removed, t)
		return
	}
	s.Changes = append(s.Changes, t)
	for f, v := range positions(value) {
		s.Fields[f] = append(s.Fields[f], Point{t, v})
	}
}

// segData is what the page keeps of one journal segment: segments are
// immutable, so it is read once and reused while it is in the window.
type segData struct {
	entries []journal.Entry // sink, source, gap and event entries; values kept
	epoch   string
	lastSeq uint64
}

// segCache holds segData by segment key.
type segCache struct {
	mu sync.Mutex
	m  map[string]*segData
}

// read returns the kept part of segment si, reading it if not cached.
func (c *segCache) read(ctx context.Context, st *store.Store, epoch string, si journal.SegmentInfo) (*segData, error) {
	c.mu.Lock()
	d, ok := c.m[si.Key]
	c.mu.Unlock()
	if ok {
		return d, nil
	}
	seg, err := st.Journal().ReadSegment(ctx, si)
	if err != nil {
		return nil, fmt.Errorf("read journal segment %s: %w", si.Key, err)
	}
	d = &segData{epoch: epoch, lastSeq: seg.LastSeq}
	for _, en := range seg.Entries {
		switch en.Kind {
		case journal.EntrySink, journal.EntrySource, journal.EntryGap, journal.EntryEvent:
			en.Conn = nil
			d.entries = append(d.entries, en)
		}
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*segData{}
	}
	c.m[si.Key] = d
	c.mu.Unlock()
	return d, nil
}

// keep drops the cached segments whose keys are not in keys.
func (c *segCache) keep(keys map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !keys[k] {
			delete(c.m, k)
		}
	}
}

// readJournal adds the journal's records in [h.from, h.to] to h.
func (h *history) readJournal(ctx context.Context, st *store.Store, cache *segCache) error {
	l, err := st.Journal().List(ctx)
	if err != nil {
		return fmt.Errorf("list journal: %w", err)
	}
	h.journal = len(l.Epochs) > 0
	keys := map[string]bool{}
	seen := map[evKey]bool{}
	for _, e := range l.Epochs {
		if h.only != nil && !h.only(e.ID) {
			continue
		}
		chain, _ := e.Chain()
		for _, si := range chain {
			if si.LastTime.Before(h.from) {
				continue
			}
			keys[si.Key] = true
			d, err := cache.read(ctx, st, e.ID, si)
			if err != nil {
				return err
			}
			h.addSegment(d, seen)
		}
	}
	cache.keep(keys)
	slices.SortStableFunc(h.events, func(a, b snapshot.Event) int { return a.Time.Compare(b.Time) })
	return nil
}

// evKey identifies an event: epochs overlap, so two may record one reset.
type evKey struct {
	conn, group, kind string
	before            time.Time
}

func (h *history) addSegment(d *segData, seen map[evKey]bool) {
	for i := range d.entries {
		en := &d.entries[i]
		t := time.UnixMilli(en.Time).UTC()
		if t.Before(h.from) && en.Kind != journal.EntryGap {
			continue
		}
		switch en.Kind {
		case journal.EntrySink:
			if !en.Deleted {
				h.sink(en.Group, tp{en.Topic, en.Partition}, Point{t, float64(en.Offset)})
			}
		case journal.EntrySource:
			h.source(en.Key, en.Value, t)
		case journal.EntryGap:
			until := time.UnixMilli(en.Until).UTC()
			if !until.Before(h.from) {
				h.gaps = append(h.gaps, Gap{From: t, To: until, Reason: en.Reason})
			}
		case journal.EntryEvent:
			ev := snapshot.Event{Time: t, Connector: en.Connector, Group: en.Group, Kind: en.Reason,
				Count: int(en.Count), Before: time.UnixMilli(en.Before).UTC(), Epoch: d.epoch, Segment: d.lastSeq}
			k := evKey{ev.Connector, ev.Group, ev.Kind, ev.Before}
			if !seen[k] {
				seen[k] = true
				h.events = append(h.events, ev)
			}
		}
	}
}

// coverageGaps adds to h the spans of the window no epoch covers: between
// epochs that do not meet, and from the journal's end to now when it has
// stopped.
func (h *history) coverageGaps(cov []snapshot.Coverage, now time.Time) {
	if len(cov) == 0 {
		return
	}
	end := cov[0].To
	for _, c := range cov[1:] {
		if c.From.Sub(end) > snapshot.JournalLive && c.From.After(h.from) {
			h.gaps = append(h.gaps, Gap{From: end, To: c.From, Reason: "no journal epoch covers this span"})
		}
		if c.To.After(end) {
			end = c.To
		}
	}
	if now.Sub(end) > snapshot.JournalLive {
		h.gaps = append(h.gaps, Gap{From: end, To: now, Reason: "the journal has written nothing since (is the daemon running?)"})
	}
	slices.SortFunc(h.gaps, func(a, b Gap) int { return a.From.Compare(b.From) })
}

// addState adds what a snapshot (or a state) holds as observations at t.
func (h *history) addState(s *snapshot.Snapshot, t time.Time) {
	for _, g := range s.SinkGroups {
		for _, o := range g.Offsets {
			h.sink(g.Group, tp{o.Topic, o.Partition}, Point{t, float64(o.Offset)})
		}
	}
	for _, so := range s.SourceTable().All() {
		if so.Value != nil {
			h.addSourceState(so, t)
		}
	}
}

// addSourceState adds a source offset as it stood at t: a position point,
// not a change (the record may be older).
func (h *history) addSourceState(so *snapshot.SourceOffset, t time.Time) {
	conn, _, raw, err := connectjson.ParseKey(so.Key)
	if err != nil {
		return
	}
	k := srcKey{conn, string(so.Key)}
	s := h.sources[k]
	if s == nil {
		s = &srcSeries{Partition: string(raw), Fields: map[string][]Point{}}
		h.sources[k] = s
	}
	for f, v := range positions(so.Value) {
		s.Fields[f] = append(s.Fields[f], Point{t, v})
	}
}

// finish sorts every series by time and drops repeated observations.
func (h *history) finish() {
	for _, m := range h.sinks {
		for p, pts := range m {
			m[p] = tidy(pts)
		}
	}
	for _, s := range h.sources {
		for f, pts := range s.Fields {
			s.Fields[f] = tidy(pts)
		}
		slices.SortFunc(s.Changes, time.Time.Compare)
		s.Changes = slices.Compact(s.Changes)
	}
}

// tidy sorts points by time and keeps, of a run of equal values, the first
// and the last (a flat line stays flat, and shows until when).
func tidy(pts []Point) []Point {
	slices.SortStableFunc(pts, func(a, b Point) int { return a.T.Compare(b.T) })
	pts = slices.CompactFunc(pts, func(a, b Point) bool { return a.T.Equal(b.T) && a.V == b.V })
	out := pts[:0:0]
	for i, p := range pts {
		if i > 0 && i < len(pts)-1 && pts[i-1].V == p.V && pts[i+1].V == p.V {
			continue
		}
		out = append(out, p)
	}
	return out
}

// snapCache holds the snapshots the page has read, by ID: snapshots are
// immutable, so an entry is never stale; entries for IDs no longer listed
// are dropped.
type snapCache struct {
	mu sync.Mutex
	m  map[string]*snapshot.Snapshot
}

func (c *snapCache) get(ctx context.Context, st *store.Store, id string) (*snapshot.Snapshot, error) {
	c.mu.Lock()
	s, ok := c.m[id]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, _, err := st.Snapshots().GetWith(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*snapshot.Snapshot{}
	}
	c.m[id] = s
	c.mu.Unlock()
	return s, nil
}

// keep drops the cached snapshots whose IDs are not in ids.
func (c *snapCache) keep(ids map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.m {
		if !ids[id] {
			delete(c.m, id)
		}
	}
}
