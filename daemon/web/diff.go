package web

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Verdicts of a diff row.
const (
	MovedForward  = "forward"
	MovedBackward = "backward"
	Appeared      = "appeared"
	Gone          = "gone"
	Changed       = "changed" // a source value without a known position
)

// Moment is one side of a diff: a time or the newest state.
type Moment struct {
	Ref  string    `json:"ref"`
	At   time.Time `json:"at"`
	Live bool      `json:"live,omitempty"`
	// Base is the snapshot the state starts from, Epoch the journal epoch
	// read ("" when the state is the snapshot itself).
	Base  string `json:"base"`
	Epoch string `json:"epoch,omitempty"`
}

// Diff is two moments side by side, as a restore's dry run shows them:
// Before is what the cluster holds at From, After what it holds at To.
type Diff struct {
	From       Moment          `json:"from"`
	To         Moment          `json:"to"`
	Connector  string          `json:"connector,omitempty"`
	Counts     map[string]int  `json:"counts"`
	Unchanged  int             `json:"unchanged"`
	Connectors []DiffConnector `json:"connectors"`
}

// DiffConnector is one connector's changed partitions.
type DiffConnector struct {
	Name string    `json:"name"`
	Type string    `json:"type"`
	Rows []DiffRow `json:"rows"`
}

// DiffRow is one partition that differs. Before and After are the sink
// offset or the source offset JSON ("" when absent); Delta the change of
// the offset or of the first known position field.
type DiffRow struct {
	Partition string   `json:"partition"`
	Before    string   `json:"before"`
	After     string   `json:"after"`
	Delta     *float64 `json:"delta,omitempty"`
	Field     string   `json:"field,omitempty"`
	Verdict   string   `json:"verdict"`
	// Change says it in words: "replays 120 records", "skips 40 records".
	Change string `json:"change"`
}

type diffSide struct {
	snap *snapshot.Snapshot
	m    Moment
}

// resolve reads the state at ref: "live" (or "now", "") for the newest
// state, an RFC 3339 time, a negative duration from now or a snapshot ID.
func (s *Server) resolve(ctx context.Context, ref string) (diffSide, error) {
	now := s.now()
	switch ref {
	case "", "live", "now":
		st, si, err := s.src.Store.StateAt(ctx, now)
		if err != nil {
			return diffSide{}, fmt.Errorf("read the newest state: %w", err)
		}
		return diffSide{st, Moment{Ref: "live", At: now, Live: true, Base: si.Base.ID, Epoch: si.Epoch}}, nil
	}
	if t, ok := parseMoment(ref, now); ok {
		st, si, err := s.src.Store.StateAt(ctx, t)
		if err != nil {
			return diffSide{}, fmt.Errorf("read state at %s: %w", ref, err)
		}
		return diffSide{st, Moment{Ref: ref, At: t, Base: si.Base.ID, Epoch: si.Epoch}}, nil
	}
	st, info, err := s.src.Store.Get(ctx, ref)
	if err != nil {
		return diffSide{}, fmt.Errorf("read %q (want live, an RFC 3339 time, -15m or a snapshot ID): %w", ref, err)
	}
	return diffSide{st, Moment{Ref: ref, At: info.CreatedAt, Base: info.ID}}, nil
}

// parseMoment reads an RFC 3339 time or a negative duration from now.
func parseMoment(s string, now time.Time) (time.Time, bool) {
	if strings.HasPrefix(s, "-") {
		d, err := time.ParseDuration(s)
		return now.Add(d), err == nil && d < 0
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err == nil
}

// diff compares two states, limited to one connector when name is set.
func diff(a, b diffSide, name string) *Diff {
	d := &Diff{From: a.m, To: b.m, Connector: name, Counts: map[string]int{}, Connectors: []DiffConnector{}}
	byConn := map[string]*DiffConnector{}
	add := func(conn, typ string, r DiffRow) {
		c := byConn[conn]
		if c == nil {
			c = &DiffConnector{Name: conn, Type: typ}
			byConn[conn] = c
		}
		c.Rows = append(c.Rows, r)
		d.Counts[r.Verdict]++
	}
	d.Unchanged += diffSinks(a.snap, b.snap, name, add)
	d.Unchanged += diffSources(a.snap, b.snap, name, add)
	for _, c := range byConn {
		slices.SortFunc(c.Rows, func(x, y DiffRow) int { return natural(x.Partition, y.Partition) })
		d.Connectors = append(d.Connectors, *c)
	}
	slices.SortFunc(d.Connectors, func(x, y DiffConnector) int { return strings.Compare(x.Name, y.Name) })
	return d
}

type sinkKey struct {
	conn string
	p    tp
}

func sinkOffsets(s *snapshot.Snapshot, name string) map[sinkKey]int64 {
	m := map[sinkKey]int64{}
	for _, g := range s.SinkGroups {
		conn := cmp.Or(g.Connector, g.Group)
		if name != "" && conn != name {
			continue
		}
		for _, o := range g.Offsets {
			m[sinkKey{conn, tp{o.Topic, o.Partition}}] = o.Offset
		}
	}
	return m
}

func diffSinks(a, b *snapshot.Snapshot, name string, add func(string, string, DiffRow)) (same int) {
	x, y := sinkOffsets(a, name), sinkOffsets(b, name)
	for k, before := range x {
		after, ok := y[k]
		switch {
		case !ok:
			add(k.conn, snapshot.TypeSink, DiffRow{Partition: k.p.String(), Before: itoa(before), Verdict: Gone, Change: "committed offset gone: the connector starts from its auto.offset.reset"})
		case after == before:
			same++
		default:
			delta := float64(after - before)
			r := DiffRow{Partition: k.p.String(), Before: itoa(before), After: itoa(after), Delta: &delta, Verdict: MovedForward,
				Change: fmt.Sprintf("skips %d records", after-before)}
			if after < before {
				r.Verdict, r.Change = MovedBackward, fmt.Sprintf("replays %d records", before-after)
			}
			add(k.conn, snapshot.TypeSink, r)
		}
	}
	for k, after := range y {
		if _, ok := x[k]; !ok {
			add(k.conn, snapshot.TypeSink, DiffRow{Partition: k.p.String(), After: itoa(after), Verdict: Appeared, Change: "new committed offset"})
		}
	}
	return same
}

type srcOff struct {
	conn, partition string
	value           []byte
}

func sourceOffsets(s *snapshot.Snapshot, name string) map[string]srcOff {
	m := map[string]srcOff{}
	for i := range s.SourceOffsets {
		so := &s.SourceOffsets[i]
		if so.Value == nil || (name != "" && so.Connector != name) {
			continue
		}
		m[string(so.Key)] = srcOff{so.Connector, string(so.SourcePartition), so.Value}
	}
	return m
}

func diffSources(a, b *snapshot.Snapshot, name string, add func(string, string, DiffRow)) (same int) {
	x, y := sourceOffsets(a, name), sourceOffsets(b, name)
	for k, before := range x {
		after, ok := y[k]
		switch {
		case !ok:
			add(before.conn, snapshot.TypeSource, DiffRow{Partition: before.partition, Before: string(before.value), Verdict: Gone, Change: "offset gone: the connector starts over (snapshot, first row, ...)"})
		case bytes.Equal(before.value, after.value):
			same++
		default:
			add(before.conn, snapshot.TypeSource, sourceRow(before, after))
		}
	}
	for k, after := range y {
		if _, ok := x[k]; !ok {
			add(after.conn, snapshot.TypeSource, DiffRow{Partition: after.partition, After: string(after.value), Verdict: Appeared, Change: "new source offset"})
		}
	}
	return same
}

func sourceRow(before, after srcOff) DiffRow {
	r := DiffRow{Partition: before.partition, Before: string(before.value), After: string(after.value), Verdict: Changed, Change: "value changed"}
	pa, pb := positions(before.value), positions(after.value)
	for _, f := range positionFields {
		va, oka := pa[f]
		vb, okb := pb[f]
		if !oka || !okb {
			continue
		}
		delta := vb - va
		r.Delta, r.Field = &delta, f
		switch {
		case delta > 0:
			r.Verdict, r.Change = MovedForward, fmt.Sprintf("%s +%s", f, fmtNum(delta))
		case delta < 0:
			r.Verdict, r.Change = MovedBackward, fmt.Sprintf("%s %s", f, fmtNum(delta))
		default:
			continue
		}
		break
	}
	return r
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
