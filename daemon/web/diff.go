package web

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Verdicts of a diff row: restore's kinds of change (the one vocabulary
// of diff and the page), a source value that changed refined to forward or
// backward by its first known position field.
const (
	MovedForward  = restore.KindForward
	MovedBackward = restore.KindBackward
	Appeared      = restore.KindAppeared
	Vanished      = restore.KindVanished
	Changed       = restore.KindChanged // a source value without a known position
	Stray         = restore.KindStray
	// Skipped is a sink offset a restore cannot commit here (its plan's).
	Skipped = "skipped"
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
		st, si, err := s.stateAt(ctx, now)
		if err != nil {
			return diffSide{}, fmt.Errorf("read the newest state: %w", err)
		}
		return diffSide{st, Moment{Ref: "live", At: now, Live: true, Base: si.Base.ID, Epoch: si.Epoch}}, nil
	}
	t, err := snapshot.ParseMoment(ref, now)
	if errors.Is(err, snapshot.ErrNoTimeZone) {
		return diffSide{}, fmt.Errorf("%q: %w", ref, err)
	}
	if err == nil {
		st, si, err := s.stateAt(ctx, t)
		if errors.Is(err, journal.ErrNotRestorable) && strings.HasPrefix(ref, "-") {
			// "The last hour" of a store younger than that starts at its
			// first snapshot (the page's links say -1h).
			if first, ok := s.firstFull(ctx, t); ok {
				t = first
				st, si, err = s.stateAt(ctx, t)
			}
		}
		if err != nil {
			return diffSide{}, fmt.Errorf("read state at %s: %w", ref, err)
		}
		return diffSide{st, Moment{Ref: ref, At: t, Base: si.Base.ID, Epoch: si.Epoch}}, nil
	}
	st, info, err := s.src.Store.Snapshots().GetWith(ctx, ref, nil)
	if err != nil {
		return diffSide{}, fmt.Errorf("read %q (want live, an RFC 3339 time, -15m or a snapshot ID): %w", ref, err)
	}
	return diffSide{st, Moment{Ref: ref, At: info.CreatedAt, Base: info.ID}}, nil
}

// firstFull is when the oldest full snapshot after t was taken: the
// earliest restorable moment of a store whose history starts after t.
func (s *Server) firstFull(ctx context.Context, t time.Time) (time.Time, bool) {
	infos, err := s.src.Store.Snapshots().List(ctx)
	if err != nil {
		return time.Time{}, false
	}
	var first time.Time
	for _, i := range infos {
		if i.Kind == snapshot.KindFull && i.CreatedAt.After(t) && (first.IsZero() || i.CreatedAt.Before(first)) {
			first = i.CreatedAt
		}
	}
	return first, !first.IsZero()
}

// diff compares two states, limited to one connector when name is set:
// restore.Compare, the comparison of offsetkeeper diff, put in rows.
func diff(a, b diffSide, name string) *Diff {
	d := &Diff{From: a.m, To: b.m, Connector: name, Counts: map[string]int{}, Connectors: []DiffConnector{}}
	var scope []string
	if name != "" {
		scope = []string{name}
	}
	cmp := restore.Compare(a.snap, b.snap, scope)
	d.Unchanged = cmp.Unchanged
	byConn := map[string]*DiffConnector{}
	for _, ch := range cmp.Changes {
		c := byConn[ch.Connector]
		if c == nil {
			c = &DiffConnector{Name: ch.Connector, Type: ch.Type}
			byConn[ch.Connector] = c
		}
		r := diffRow(ch)
		c.Rows = append(c.Rows, r)
		d.Counts[r.Verdict]++
	}
	for _, c := range byConn {
		slices.SortFunc(c.Rows, func(x, y DiffRow) int { return natural(x.Partition, y.Partition) })
		d.Connectors = append(d.Connectors, *c)
	}
	slices.SortFunc(d.Connectors, func(x, y DiffConnector) int { return strings.Compare(x.Name, y.Name) })
	return d
}

// planDiff is a restore plan in rows: from (the live state) before, to
// (the state restored) after, every key and offset compared, as the
// plan's own actions say (the CLI's dry run prints the same plan).
func planDiff(plan *restore.Plan, from, to Moment, name string) *Diff {
	d := &Diff{From: from, To: to, Connector: name, Counts: map[string]int{}, Connectors: []DiffConnector{}}
	names := map[string]string{}
	for _, cp := range plan.Connectors {
		c := DiffConnector{Name: cp.Name, Type: cp.Type}
		if cp.Source != nil {
			for _, ch := range cp.Source.Changes() {
				if ch.Action == restore.Unchanged {
					d.Unchanged++
					continue
				}
				c.Rows = append(c.Rows, planSourceRow(cp.Name, ch, names))
			}
		}
		if cp.Sink != nil {
			for _, ch := range cp.Sink.Changes() {
				if ch.Action == restore.Unchanged {
					d.Unchanged++
					continue
				}
				c.Rows = append(c.Rows, planSinkRow(ch))
			}
		}
		if len(c.Rows) == 0 {
			continue
		}
		for _, r := range c.Rows {
			d.Counts[r.Verdict]++
		}
		slices.SortFunc(c.Rows, func(x, y DiffRow) int { return natural(x.Partition, y.Partition) })
		d.Connectors = append(d.Connectors, c)
	}
	slices.SortFunc(d.Connectors, func(x, y DiffConnector) int { return strings.Compare(x.Name, y.Name) })
	return d
}

// planSourceRow is one source key a plan writes: Old is the live value,
// New the one restored (nil: a tombstone).
func planSourceRow(conn string, ch restore.SourceChange, names map[string]string) DiffRow {
	part := string(ch.Key)
	if _, p, err := snapshot.ParseSourceKey(ch.Key, names); err == nil && len(p) > 0 {
		part = string(p)
	}
	switch {
	case ch.Stray && ch.Action == restore.Changed:
		return DiffRow{Partition: part, Before: string(ch.Old), After: string(ch.New), Verdict: Stray,
			Change: fmt.Sprintf("the snapshot's copy on %s/%d, off the key's murmur2 partition, restored there too: a worker may read it instead", ch.Topic, ch.Partition)}
	case ch.Stray:
		return DiffRow{Partition: part, Before: string(ch.Old), Verdict: Stray,
			Change: fmt.Sprintf("a stray copy on %s/%d, off the key's murmur2 partition, tombstoned: a worker may read it instead", ch.Topic, ch.Partition)}
	case ch.Action == restore.Removed:
		return DiffRow{Partition: part, Before: string(ch.Old), Verdict: Vanished, Change: "offset gone (tombstoned): the connector starts over (snapshot, first row, ...)"}
	case ch.Action == restore.Added:
		return DiffRow{Partition: part, After: string(ch.New), Verdict: Appeared, Change: "new source offset"}
	}
	return sourceRow(srcOff{conn, part, ch.Old}, srcOff{conn, part, ch.New})
}

// planSinkRow is one sink offset a plan commits, deletes or skips.
func planSinkRow(ch restore.SinkChange) DiffRow {
	r := DiffRow{Partition: tp{ch.Topic, ch.Partition}.String()}
	if ch.Old >= 0 {
		r.Before = itoa(ch.Old)
	}
	if ch.New >= 0 {
		r.After = itoa(ch.New)
	}
	switch ch.Action {
	case restore.Removed:
		r.Verdict, r.Change = Vanished, "committed offset gone (deleted): the connector starts from its auto.offset.reset"
	case restore.Added:
		r.Verdict, r.Change = Appeared, "new committed offset"
	case restore.Skipped:
		r.Verdict, r.Change = Skipped, ch.Reason
	default:
		delta := float64(ch.New - ch.Old)
		r.Delta = &delta
		r.Verdict, r.Change = MovedForward, fmt.Sprintf("skips %d records", ch.New-ch.Old)
		if delta < 0 {
			r.Verdict, r.Change = MovedBackward, fmt.Sprintf("replays %d records", ch.Old-ch.New)
		}
	}
	return r
}

// diffRow is one change as the page shows it.
func diffRow(ch restore.Change) DiffRow {
	if ch.Type == snapshot.TypeSink {
		r := DiffRow{Partition: tp{ch.Topic, ch.Partition}.String(), Verdict: ch.Kind}
		if ch.OldOffset != nil {
			r.Before = itoa(*ch.OldOffset)
		}
		if ch.NewOffset != nil {
			r.After = itoa(*ch.NewOffset)
		}
		switch ch.Kind {
		case restore.KindVanished:
			r.Change = "committed offset gone: the connector starts from its auto.offset.reset"
		case restore.KindAppeared:
			r.Change = "new committed offset"
		default:
			delta := float64(*ch.NewOffset - *ch.OldOffset)
			r.Delta = &delta
			r.Change = fmt.Sprintf("skips %d records", *ch.NewOffset-*ch.OldOffset)
			if delta < 0 {
				r.Change = fmt.Sprintf("replays %d records", *ch.OldOffset-*ch.NewOffset)
			}
		}
		return r
	}
	part := string(ch.SourcePartition)
	if part == "" {
		part = string(ch.Key)
	}
	before, after := srcOff{ch.Connector, part, ch.Old}, srcOff{ch.Connector, part, ch.New}
	switch ch.Kind {
	case restore.KindVanished:
		return DiffRow{Partition: part, Before: string(ch.Old), Verdict: Vanished, Change: "offset gone: the connector starts over (snapshot, first row, ...)"}
	case restore.KindAppeared:
		return DiffRow{Partition: part, After: string(ch.New), Verdict: Appeared, Change: "new source offset"}
	case restore.KindStray:
		return DiffRow{Partition: part, Before: string(ch.Old), After: string(ch.New), Verdict: Stray,
			Change: fmt.Sprintf("a stray copy on %s/%d, off the key's murmur2 partition: a worker may read it instead", ch.Topic, ch.Partition)}
	}
	return sourceRow(before, after)
}

type srcOff struct {
	conn, partition string
	value           []byte
}

// sourceRow is a changed source offset, its verdict by snapshot.Movement:
// the rule the journal's events judge a rewind by.
func sourceRow(before, after srcOff) DiffRow {
	r := DiffRow{Partition: before.partition, Before: string(before.value), After: string(after.value), Verdict: Changed, Change: "value changed"}
	f, delta, ok := snapshot.Movement(before.value, after.value)
	if !ok {
		return r
	}
	r.Delta, r.Field = &delta, f
	if delta > 0 {
		r.Verdict, r.Change = MovedForward, fmt.Sprintf("%s +%s", f, fmtNum(delta))
	} else {
		r.Verdict, r.Change = MovedBackward, fmt.Sprintf("%s %s", f, fmtNum(delta))
	}
	return r
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
