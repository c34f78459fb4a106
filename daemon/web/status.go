package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// What the board says of the status topic (Board.StatusTopic).
const (
	statusTopicRead    = "read"
	statusTopicMissing = "missing"
	statusTopicError   = "error"
	statusTopicOff     = "off"
)

// maxStatusWarnings is how many of the status topic's warnings the notes
// list.
const maxStatusWarnings = 5

// WorkerState is what the workers last reported of a connector in the
// status topic.
type WorkerState struct {
	// State is the connector's reported state (RUNNING, PAUSED, STOPPED,
	// FAILED, UNASSIGNED, RESTARTING); "" when only its tasks reported.
	State    string `json:"state,omitempty"`
	WorkerID string `json:"worker_id,omitempty"`
	Trace    string `json:"trace,omitempty"`
	// Tasks are the reported tasks by ID; TasksRunning those RUNNING.
	Tasks        []capture.TaskStatus `json:"tasks"`
	TasksRunning int                  `json:"tasks_running"`
}

// statusWorld is the status topic as the page last read it.
type statusWorld struct {
	state string // statusTopic*
	st    *capture.Statuses
	note  string
}

// statuses returns the status topic as read at most one refresh interval
// ago (cacheTTL at least). Called with s.mu held.
func (s *Server) statuses(ctx context.Context) statusWorld {
	if s.src.Status == nil {
		return statusWorld{state: statusTopicOff}
	}
	ttl := max(s.src.Refresh, cacheTTL)
	if s.swAt.IsZero() || time.Since(s.swAt) >= ttl {
		s.sw, s.swAt = s.readStatuses(ctx), time.Now()
	}
	return s.sw
}

func (s *Server) readStatuses(ctx context.Context) statusWorld {
	st, err := s.src.Status(ctx)
	switch {
	case errors.Is(err, capture.ErrTopicMissing):
		return statusWorld{state: statusTopicMissing}
	case err != nil:
		s.log().Warn("read status topic", "error", err)
		return statusWorld{state: statusTopicError, note: "status topic: " + err.Error()}
	}
	sw := statusWorld{state: statusTopicRead, st: st}
	if n := len(st.Warnings); n > 0 {
		sw.note = fmt.Sprintf("status topic: %d records left out: %s", n, strings.Join(st.Warnings[:min(n, maxStatusWarnings)], "; "))
	}
	return sw
}

// workerState sets the row's worker state, its summary and, when a
// connector or a task FAILED, the FAILED status.
func (s *Server) workerState(w *world, r *ConnectorRow) {
	switch w.status.state {
	case statusTopicOff, statusTopicError:
		return
	case statusTopicMissing:
		r.WorkerSummary = "no status topic"
		return
	}
	cs := w.status.st.Connectors[r.Name]
	if cs == nil {
		r.WorkerSummary = "not in the status topic"
		return
	}
	ws := &WorkerState{Tasks: cs.Tasks}
	if ws.Tasks == nil {
		ws.Tasks = []capture.TaskStatus{}
	}
	if c := cs.Connector; c != nil {
		ws.State, ws.WorkerID, ws.Trace = c.State, c.WorkerID, c.Trace
		if c.State == capture.WorkerFailed {
			r.failed(fmt.Sprintf("connector FAILED on %s: %s", c.WorkerID, firstLine(c.Trace)))
		}
	}
	for _, t := range cs.Tasks {
		switch t.State {
		case capture.WorkerRunning:
			ws.TasksRunning++
		case capture.WorkerFailed:
			r.failed(fmt.Sprintf("task %d FAILED on %s: %s", t.ID, t.WorkerID, firstLine(t.Trace)))
		}
	}
	r.Worker = ws
	r.WorkerSummary = summary(ws)
	r.Mismatch = mismatch(r.State, ws.State)
	if r.Mismatch != "" {
		r.Why = append(r.Why, r.Mismatch)
	}
}

// failed makes the row FAILED, for why.
func (r *ConnectorRow) failed(why string) {
	r.Status = StatusFailed
	r.Why = append(r.Why, why)
}

// summary is the state cell's worker part: "RUNNING · 2/2 tasks running",
// "FAILED: <first line of trace>", with the first failed task's trace.
func summary(ws *WorkerState) string {
	var parts []string
	switch {
	case ws.State == capture.WorkerFailed:
		parts = append(parts, "FAILED: "+firstLine(ws.Trace))
	case ws.State != "":
		parts = append(parts, ws.State)
	default:
		parts = append(parts, "no connector status")
	}
	if len(ws.Tasks) > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d tasks running", ws.TasksRunning, len(ws.Tasks)))
	}
	for _, t := range ws.Tasks {
		if t.State == capture.WorkerFailed {
			parts = append(parts, fmt.Sprintf("task %d FAILED: %s", t.ID, firstLine(t.Trace)))
			break
		}
	}
	return strings.Join(parts, " · ")
}

// mismatch says when the worker reports a settled state other than the
// one the config topic asks for; transient states (UNASSIGNED,
// RESTARTING) and FAILED are not a disagreement.
func mismatch(target, worker string) string {
	want, ok := map[string]string{snapshot.StateStarted: capture.WorkerRunning, snapshot.StatePaused: capture.WorkerPaused,
		snapshot.StateStopped: capture.WorkerStopped}[target]
	switch worker {
	case capture.WorkerRunning, capture.WorkerPaused, capture.WorkerStopped:
	default:
		return ""
	}
	if !ok || worker == want {
		return ""
	}
	return fmt.Sprintf("target %s, but the worker reports %s", target, worker)
}

// firstLine is a trace's first line, at most 200 bytes.
func firstLine(trace string) string {
	line, _, _ := strings.Cut(trace, "\n")
	line = strings.TrimSpace(line)
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	if line == "" {
		return "no trace"
	}
	return line
}
