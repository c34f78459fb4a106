package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// earlierRun reports whether a failover of primary to this standby ran
// before and may have stopped part way (killed, or a request that failed):
// the store holds its fence (a failback lifts it). From then on only that
// failover writes the standby's offsets: the primary's daemon is fenced.
func earlierRun(ctx context.Context, st *store.Store, primary, standbyID string) (bool, error) {
	f, err := standby.FenceOf(ctx, st, primary)
	if err != nil {
		return false, fmt.Errorf("read the fence of cluster %s: %w; nothing was written", primary, err)
	}
	return f != nil && f.Standby == standbyID, nil
}

// rerun prepares a run again after an earlier one (earlierRun): it ends
// the transactions left open (endLeftOpen), finds the connectors the
// earlier run resumed (resumedBefore) and takes them out of ropts'
// scope. It returns them and, when some are left in scope, the check of
// that scope (closed when ctx ends); none for a first run.
func (c *failoverCmd) rerun(ctx context.Context, st *store.Store, cl *kgo.Client, state *snapshot.Snapshot, standbyID string,
	ropts *capture.Options, out io.Writer) (map[string]string, *standby.Syncer, error) {
	again, err := earlierRun(ctx, st, state.ClusterID, standbyID)
	if err != nil {
		return nil, nil, err
	}
	c.again = again
	if !c.dryRun && (again || c.force) {
		if err := c.endLeftOpen(ctx, cl, again, out); err != nil {
			return nil, nil, err
		}
	}
	if !again {
		return nil, nil, nil
	}
	before, err := c.resumedBefore(ctx, state)
	if err != nil || len(before) == 0 {
		return nil, nil, err
	}
	scope, left := scopeWithout(state, ropts.Connectors, before)
	if !left {
		return before, nil, nil
	}
	ropts.Connectors = scope
	scl, check, err := c.standby.open(ctx, c.g, restore.Options{Options: *ropts}, c.log, func(sc *standby.Config) {
		sc.DryRun, sc.Failover = true, true
		sc.Options.Connectors = scope
	})
	if err != nil {
		return nil, nil, err
	}
	context.AfterFunc(ctx, scl.Close)
	return before, check, nil
}

// endLeftOpen ends the offsets transactions left open on the standby: on a
// run again (again), by the earlier run killed part way or by the fenced
// primary's daemon; on a first run under --force, by the primary's daemon
// caught mid-sync (the failover takes over from it) or another restore.
// The broker would abort them only after their timeout, and restore's
// check refuses to write while they are open. What was in them is written
// again by this run.
func (c *failoverCmd) endLeftOpen(ctx context.Context, cl *kgo.Client, again bool, out io.Writer) error {
	who := "an earlier run left open"
	if !again {
		who = "left open on the standby (--force: the primary's daemon mid-sync, or another restore)"
	}
	ids, err := restore.FenceOpenRestores(ctx, cl)
	if err != nil {
		return fmt.Errorf("%s: end the offsets transactions %s: %w; nothing was written", c.by, who, err)
	}
	if len(ids) > 0 {
		fmt.Fprintf(out, "note: ended the offsets transactions %s (%s)\n", who, strings.Join(ids, ", "))
	}
	return nil
}

// openTransactionRefusal is err (the check's) with the failover's own
// advice when it refuses for a restore transaction open on the standby's
// offsets topic: --force ends it, as restore's --force does.
func (c *failoverCmd) openTransactionRefusal(err error) error {
	var refused *restore.RefusedError
	if c.force || !errors.As(err, &refused) || !slices.ContainsFunc(refused.Refusals, func(r restore.Refusal) bool {
		return r.Check == restore.CheckConcurrentRestore
	}) {
		return err
	}
	how := "run the same failover command again with --force"
	var cmds []string
	if words := c.againCommand("--force"); words != nil {
		cmds = append(cmds, strings.Join(words, " "))
		how = "run it again with --force: " + cmds[0] + ";"
	}
	return &restore.AdvisedError{Err: fmt.Errorf("%w\nno fence was stored. A transaction of offsetkeeper's is open on the standby's offsets topic: "+
		"the primary's daemon caught mid-sync (or a restore someone runs there). If it is the primary's daemon, which the failover "+
		"fences, %s which ends it first; or wait for the broker to abort it (1 minute by default) and run %s again", err, how, c.by), Commands: cmds}
}

// againCommand is this failover's command line, with the settings given
// on it (secrets left to the environment, as they must be), per-run flags
// dropped, then extra; nil when a secret was given on the command line (a
// printed command cannot carry it).
func (c *failoverCmd) againCommand(extra ...string) []string {
	if c.g.fs == nil {
		return nil
	}
	words := []string{programName, c.by}
	secret := false
	c.g.fs.VisitAll(func(f *flag.Flag) {
		switch {
		case !c.g.cmdLine[f.Name] || f.Name == "output" || f.Name == "dry-run" || f.Name == "force":
		case secretFlags[f.Name]:
			secret = true
		default:
			words = append(words, "--"+f.Name+"="+restore.ShellQuote(f.Value.String()))
		}
	})
	if secret {
		return nil
	}
	return append(words, extra...)
}

// resumedBefore returns, on a run again (earlierRun), the connectors of
// the state that the earlier run resumed (RUNNING on the standby) or
// paused. That run resumed a connector only after it had written and read
// back its offsets, and a resumed connector moves its offsets on: written
// again, it would go back and deliver again; checked, it would refuse as a
// connector running on the standby. So they are left as they are, out of
// the run's scope. Nil without a standby Connect.
func (c *failoverCmd) resumedBefore(ctx context.Context, state *snapshot.Snapshot) (map[string]string, error) {
	rc, err := c.standby.connect()
	if err != nil {
		return nil, err
	}
	if rc == nil {
		return nil, nil
	}
	states, err := rc.States(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the standby's connector states: %w; nothing was written", err)
	}
	out := map[string]string{}
	c.startedSince = nil
	for _, sc := range state.Connectors {
		if !sc.HasConfig {
			continue
		}
		s, ok := states[sc.Name]
		if !ok || s.Connector.State != connectrest.StateRunning && s.Connector.State != connectrest.StatePaused {
			continue
		}
		out[sc.Name] = s.Connector.State
		if sc.TargetState == snapshot.StateStopped {
			// The earlier run left it STOPPED: someone started it on the
			// standby since (the switchover's resumes), and it is the
			// standby's own now; the state's offsets would rewind it.
			c.startedSince = append(c.startedSince, sc.Name)
		}
	}
	slices.Sort(c.startedSince)
	return out, nil
}

// scopeWithout is the connectors of state in scope (all when scope is
// empty) but those of before: the scope of a run again. ok is false when
// before leaves nothing (then every connector the earlier run was to
// resume is resumed).
func scopeWithout(state *snapshot.Snapshot, inScope []string, before map[string]string) (scope []string, ok bool) {
	for _, sc := range state.Connectors {
		if len(inScope) > 0 && !slices.Contains(inScope, sc.Name) {
			continue
		}
		if _, done := before[sc.Name]; !done {
			scope = append(scope, sc.Name)
		}
	}
	slices.Sort(scope)
	return scope, len(scope) > 0
}

// noteResumedBefore lists the connectors an earlier run resumed (or
// paused) among those of this run, and says so; started are those of
// before that the earlier run left STOPPED and someone started since
// (resumedBefore), named on a note of their own.
func noteResumedBefore(before map[string]string, started []string, doc *failoverDocument, out io.Writer) {
	if len(started) > 0 {
		doc.StartedSince = started
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: started on the standby since the earlier failover, which left them STOPPED "+
			"as the primary's state has them: %s; nothing is written for them (the state's offsets would rewind them) "+
			"and they are left as they run", strings.Join(started, ", "))))
	}
	if len(before) == len(started) {
		return
	}
	paused := 0
	for name, st := range before {
		if slices.Contains(started, name) {
			continue
		}
		doc.ResumedBefore = append(doc.ResumedBefore, name)
		if st == connectrest.StatePaused {
			paused++
			doc.Paused = append(doc.Paused, name)
		} else {
			doc.Resumed = append(doc.Resumed, name)
		}
	}
	slices.Sort(doc.ResumedBefore)
	slices.Sort(doc.Resumed)
	slices.Sort(doc.Paused)
	some := ""
	if paused > 0 {
		some = fmt.Sprintf(" (%d of them paused there, as on the primary)", paused)
	}
	fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: an earlier run of this failover resumed %s on the standby%s: left as they run",
		plural(len(before)-len(started), "connector", "connectors"), some)))
}

// noteAlreadyRunning names the connectors the check found running on the
// standby before this failover (someone started them there) while it
// holds their state: failover writes nothing for them and leaves them
// running; they ran on both clusters until the primary went.
func noteAlreadyRunning(rep *standby.Report, doc *failoverDocument, out io.Writer) {
	if len(rep.AlreadyRunning) == 0 {
		return
	}
	var names []string
	for _, f := range rep.AlreadyRunning {
		names = append(names, f.Connector)
	}
	slices.Sort(names)
	doc.AlreadyRunning = names
	fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: already running on the standby before this failover (started there, "+
		"not by a failover): %s; the standby holds their state, so nothing is written for them and they are left running",
		strings.Join(names, ", "))))
}
