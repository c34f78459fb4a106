package web

import (
	"context"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Timeline is the store over time: snapshots, journal epochs, gaps and
// resets; with At set, the restore plan for that moment.
type Timeline struct {
	Now       time.Time           `json:"now"`
	From      time.Time           `json:"from"`
	Snapshots []snapshot.Info     `json:"snapshots"`
	Epochs    []snapshot.Coverage `json:"epochs"`
	Gaps      []Gap               `json:"gaps"`
	Events    []snapshot.Event    `json:"events"`
	Plan      *Plan               `json:"plan,omitempty"`
}

// Plan is what `restore --at At [--connector C] --dry-run` would show:
// the newest state (Before) against the state at At (After, what the
// restore writes). The page only shows it; it never writes.
type Plan struct {
	At        time.Time `json:"at"`
	Connector string    `json:"connector,omitempty"`
	// Command is Commands.DryRun; Commands are the restore in its two
	// forms, as the CLI prints them (restore.CommandSettings).
	Command  string           `json:"command"`
	Commands restore.Commands `json:"commands"`
	// StopsConnectors says that Commands.Run stops and resumes the
	// connectors (a Connect URL is known); else stop them first.
	StopsConnectors bool `json:"stops_connectors"`
	// StopFirst is what to do before Commands.Run, or "" (see
	// restore.CommandSettings.StopFirst).
	StopFirst string `json:"stop_first,omitempty"`
	// Counts are the plan's totals, restore's own (restore.PlanStates):
	// what restore --dry-run counts for the same two states.
	Counts *restore.CountsDocument `json:"counts,omitempty"`
	// Diff is the plan in rows: every key and offset it writes.
	Diff *Diff `json:"diff,omitempty"`
	// Warnings are the plan's.
	Warnings []string `json:"warnings,omitempty"`
	// Precision and Notes say how exact the state at At is.
	Precision []string `json:"precision,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func (s *Server) timeline(w *world) *Timeline {
	t := &Timeline{Now: w.now, From: w.from, Snapshots: []snapshot.Info{}, Epochs: []snapshot.Coverage{},
		Gaps: s.journal(w).Gaps, Events: w.hist.events}
	if t.Events == nil {
		t.Events = []snapshot.Event{}
	}
	for _, info := range w.infos {
		if !info.CreatedAt.Before(w.from) {
			t.Snapshots = append(t.Snapshots, info)
		}
	}
	for _, c := range w.coverage {
		if !c.To.Before(w.from) {
			t.Epochs = append(t.Epochs, c)
		}
	}
	return t
}

// plan computes the restore plan for at: the newest state against the
// state at at, limited to connector when set.
func (s *Server) plan(ctx context.Context, at time.Time, connector string) *Plan {
	var cmds restore.Commands
	settings := s.commands(ctx)
	stop := settings.StopFirst()
	if connector != "" {
		cmds = settings.At(at, connector)
		stop = settings.StopFirstOf(connector)
	} else {
		cmds = settings.At(at)
	}
	p := &Plan{At: at, Connector: connector, Command: cmds.DryRun, Commands: cmds, StopsConnectors: settings.ConnectURL, StopFirst: stop}
	now, err := s.resolve(ctx, "live")
	if err != nil {
		p.Error = err.Error()
		return p
	}
	st, si, err := s.stateAt(ctx, at)
	if err != nil {
		p.Error = "read state at " + at.UTC().Format(time.RFC3339Nano) + ": " + err.Error()
		return p
	}
	then := diffSide{st, Moment{Ref: at.UTC().Format(time.RFC3339Nano), At: at, Base: si.Base.ID, Epoch: si.Epoch}}
	if cmds, note, ok := deletedCommands(settings, p, st, now.snap); ok { // plandeleted.go
		p.Command, p.Commands = cmds.DryRun, cmds
		if note != "" {
			p.Notes = append(p.Notes, note)
		}
	}
	var opts restore.Options
	if connector != "" {
		opts.Connectors = []string{connector}
	}
	live, warnings := s.withSinkTopics(ctx, then.snap, now.snap)
	plan, err := restore.PlanStates(then.snap, live, opts)
	if err != nil {
		p.Error = "plan the restore: " + err.Error()
		return p
	}
	counts := plan.CountsDocument()
	p.Counts, p.Warnings = &counts, append(warnings, plan.Warnings...)
	p.Diff = planDiff(plan, now.m, then.m, connector)
	p.Precision, p.Notes = si.Precision, append(append(p.Notes, si.Notes...), plan.Notes...)
	if si.Fallback {
		p.Notes = append(p.Notes, "no journal covers this moment: the state is snapshot "+si.Base.ID)
	}
	return p
}

// withSinkTopics is live with the live IDs of then's sink topics, read
// through Source.SinkTopics (live itself is the journal's state, which
// keeps no topic IDs), so that the plan's sink guard sees a topic
// recreated since then; live as it is without the reader or topics.
func (s *Server) withSinkTopics(ctx context.Context, then, live *snapshot.Snapshot) (*snapshot.Snapshot, []string) {
	if s.src.SinkTopics == nil || len(then.SinkTopics) == 0 {
		return live, nil
	}
	names := make([]string, 0, len(then.SinkTopics))
	for _, t := range then.SinkTopics {
		names = append(names, t.Name)
	}
	cp := *live // the journal's state is shared with the other views
	var warnings []string
	cp.SinkTopics, warnings = s.src.SinkTopics(ctx, names)
	return &cp, warnings
}
