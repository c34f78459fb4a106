package restore

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// This file puts back what a restore changed that is not offsets when it
// fails or is refused before it wrote any: the connectors it stopped run
// (or are paused) again, as they were. And it takes over the connectors a
// restore that did not finish had stopped, so that this one resumes them.

// nothingWritten reports whether the run wrote no offsets: none committed
// to a topic or a group, nothing through Connect.
func (r *run) nothingWritten() bool {
	return len(r.report.Applied.Written()) == 0 && len(r.report.Connect) == 0 && !r.repairFailed
}

// putBack resumes (or pauses again) the connectors s stopped, after err
// ended a restore that wrote no offsets, and adds to err what it did.
func (s *stopper) putBack(ctx context.Context, err error) error {
	if len(s.stopped) == 0 || err == nil {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	want, resumed := map[string]string{}, map[string]resumeWant{}
	var lines []string
	for _, sc := range s.stopped {
		if sc.created && sc.target == snapshot.StateStopped {
			continue
		}
		var rerr error
		if sc.target == snapshot.StatePaused {
			rerr, want[sc.name] = s.rc.Pause(rctx, sc.name), connectrest.StatePaused
		} else {
			rerr, want[sc.name] = s.rc.Resume(rctx, sc.name), connectrest.StateRunning
			resumed[sc.name] = sc.resumed
		}
		if rerr != nil {
			return s.fail(ctx, fmt.Errorf("%w; putting back connector %q failed: %w", err, sc.name, rerr))
		}
		lines = append(lines, fmt.Sprintf("connector %s (was %s)", sc.name, sc.before))
	}
	if len(want) == 0 {
		return err
	}
	if werr := waitStates(rctx, s.rc, s.cl, s.configTopic, want, resumed); werr != nil {
		return s.fail(ctx, fmt.Errorf("%w; the connectors it stopped were put back, but %w", err, werr))
	}
	s.stopped = nil
	return fmt.Errorf("%w\nno offsets were written, so the connectors this restore stopped were put back as they were: %s", err, strings.Join(lines, ", "))
}

// inherit adds to s the connectors that restores that did not finish
// stopped and that plan finds stopped still: s.finish resumes them (with
// Resume) or names them, as if this restore had stopped them.
func (s *stopper) inherit(plan *Plan, snap *snapshot.Snapshot, intents []store.RestoreIntent) {
	for _, in := range intents {
		for _, st := range in.Stopped {
			i := slices.IndexFunc(plan.Connectors, func(cp ConnectorPlan) bool { return cp.Name == st.Name })
			if i < 0 || !plan.Connectors[i].Live.Stopped() || slices.ContainsFunc(s.stopped, func(x stoppedConnector) bool { return x.name == st.Name }) {
				continue
			}
			tasks := 0
			if c, ok := snap.Connector(st.Name); ok {
				tasks = max(c.Tasks, 0)
			}
			if st.Created {
				tasks = min(tasks, 1) // as create: the new workers decide how many
			}
			s.stopped = append(s.stopped, stoppedConnector{name: st.Name, target: st.Target,
				before: st.Before + ", stopped by restore " + in.ID + " that did not finish", resumed: resumeWant{tasks: tasks}})
		}
	}
}

// leftStopped names, for a restore without StopConnectors, the
// connectors restores that did not finish stopped and that are stopped
// still, with the command that starts each.
func leftStopped(plan *Plan, rc *connectrest.Client, intents []store.RestoreIntent) []string {
	var out []string
	for _, in := range intents {
		for _, st := range in.Stopped {
			i := slices.IndexFunc(plan.Connectors, func(cp ConnectorPlan) bool { return cp.Name == st.Name })
			if i >= 0 && !plan.Connectors[i].Live.Stopped() {
				continue
			}
			start := startCommand(rc, st.Name, st.Target)
			if st.Created {
				out = append(out, fmt.Sprintf("connector %s is STOPPED: restore %s (started %s) created it STOPPED and did not finish; it is %s in the state restored; start it with: %s",
					st.Name, in.ID, in.Started.UTC().Format(time.RFC3339), st.Target, start))
				continue
			}
			out = append(out, fmt.Sprintf("connector %s is STOPPED: restore %s (started %s) stopped it and did not finish; it was %s; start it with: %s",
				st.Name, in.ID, in.Started.UTC().Format(time.RFC3339), st.Before, start))
		}
	}
	return out
}

// startCommand is the request that puts a stopped connector back in
// target (PAUSED: pause, else resume): a curl command when the Connect
// URL is known.
func startCommand(rc *connectrest.Client, name, target string) string {
	verb := "resume"
	if target == snapshot.StatePaused {
		verb = "pause"
	}
	if rc != nil && len(rc.URLs()) > 0 {
		return Curl + " -X PUT " + ShellQuote(strings.TrimSuffix(rc.URLs()[0], "/")+"/connectors/"+RESTPathSegment(name)+"/"+verb)
	}
	return fmt.Sprintf("PUT /connectors/%s/%s on the Connect REST API", url.PathEscape(name), verb)
}

// resumeAsRestored adds to s, for Resume, the connectors the plan writes
// that are STOPPED here but ran (or were paused) in the state restored,
// stopped by hand or by a reset: --resume resumes what was running in the
// state being restored, not only what this restore stopped.
func (s *stopper) resumeAsRestored(plan *Plan, snap *snapshot.Snapshot) {
	for _, cp := range plan.Connectors {
		if !cp.Live.HasConfig || !cp.Live.Stopped() || !cp.Writes() || slices.ContainsFunc(s.stopped, func(x stoppedConnector) bool { return x.name == cp.Name }) {
			continue
		}
		c, ok := snap.Connector(cp.Name)
		if !ok || !c.HasConfig || (c.TargetState != snapshot.StateStarted && c.TargetState != snapshot.StatePaused) {
			continue
		}
		s.stopped = append(s.stopped, stoppedConnector{name: cp.Name, target: c.TargetState,
			before: cp.State() + ", " + c.TargetState + " in the state restored", resumed: resumeWant{tasks: max(c.Tasks, 0)}})
	}
}

// ResumeCommand is the request that resumes stopped connector name: a
// curl command when rc has a URL, else the request in words.
func ResumeCommand(rc *connectrest.Client, name string) string {
	return startCommand(rc, name, snapshot.StateStarted)
}
