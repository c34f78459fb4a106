package web

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
)

// eventStatus is the board status an event gives its connector.
func eventStatus(kind string) string {
	if strings.HasSuffix(kind, "-rewound") {
		return StatusRewound
	}
	return StatusReset
}

// connectorEvents are the window's events about name (or its group).
func connectorEvents(w *world, name, group string) []snapshot.Event {
	out := []snapshot.Event{}
	for _, ev := range w.hist.events {
		if ev.Connector == name || (group != "" && ev.Group == group) {
			out = append(out, ev)
		}
	}
	return out
}

func (s *Server) row(w *world, name string) ConnectorRow {
	r := ConnectorRow{Name: name, State: "DELETED", Type: snapshot.TypeUnknown}
	if c, ok := findConnector(w.state, name); ok {
		r.Type, r.Class, r.Tasks = c.Type, c.Class, c.Tasks
		r.State = cmp.Or(c.TargetState, snapshot.StateStarted)
		if !c.HasConfig {
			r.State = "NO CONFIG"
		}
		r.Group = c.Group
	}
	if g, ok := findGroup(w.state, name); ok {
		r.Group, r.GroupState, r.Members = g.Group, g.State, g.Members
		if g.Type != "classic" {
			r.GroupType = g.Type
		}
		if r.Type == snapshot.TypeUnknown {
			r.Type = snapshot.TypeSink
		}
	}
	r.Events = connectorEvents(w, name, r.Group)
	for _, ev := range r.Events {
		if r.Type == snapshot.TypeUnknown && strings.HasPrefix(ev.Kind, "sink-") {
			r.Type = snapshot.TypeSink
		}
	}
	s.restorable(w, &r)
	r.Progress = progress(w, &r)
	r.Lag = groupLag(w, r.Group)
	s.status(w, &r)
	s.workerState(w, &r)
	return r
}

func findConnector(s *snapshot.Snapshot, name string) (snapshot.Connector, bool) {
	if s == nil {
		return snapshot.Connector{}, false
	}
	for _, c := range s.Connectors {
		if c.Name == name {
			return c, true
		}
	}
	return snapshot.Connector{}, false
}

func findGroup(s *snapshot.Snapshot, name string) (snapshot.SinkGroup, bool) {
	if s == nil {
		return snapshot.SinkGroup{}, false
	}
	for _, g := range s.SinkGroups {
		if g.Connector == name {
			return g, true
		}
	}
	return snapshot.SinkGroup{}, false
}

// holds reports whether a snapshot holds the connector.
func holds(info snapshot.Info, name string) bool {
	return info.Kind == snapshot.KindFull || slices.Contains(info.Scope, name)
}

// restorable sets the row's last snapshot and restorable span.
func (s *Server) restorable(w *world, r *ConnectorRow) {
	for _, info := range w.infos {
		if !holds(info, r.Name) {
			continue
		}
		if r.RestorableFrom.IsZero() {
			r.RestorableFrom = info.CreatedAt
		}
		r.LastSnapshot, r.LastSnapshotAt = info.ID, info.CreatedAt
	}
	if r.RestorableFrom.IsZero() {
		return
	}
	r.RestorableTo = r.LastSnapshotAt
	j := s.journal(w)
	if j.Live {
		r.RestorableTo = w.now
	} else if j.To.After(r.RestorableTo) {
		r.RestorableTo = j.To
	}
}

// restoredAfter returns the newest undo snapshot of a restore of
// connector taken after t, "" when none ran since.
func restoredAfter(infos []snapshot.Info, connector string, t time.Time) string {
	id := ""
	for _, i := range infos {
		if i.EffectiveKind() == snapshot.KindUndo && i.CreatedAt.After(t) && slices.Contains(i.Scope, connector) {
			id = i.ID
		}
	}
	return id
}

// status sets the row's status: a reset or rewind in the window, a
// journal gap in it, a sink group that has not moved for StallAfter with
// lag, or OK.
func (s *Server) status(w *world, r *ConnectorRow) {
	r.Status = StatusOK
	set := func(st, why string) {
		if statusRank[st] < statusRank[r.Status] {
			r.Status = st
		}
		r.Why = append(r.Why, why)
	}
	for _, ev := range r.Events {
		what := fmt.Sprintf("%s at %s (%s)", ev.Kind, ev.Time.Format(time.RFC3339), english.Count(ev.Count, "offset", "offsets"))
		// offsetkeeper's own restore is no reset, and a reset a restore of
		// the connector ran after is put back: neither keeps the status.
		if id := snapshot.OwnRestore(w.infos, ev.Kind, r.Name, ev.Before, ev.Time); id != "" {
			r.Why = append(r.Why, fmt.Sprintf("restored at %s (undo snapshot %s)", ev.Time.Format(time.RFC3339), id))
			continue
		}
		if id := restoredAfter(w.infos, r.Name, ev.Time); id != "" {
			if !configLostStill(ev.Kind, r.State) {
				r.Why = append(r.Why, what+", then restored (undo snapshot "+id+")")
				continue
			}
			what += ", then its offsets restored (undo snapshot " + id + ") but not the connector: " + stillGone
		}
		set(eventStatus(ev.Kind), what)
	}
	for _, g := range w.hist.gaps {
		set(StatusGap, fmt.Sprintf("journal gap %s to %s: %s", g.From.Format(time.RFC3339), g.To.Format(time.RFC3339), g.Reason))
	}
	if r.Lag != nil && *r.Lag > 0 && r.State == snapshot.StateStarted && len(r.Progress) > 0 {
		first, last := r.Progress[0], lastChange(r.Progress)
		if w.now.Sub(first.T) >= s.stallAfter() && w.now.Sub(last) >= s.stallAfter() {
			set(StatusStalled, fmt.Sprintf("no commit since %s with lag %d", last.Format(time.RFC3339), *r.Lag))
		}
	}
}

// lastChange is when a series last changed value (its start if never).
func lastChange(pts []Point) time.Time {
	for i := len(pts) - 1; i > 0; i-- {
		if pts[i].V != pts[i-1].V {
			return pts[i].T
		}
	}
	return pts[0].T
}

// progress is the row's sparkline.
func progress(w *world, r *ConnectorRow) []Point {
	if r.Group != "" {
		var all [][]Point
		for _, pts := range w.hist.sinks[r.Group] {
			all = append(all, pts)
		}
		return stepSum(all)
	}
	var changes []time.Time
	var firsts [][]Point
	for k, s := range w.hist.sources {
		if k.Connector != r.Name {
			continue
		}
		changes = append(changes, s.Changes...)
		changes = append(changes, s.Removed...)
		if f := firstField(s); f != "" {
			firsts = append(firsts, s.Fields[f])
		}
	}
	if len(changes) == 0 {
		return stepSum(firsts)
	}
	slices.SortFunc(changes, time.Time.Compare)
	out := []Point{{w.from, 0}}
	for i, t := range changes {
		out = append(out, Point{t, float64(i + 1)})
	}
	return append(out, Point{w.now, float64(len(changes))})
}

func firstField(s *srcSeries) string {
	for _, f := range positionFields {
		if len(s.Fields[f]) > 0 {
			return f
		}
	}
	return ""
}

// stepSum adds step functions: at each time any series has a point, the
// sum of every series' value then (a series counts its first value before
// it starts, so a late first observation makes no jump).
func stepSum(series [][]Point) []Point {
	var times []time.Time
	for _, s := range series {
		for _, p := range s {
			times = append(times, p.T)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	times = slices.Compact(times)
	idx := make([]int, len(series))
	out := make([]Point, 0, len(times))
	for _, t := range times {
		var sum float64
		for i, s := range series {
			for idx[i]+1 < len(s) && !s[idx[i]+1].T.After(t) {
				idx[i]++
			}
			sum += s[idx[i]].V
		}
		out = append(out, Point{t, sum})
	}
	return out
}

func groupLag(w *world, group string) *int64 {
	if w.logEnd == nil || group == "" {
		return nil
	}
	g, ok := findGroupByName(w.state, group)
	if !ok {
		return nil
	}
	var lag int64
	for _, o := range g.Offsets {
		if end, ok := w.logEnd[o.Topic][o.Partition]; ok && end > o.Offset {
			lag += end - o.Offset
		}
	}
	return &lag
}

func findGroupByName(s *snapshot.Snapshot, group string) (snapshot.SinkGroup, bool) {
	if s == nil {
		return snapshot.SinkGroup{}, false
	}
	for _, g := range s.SinkGroups {
		if g.Group == group {
			return g, true
		}
	}
	return snapshot.SinkGroup{}, false
}

// ConnectorPage is one connector: its row and a plot per partition.
type ConnectorPage struct {
	ConnectorRow
	Now        time.Time       `json:"now"`
	From       time.Time       `json:"from"`
	LogEnd     bool            `json:"log_end"`
	Partitions []PartitionPlot `json:"partitions"`
	Gaps       []Gap           `json:"gaps"`
	Notes      []string        `json:"notes,omitempty"`
}

// PartitionPlot is one plotted line: a sink partition's committed offset,
// or one position field of a source partition (Field), or, for a source
// partition without a known position, its change markers.
type PartitionPlot struct {
	Partition string      `json:"partition"`
	Field     string      `json:"field"`
	Points    []Point     `json:"points"`
	Changes   []time.Time `json:"changes,omitempty"`
	Removed   []time.Time `json:"removed,omitempty"`
	// Committed, LogEnd and Lag: a sink partition's newest committed
	// offset and, when log ends are known, its log end and their gap.
	Committed *int64 `json:"committed,omitempty"`
	LogEnd    *int64 `json:"log_end,omitempty"`
	Lag       *int64 `json:"lag,omitempty"`
}

func (s *Server) connectorPage(w *world, name string) (*ConnectorPage, bool) {
	if !slices.Contains(connectorNames(w), name) {
		return nil, false
	}
	p := &ConnectorPage{ConnectorRow: s.row(w, name), Now: w.now, From: w.from, LogEnd: w.logEnd != nil,
		Gaps: s.journal(w).Gaps, Notes: w.notes, Partitions: []PartitionPlot{}}
	if p.Group != "" {
		p.Partitions = sinkPlots(w, p.Group)
	} else {
		p.Partitions = sourcePlots(w, name)
	}
	return p, true
}

func sinkPlots(w *world, group string) []PartitionPlot {
	out := []PartitionPlot{}
	for part, pts := range w.hist.sinks[group] {
		pp := PartitionPlot{Partition: part.String(), Field: "committed offset", Points: pts}
		c := int64(pts[len(pts)-1].V)
		pp.Committed = &c
		if end, ok := w.logEnd[part.Topic][part.Partition]; ok {
			lag := max(end-c, 0)
			pp.LogEnd, pp.Lag = &end, &lag
		}
		out = append(out, pp)
	}
	slices.SortFunc(out, func(a, b PartitionPlot) int { return natural(a.Partition, b.Partition) })
	return out
}

func sourcePlots(w *world, name string) []PartitionPlot {
	out := []PartitionPlot{}
	for k, s := range w.hist.sources {
		if k.Connector != name {
			continue
		}
		n := 0
		for _, f := range positionFields {
			if pts := s.Fields[f]; len(pts) > 0 {
				out = append(out, PartitionPlot{Partition: s.Partition, Field: f, Points: pts, Changes: s.Changes, Removed: s.Removed})
				n++
			}
		}
		if n == 0 {
			out = append(out, PartitionPlot{Partition: s.Partition, Field: "changes", Points: []Point{}, Changes: s.Changes, Removed: s.Removed})
		}
	}
	slices.SortStableFunc(out, func(a, b PartitionPlot) int {
		return cmp.Or(strings.Compare(a.Partition, b.Partition), cmp.Compare(slices.Index(positionFields, a.Field), slices.Index(positionFields, b.Field)))
	})
	return out
}

// natural orders "topic-10" after "topic-9".
func natural(a, b string) int {
	ia, ib := strings.LastIndexByte(a, '-'), strings.LastIndexByte(b, '-')
	if ia > 0 && ib > 0 && a[:ia] == b[:ib] {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	}
	return strings.Compare(a, b)
}
