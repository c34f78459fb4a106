package restore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// waitStopped polls every Config.PollInterval of c until each of connectors is
// stopped as a restore needs it, and returns nil then:
//   - its REST status is STOPPED with no tasks (a connector Connect has no
//     status for counts only when the config topic has no config for it
//     either);
//   - its latest target state in configTopic is STOPPED and its latest
//     task count 0 (no config there counts as stopped);
//   - and each consumer group in groups is Empty, Dead or gone: a sink's
//     tasks have left it.
//
// cl reads the config topic and describes the groups. When ctx ends first
// it returns an error wrapping ErrNotStopped that says, per connector and
// group, what was last seen.
func waitStopped(ctx context.Context, c *connectrest.Client, cl *kgo.Client, configTopic string, connectors, groups []string) error {
	want := make(map[string]string, len(connectors))
	for _, n := range connectors {
		want[n] = connectrest.StateStopped
	}
	return stateWait{rest: c, cl: cl, configTopic: configTopic, want: want, groups: groups}.run(ctx)
}

// resumeWant is what a resumed connector must show besides its state.
type resumeWant struct {
	// tasks is how many tasks it must list, at least.
	tasks int
	// failedBefore are the traces of its tasks that were FAILED before
	// the stop, by task id: until a new task of that id reports, Connect's
	// status topic still holds the old failure.
	failedBefore map[int]string
}

// waitStates polls every Config.PollInterval until each connector of want
// is in the state given, RUNNING, PAUSED or STOPPED, per its REST status
// (RUNNING: the connector and at least resumed[name].tasks tasks listed,
// every task RUNNING; STOPPED: no tasks) and per configTopic (target state
// STARTED, PAUSED or STOPPED; STOPPED also a task count of 0). A connector
// RUNNING with fewer tasks is not resumed yet: a task that fails to start
// would otherwise pass. A connector or task waited for RUNNING that
// Connect reports FAILED is an error at once, carrying its trace (Connect
// does not restart it), unless it is the failure the task had before the
// stop, not yet replaced. When ctx ends first it returns an error wrapping
// ErrNotStopped that says what was last seen.
func waitStates(ctx context.Context, c *connectrest.Client, cl *kgo.Client, configTopic string, want map[string]string, resumed map[string]resumeWant) error {
	return stateWait{rest: c, cl: cl, configTopic: configTopic, want: want, resumed: resumed}.run(ctx)
}

// stateWait is one wait of waitStopped or waitStates: the connectors' wanted
// states (want, with resumed for those to run), the groups that must be
// left, and where to look (Connect's REST API, the config topic through
// cl).
type stateWait struct {
	rest        *connectrest.Client
	cl          *kgo.Client
	adm         *kadm.Client
	configTopic string
	want        map[string]string
	resumed     map[string]resumeWant
	groups      []string
	names       []string // of want, sorted
}

// run polls until everything is as wanted, or ctx ends.
func (w stateWait) run(ctx context.Context) error {
	c := w.rest
	w.adm = kadm.NewClient(w.cl)
	w.names = make([]string, 0, len(w.want))
	for n := range w.want {
		w.names = append(w.names, n)
	}
	sort.Strings(w.names)
	w.groups = append([]string(nil), w.groups...)
	sort.Strings(w.groups)
	var last []string // what the last complete look found
	for {
		pending, err := w.pending(ctx)
		if err == nil && len(pending) == 0 {
			return nil
		}
		var failed *failedError
		if errors.As(err, &failed) {
			return err
		}
		if err == nil {
			last = pending
		} else if ctx.Err() == nil {
			// A failed look is not final: the cluster may be rebalancing.
			last = []string{err.Error()}
		}
		t := time.NewTimer(c.PollInterval())
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
			continue
		}
		if len(last) == 0 {
			return fmt.Errorf("%w: %w", ErrNotStopped, err)
		}
		return fmt.Errorf("%w (%v): %s", ErrNotStopped, ctx.Err(), strings.Join(last, "; "))
	}
}

// pending returns, one phrase each, what is not yet in the state wanted.
func (sw stateWait) pending(ctx context.Context) ([]string, error) {
	c, adm, cl, configTopic, names, want, resumed, groups := sw.rest, sw.adm, sw.cl, sw.configTopic, sw.names, sw.want, sw.resumed, sw.groups
	var out []string
	var configs map[string]snapshot.ConnectorConfig
	if cl != nil { // nil: REST only, the REST status decides
		var err error
		if configs, err = capture.ReadConfigs(ctx, cl, configTopic); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		w := want[name]
		conf, hasConf := configs[name]
		st, err := c.Status(ctx, name)
		switch {
		case errors.Is(err, connectrest.ErrNotFound):
			if hasConf {
				out = append(out, fmt.Sprintf("connector %q: Connect has no status for it yet (config topic: %s)", name, describeConfig(conf)))
			} else if w != connectrest.StateStopped {
				out = append(out, fmt.Sprintf("connector %q: Connect does not know it", name))
			}
			continue
		case err != nil:
			return nil, err
		}
		rw := resumed[name]
		if w == connectrest.StateRunning {
			if err := failedIn(name, st, rw.failedBefore); err != nil {
				return nil, err
			}
		}
		if !restIs(st, w, rw.tasks) {
			waiting := w
			if w == connectrest.StateRunning && rw.tasks > 0 {
				waiting = fmt.Sprintf("%s with %s", w, taskCount(rw.tasks))
			}
			out = append(out, fmt.Sprintf("connector %q: REST status %s, waiting for %s%s", name, st, waiting, traces(st)))
			continue
		}
		if cl == nil {
			continue
		}
		if !hasConf {
			if w != connectrest.StateStopped {
				out = append(out, fmt.Sprintf("connector %q: no config in config topic %q", name, configTopic))
			}
			continue
		}
		if !configIs(conf, w) {
			out = append(out, fmt.Sprintf("connector %q: config topic says %s, waiting for %s", name, describeConfig(conf), w))
		}
	}
	if len(groups) > 0 && cl != nil {
		described, err := capture.DescribeTyped(ctx, adm, groups, nil)
		if err != nil {
			return nil, fmt.Errorf("describe consumer groups %v: %w", groups, err)
		}
		for _, g := range groups {
			d := described[g]
			switch {
			case d.Gone:
			case d.Err != nil:
				return nil, d.Err
			case d.State == "Empty":
			default:
				members := fmt.Sprintf("%d members", d.Members)
				if d.Members == 1 {
					members = "1 member"
				}
				if len(d.Clients) > 0 {
					members += " (" + strings.Join(d.Clients, ", ") + ")"
				}
				out = append(out, fmt.Sprintf("group %q: %s with %s, waiting for Empty", g, d.State, members))
			}
		}
	}
	return out, nil
}

// failedError is a connector or task Connect reports FAILED while it is
// waited for RUNNING.
type failedError struct {
	connector string
	task      int // -1: the connector itself
	trace     string
}

func (e *failedError) Error() string {
	what := fmt.Sprintf("connector %q", e.connector)
	if e.task >= 0 {
		what = fmt.Sprintf("connector %q task %d", e.connector, e.task)
	}
	trace := strings.TrimSpace(e.trace)
	if trace == "" {
		trace = "(Connect gave no trace)"
	}
	return fmt.Sprintf("%s FAILED after the resume (see GET /connectors/%s/status; PUT /connectors/%s/restart?includeTasks=true&onlyFailed=true restarts it): %s",
		what, e.connector, e.connector, trace)
}

// failedIn is a failedError for the first FAILED of st, nil if none. A
// task whose trace is the one it had before the stop has not reported
// since: it is not counted.
func failedIn(name string, st connectrest.Status, before map[int]string) error {
	if st.Connector.State == connectrest.StateFailed {
		return &failedError{connector: name, task: -1, trace: st.Connector.Trace}
	}
	for _, t := range st.Tasks {
		if old, ok := before[t.ID]; ok && old == t.Trace {
			continue
		}
		if t.State == connectrest.StateFailed {
			return &failedError{connector: name, task: t.ID, trace: t.Trace}
		}
	}
	return nil
}

// traces is the first line of the trace of each FAILED task of st, for a
// wait that gives up.
func traces(st connectrest.Status) string {
	var b strings.Builder
	for _, t := range st.Tasks {
		if t.State == connectrest.StateFailed {
			first, _, _ := strings.Cut(strings.TrimSpace(t.Trace), "\n")
			fmt.Fprintf(&b, " (task %d: %s)", t.ID, first)
		}
	}
	return b.String()
}

// restIs reports whether st is the state want; RUNNING needs at least
// tasks tasks.
func restIs(st connectrest.Status, want string, tasks int) bool {
	switch want {
	case connectrest.StateStopped:
		return st.Stopped()
	case connectrest.StateRunning:
		if st.Connector.State != connectrest.StateRunning || len(st.Tasks) < tasks {
			return false
		}
		for _, t := range st.Tasks {
			if t.State != connectrest.StateRunning {
				return false
			}
		}
		return true
	}
	return st.Connector.State == want
}

func configIs(c snapshot.ConnectorConfig, want string) bool {
	switch want {
	case connectrest.StateStopped:
		return c.Stopped()
	case connectrest.StateRunning:
		return c.TargetState == snapshot.StateStarted
	case connectrest.StatePaused:
		return c.TargetState == snapshot.StatePaused
	}
	return false
}

// describeConfig is a config topic state in a few words: "STOPPED",
// "STARTED, 2 tasks", "STARTED, no task commit".
func describeConfig(c snapshot.ConnectorConfig) string {
	switch {
	case c.Tasks < 0:
		return c.TargetState + ", no task commit"
	case c.Tasks == 0:
		return c.TargetState
	case c.Tasks == 1:
		return c.TargetState + ", 1 task"
	}
	return fmt.Sprintf("%s, %d tasks", c.TargetState, c.Tasks)
}
