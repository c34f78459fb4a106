package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// stopper stops the connectors of a restore's scope before it writes, and
// resumes them after, or says what state it left them in.
type stopper struct {
	rc          *connectrest.Client
	cl          *kgo.Client
	configTopic string
	out         io.Writer
	log         *slog.Logger
	timeout     time.Duration
	resume      bool
	// dryRun: finish touches nothing, it says what the real run would put
	// back (the connectors restores that did not finish stopped).
	dryRun bool
	// start: resume also the connectors that were stopped before
	// (Request.Start, sinkexpiry.go).
	start bool
	// hold names connectors with offsets not restored here: resume leaves
	// them stopped (resumed, a sink would start from auto.offset.reset
	// once its topic is created).
	hold map[string]bool

	// stopped are the connectors this restore stopped, with what they were.
	stopped []stoppedConnector
	// waited are every connector of the scope with a config; groups the
	// sink groups that must be empty.
	waited, groups []string
}

type stoppedConnector struct {
	name string
	// target is the config topic's target state before: STARTED or PAUSED
	// (a STOPPED one with tasks is stopped again and stays so).
	target string
	// before is the state before, for the report.
	before string
	// created: Request.CreateConnectors created it STOPPED; target is
	// its state in the snapshot, and a STOPPED one stays so.
	created bool
	// resumed is what resumed means for it: RUNNING with as many tasks as
	// it had (the config topic's count), any failure it had replaced.
	resumed resumeWant
}

// toStop lists the connectors of the plan that a stop concerns (those it
// writes that are not stopped), and sets s.waited and s.groups. A
// connector the plan leaves alone is neither stopped nor waited for.
func (s *stopper) toStop(plan *Plan) []ConnectorPlan {
	var out []ConnectorPlan
	s.waited, s.groups = nil, nil
	for _, cp := range plan.Connectors {
		if !cp.Live.HasConfig || !cp.Writes() {
			continue // no config here (nothing runs), or left alone
		}
		s.waited = append(s.waited, cp.Name)
		if cp.Sink != nil && cp.Sink.Group != "" {
			s.groups = append(s.groups, cp.Sink.Group)
		} else if cp.Live.Type == snapshot.TypeSink && cp.Live.Group != "" {
			s.groups = append(s.groups, cp.Live.Group)
		}
		if !cp.Live.Stopped() {
			out = append(out, cp)
		}
	}
	return out
}

// stop stops every connector of the plan that is not stopped and waits
// until all of the scope are STOPPED with no tasks, per the REST API and
// the config topic, and their sink groups are empty.
func (s *stopper) stop(ctx context.Context, plan *Plan) error {
	began := time.Now()
	todo := s.toStop(plan)
	if len(s.waited) == 0 && len(s.groups) == 0 {
		return nil // the plan writes no connector that has a config here
	}
	if len(todo) > 0 {
		if err := s.waitHealthy(ctx, "stops connectors"); err != nil {
			return err
		}
		names := make([]string, len(todo))
		for i, cp := range todo {
			names[i] = cp.Name
		}
		// One name after another, wrapped within 120 columns.
		fmt.Fprintln(s.out, english.Wrap(fmt.Sprintf("stopping %s: %s", plural(len(todo), "connector", "connectors"), strings.Join(names, ", ")), 120, "  "))
	}
	for _, cp := range todo {
		rw := resumeWant{tasks: max(cp.Live.Tasks, 0)}
		if st, err := s.rc.Status(ctx, cp.Name); err == nil {
			for _, t := range st.Tasks {
				if t.State == connectrest.StateFailed {
					if rw.failedBefore == nil {
						rw.failedBefore = map[int]string{}
					}
					rw.failedBefore[t.ID] = t.Trace
				}
			}
		}
		// Counted as stopped before the request: one cut short (Ctrl-C)
		// may have stopped it all the same, and the put back of one that
		// still runs is a no-op.
		s.stopped = append(s.stopped, stoppedConnector{name: cp.Name, target: cp.Live.TargetState, before: cp.State(), resumed: rw})
		if err := s.rc.Stop(ctx, cp.Name); err != nil {
			return fmt.Errorf("stop connector %q: %w", cp.Name, err)
		}
		s.log.Debug("connector stopped", "connector", cp.Name, "was", cp.State())
	}
	if s.start {
		s.startStopped(plan, todo)
	}
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := waitStopped(wctx, s.rc, s.cl, s.configTopic, s.waited, s.groups); err != nil {
		return fmt.Errorf("wait for the connectors to stop (--stop-timeout %s): %w%s", s.timeout, err, staysNote(todo, err))
	}
	if len(todo) == 0 {
		// Nothing was stopped: say so, and what was checked.
		fmt.Fprintf(s.out, "nothing to stop: %s already STOPPED with no tasks (%s)%s\n", plural(len(s.waited), "connector", "connectors"), strings.Join(s.waited, ", "), groupsEmpty(s.groups))
		return nil
	}
	already := ""
	if n := len(s.waited) - len(todo); n > 0 {
		// The count agrees with "stopping" above: the rest already were.
		already = fmt.Sprintf(" (%d stopped now, %d already were)", len(todo), n)
	}
	fmt.Fprintf(s.out, "stopped: %s STOPPED with no tasks%s, %s empty (%s)\n", plural(len(s.waited), "connector", "connectors"), already,
		plural(len(s.groups), "sink group", "sink groups"), time.Since(began).Round(time.Millisecond))
	return nil
}

// groupsEmpty is ", its sink group empty" and the like, "" for none.
func groupsEmpty(groups []string) string {
	switch len(groups) {
	case 0:
		return ""
	case 1:
		return ", sink group " + groups[0] + " empty"
	}
	return ", sink groups " + strings.Join(groups, ", ") + " empty"
}

// resolved reports whether stopping would resolve a refusal: a connector
// running, its group's members or its REST state, for a connector with a
// config.
func (s *stopper) resolved(plan *Plan, r Refusal) bool {
	switch r.Check {
	case CheckRunning, CheckGroupMembers, CheckConnectState:
	default:
		return false
	}
	for _, cp := range plan.Connectors {
		if cp.Name == r.Connector {
			return cp.Live.HasConfig
		}
	}
	return false
}

// finish resumes, with --resume, the connectors this restore stopped
// (STARTED ones with PUT .../resume, PAUSED ones with PUT .../pause), and
// waits until they run (or are paused) again; without it, it says which
// are left stopped.
func (s *stopper) finish(ctx context.Context) error {
	if s == nil || len(s.stopped) == 0 {
		return nil
	}
	if s.dryRun {
		s.wouldFinish()
		return nil
	}
	if !s.resume {
		fmt.Fprintf(s.out, "left STOPPED (no --resume): %s; start each with:\n", strings.Join(s.names(), ", "))
		for _, sc := range s.stopped {
			fmt.Fprintf(s.out, "  %s\n", startCommand(s.rc, sc.name, sc.target))
		}
		return nil
	}
	if err := s.waitHealthy(ctx, "resumes connectors"); err != nil {
		return fmt.Errorf("the restore is done and verified, but %w; left STOPPED: %s", err, resumePaths(s.names()))
	}
	want, resumed := map[string]string{}, map[string]resumeWant{}
	var kept, held []string
	for _, sc := range s.stopped {
		if s.hold[sc.name] {
			held = append(held, sc.name)
			continue
		}
		if sc.created && sc.target == snapshot.StateStopped {
			kept = append(kept, sc.name)
			continue
		}
		resumed[sc.name] = sc.resumed
		var err error
		if sc.target == snapshot.StatePaused {
			err, want[sc.name] = s.rc.Pause(ctx, sc.name), connectrest.StatePaused
		} else {
			err, want[sc.name] = s.rc.Resume(ctx, sc.name), connectrest.StateRunning
		}
		if err != nil {
			return fmt.Errorf("the restore is done and verified, but resuming connector %q failed: %w", sc.name, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := waitStates(wctx, s.rc, s.cl, s.configTopic, want, resumed); err != nil {
		var failed *failedError
		if errors.As(err, &failed) {
			return fmt.Errorf("the restore is done and verified, and the connectors were resumed, but %w", err)
		}
		return fmt.Errorf("the restore is done and verified, and the connectors were resumed, but not all of them run yet: %w", err)
	}
	states, err := s.rc.States(ctx)
	if err != nil {
		return err
	}
	if len(kept) > 0 {
		fmt.Fprintf(s.out, "left STOPPED, as in the snapshot: %s\n", strings.Join(kept, ", "))
		// A sink left so loses its offsets when they expire: how to start
		// each (a restore with --start would have).
		fmt.Fprintln(s.out, "start each with:")
		for _, n := range kept {
			fmt.Fprintf(s.out, "  %s\n", startCommand(s.rc, n, snapshot.StateStarted))
		}
	}
	if len(held) > 0 {
		fmt.Fprintf(s.out, "left STOPPED (offsets not restored here): %s; resume each once the same restore, run again, restored them\n", strings.Join(held, ", "))
	}
	for _, sc := range s.stopped {
		if _, ok := want[sc.name]; !ok {
			continue
		}
		verb := "resumed"
		if want[sc.name] == connectrest.StatePaused {
			verb = "paused again"
		}
		fmt.Fprintf(s.out, "%s: connector %s (%s)\n", verb, sc.name, connectrest.StateOf(states, sc.name))
	}
	return nil
}

func (s *stopper) names() []string {
	out := make([]string, len(s.stopped))
	for i, sc := range s.stopped {
		out[i] = sc.name
	}
	return out
}

// fail adds to err, which happened after connectors were stopped, the
// state each of them is in now: they are left stopped.
func (s *stopper) fail(ctx context.Context, err error) error {
	if len(s.stopped) == 0 || err == nil {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var b strings.Builder
	fmt.Fprintf(&b, "the connectors this restore stopped are left as they are now; their state:")
	states, serr := s.rc.States(rctx)
	var configs map[string]snapshot.ConnectorConfig
	cerr := errors.New("not read: restoring through the Connect REST API only")
	if s.cl != nil {
		configs, cerr = capture.ReadConfigs(rctx, s.cl, s.configTopic)
	}
	names := s.names()
	sort.Strings(names)
	for _, name := range names {
		sc := s.stopped[slices.IndexFunc(s.stopped, func(x stoppedConnector) bool { return x.name == name })]
		rest := "unknown (" + fmt.Sprint(serr) + ")"
		if serr == nil {
			rest = connectrest.StateOf(states, name)
		}
		conf := "unknown (" + fmt.Sprint(cerr) + ")"
		if cerr == nil {
			if c, ok := configs[name]; ok {
				conf = describeConfig(c)
			} else {
				conf = "no config"
			}
		}
		verb := "resume"
		if sc.target == snapshot.StatePaused {
			verb = "pause"
		}
		fmt.Fprintf(&b, "\n  connector %s: REST %s; config topic %s; was %s (PUT /connectors/%s/%s to put it back)", name, rest, conf, sc.before, url.PathEscape(name), verb)
	}
	return fmt.Errorf("%w\n%s", err, b.String())
}
