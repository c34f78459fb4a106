package web

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Statuses of a connector on the board, worst first.
const (
	StatusFailed  = "FAILED"
	StatusReset   = "RESET"
	StatusRewound = "REWOUND"
	StatusGap     = "GAP"
	StatusStalled = "STALLED"
	StatusOK      = "OK"
)

var statusRank = map[string]int{StatusFailed: 0, StatusReset: 1, StatusRewound: 2, StatusGap: 3, StatusStalled: 4, StatusOK: 5}

// maxSnapPoints is how many of the newest snapshots in the window add
// their offsets to the plots (the journal adds every change between).
const maxSnapPoints = 24

// world is everything one page view is made from.
type world struct {
	now      time.Time
	from     time.Time // the plots' window starts here
	infos    []snapshot.Info
	coverage []snapshot.Coverage
	state    *snapshot.Snapshot // the newest state (journal) or snapshot
	stateAt  *journal.StateInfo
	hist     *history
	logEnd   map[string]map[int32]int64 // nil: unknown (no brokers)
	status   statusWorld
	notes    []string
}

// load reads the store: the snapshot list, the journal's coverage, the
// newest state and the history of the window.
func (s *Server) load(ctx context.Context) (*world, error) {
	now := s.now()
	w := &world{now: now, from: now.Add(-s.window())}
	var err error
	if w.infos, err = s.src.Store.Pins().Snapshots(ctx); err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	if w.coverage, err = s.src.Store.Journal().Coverage(ctx); err != nil {
		return nil, fmt.Errorf("read journal coverage: %w", err)
	}
	w.from = dataFrom(w)
	w.hist = newHistory(w.from, now)
	w.hist.only = s.epochsOf(ctx, w.infos) // cluster.go
	if err := w.hist.readJournal(ctx, s.src.Store, &s.segs); err != nil {
		return nil, err
	}
	w.hist.coverageGaps(w.coverage, now)
	if len(w.infos) > 0 {
		w.state, w.stateAt, err = s.stateAt(ctx, now)
		if err != nil {
			w.notes = append(w.notes, "newest state: "+err.Error())
			w.state = nil
		}
	}
	s.addSnapshots(ctx, w)
	if w.state != nil {
		w.hist.addState(w.state, now)
	}
	w.hist.finish()
	if s.src.LogEnd != nil && w.state != nil {
		w.logEnd, err = s.src.LogEnd(ctx, sinkTopics(w.state))
		if err != nil {
			w.notes = append(w.notes, "log end offsets: "+err.Error())
			w.logEnd = nil
		}
	}
	w.status = s.statuses(ctx)
	if w.status.note != "" {
		w.notes = append(w.notes, w.status.note)
	}
	return w, nil
}

// addSnapshots adds the offsets of the newest snapshots in the window to
// the history.
func (s *Server) addSnapshots(ctx context.Context, w *world) {
	ids := map[string]bool{}
	n := 0
	for i := len(w.infos) - 1; i >= 0 && n < maxSnapPoints; i-- {
		info := w.infos[i]
		if info.CreatedAt.Before(w.from) {
			break
		}
		ids[info.ID] = true
		n++
		snap, err := s.snaps.get(ctx, s.src.Store, info.ID)
		if err != nil {
			w.notes = append(w.notes, fmt.Sprintf("snapshot %s: %v", info.ID, err))
			continue
		}
		w.hist.addState(snap, info.CreatedAt)
	}
	s.snaps.keep(ids)
}

// dataFrom is where the plots start: the window's start, or later when
// the store holds nothing that old (a new store's plots are not squeezed
// into the right edge of 24 hours).
func dataFrom(w *world) time.Time {
	first := w.now
	for _, info := range w.infos {
		if !info.CreatedAt.Before(w.from) && info.CreatedAt.Before(first) {
			first = info.CreatedAt
		}
	}
	for _, c := range w.coverage {
		if !c.To.Before(w.from) && c.From.Before(first) {
			first = c.From
		}
	}
	if first.Before(w.from) {
		return w.from
	}
	span := w.now.Sub(first)
	if span < time.Minute {
		span = time.Minute
	}
	return first.Add(-span / 20).Truncate(time.Second)
}

func sinkTopics(s *snapshot.Snapshot) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range s.SinkGroups {
		for _, o := range g.Offsets {
			if !seen[o.Topic] {
				seen[o.Topic] = true
				out = append(out, o.Topic)
			}
		}
	}
	slices.Sort(out)
	return out
}

// journalTo is where the journal ends: zero without a journal.
func (w *world) journalTo() time.Time {
	var t time.Time
	for _, c := range w.coverage {
		if c.To.After(t) {
			t = c.To
		}
	}
	return t
}

// Board is the home page: one row per connector.
type Board struct {
	Now     time.Time `json:"now"`
	From    time.Time `json:"from"`
	Window  string    `json:"window"`
	Journal Journal   `json:"journal"`
	// LogEnd says whether log end offsets (and so sink lag) are known: the
	// daemon reads them from Kafka, serve without brokers does not.
	LogEnd bool `json:"log_end"`
	// StatusTopic says whether Connect's status topic was read: read,
	// missing, error (see Notes) or off (serve without brokers).
	StatusTopic string           `json:"status_topic"`
	Counts      map[string]int   `json:"counts"`
	Connectors  []ConnectorRow   `json:"connectors"`
	Snapshots   int              `json:"snapshots"`
	Newest      *snapshot.Info   `json:"newest_snapshot,omitempty"`
	LastDrill   *LastDrill       `json:"last_drill,omitempty"`  // drill.go
	Standby     *Standby         `json:"standby,omitempty"`     // standby.go
	StoreCheck  *StoreCheck      `json:"store_check,omitempty"` // storecheck.go
	Events      []snapshot.Event `json:"events"`
	Notes       []string         `json:"notes,omitempty"`
}

// Journal says what the journal covers.
type Journal struct {
	On bool `json:"on"`
	// To is where the journal ends; Live that it is being written (its end
	// is recent).
	To   time.Time `json:"to,omitzero"`
	Live bool      `json:"live"`
	Gaps []Gap     `json:"gaps"`
}

// ConnectorRow is one connector on the board.
type ConnectorRow struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Class string `json:"class,omitempty"`
	// State is the target state from the config topic (STARTED, PAUSED,
	// STOPPED), or DELETED for a connector gone since the window began.
	State      string `json:"state"`
	Tasks      int    `json:"tasks"`
	Group      string `json:"group,omitempty"`
	GroupState string `json:"group_state,omitempty"`
	// GroupType is the group's type when it is not classic: "consumer"
	// for a KIP-848 consumer-protocol group (Kafka 4.0+).
	GroupType string `json:"group_type,omitempty"`
	Members   int    `json:"members,omitempty"`
	// Worker is what the status topic says (nil when it was not read or
	// has nothing of the connector); WorkerSummary is the state cell's
	// text of it ("RUNNING · 2/2 tasks running", "FAILED: <first line of
	// the trace>", "no status topic", "not in the status topic"), and
	// Mismatch says when the worker's settled state is not the target's.
	Worker        *WorkerState `json:"worker,omitempty"`
	WorkerSummary string       `json:"worker_summary,omitempty"`
	Mismatch      string       `json:"mismatch,omitempty"`
	// Status is FAILED, RESET, REWOUND, GAP, STALLED or OK; Why says why.
	Status string   `json:"status"`
	Why    []string `json:"why,omitempty"`
	// LastSnapshot is the newest snapshot holding the connector.
	LastSnapshot   string    `json:"last_snapshot,omitempty"`
	LastSnapshotAt time.Time `json:"last_snapshot_at,omitzero"`
	// RestorableFrom is the oldest moment a restore --at can go back to
	// for it; RestorableTo the newest (now when the journal is live).
	RestorableFrom time.Time `json:"restorable_from,omitzero"`
	RestorableTo   time.Time `json:"restorable_to,omitzero"`
	// Progress is the sparkline: the sum of committed offsets (sink) or
	// the number of offset records written (source) over the window.
	Progress []Point `json:"progress"`
	// Lag is the sum of log end minus committed offset over the group's
	// partitions, when log ends are known.
	Lag *int64 `json:"lag,omitempty"`
	// Events are the resets of the window.
	Events []snapshot.Event `json:"events"`
}

func (s *Server) board(w *world) *Board {
	b := &Board{Now: w.now, From: w.from, Window: s.window().String(), LogEnd: w.logEnd != nil, Counts: map[string]int{},
		StatusTopic: w.status.state,
		Snapshots:   len(w.infos), Events: w.hist.events, Notes: w.notes}
	if b.Events == nil {
		b.Events = []snapshot.Event{}
	}
	b.Journal = s.journal(w)
	if n := len(w.infos); n > 0 {
		b.Newest = &w.infos[n-1]
	}
	for _, name := range connectorNames(w) {
		row := s.row(w, name)
		b.Counts[row.Status]++
		b.Connectors = append(b.Connectors, row)
	}
	if b.Connectors == nil {
		b.Connectors = []ConnectorRow{}
	}
	slices.SortStableFunc(b.Connectors, func(a, c ConnectorRow) int {
		return cmp.Or(cmp.Compare(statusRank[a.Status], statusRank[c.Status]), strings.Compare(a.Name, c.Name))
	})
	return b
}

func (s *Server) journal(w *world) Journal {
	j := Journal{On: w.hist.journal, To: w.journalTo(), Gaps: w.hist.gaps}
	j.Live = !j.To.IsZero() && w.now.Sub(j.To) <= snapshot.JournalLive
	if j.Gaps == nil {
		j.Gaps = []Gap{}
	}
	return j
}

// connectorNames are the connectors of the newest state and those the
// window's events name, sorted.
func connectorNames(w *world) []string {
	seen := map[string]bool{}
	if w.state != nil {
		for _, c := range w.state.Connectors {
			seen[c.Name] = true
		}
	}
	for _, ev := range w.hist.events {
		if ev.Connector != "" {
			seen[ev.Connector] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
