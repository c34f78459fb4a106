package main

// This file is offsetkeeper failover (and failback, the same with the
// roles swapped): the standby takes over from the primary with one
// command (docs/standby.md).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

const failoverUsage = `--standby-brokers B [--standby-connect-url URL] [--standby-translate none|mm2|timestamp
       [--mm2-source-alias A]] [--map-topic SRC=DST]... [--topic-prefix P] [--dry-run] [--output text|json]

Reads the last state of the primary the store holds (its journal's newest
change; the primary cluster is not read, so this works when it is gone),
checks that no connector in scope runs on the standby (exit 3, nothing
written), stores a fence so that the primary's daemon never writes to the
standby again, writes the state to the standby (source offsets byte for
byte, sink offsets translated as the daemon does), reads it back, and
resumes on the standby's Connect every connector that ran on the primary
(paused ones are paused, stopped ones stay stopped). Without
--standby-connect-url it prints the REST calls that resume them. It prints
the RPO (the age of the last change applied) and its own duration.

failback is failover with the roles swapped: run it with --store of the
daemon that kept the old primary (now the standby) in step, after the old
primary is back; it also lifts the fence of the cluster it makes primary.
After a MirrorMaker 2 failover, name the old primary's own topics for the
copies the new primary's sinks read: --map-topic primary.orders=orders.`

// failoverCommand and failbackCommand are entries of the command table.
var failoverCommand = commandInfo{
	name:    "failover",
	summary: "make the standby cluster the primary: apply the journal's last state to it, fence the primary's daemon, resume its connectors (docs/standby.md)",
	usage:   failoverUsage,
	new:     func(e *env) command { return &failoverCmd{env: e, by: "failover"} },
}

var failbackCommand = commandInfo{
	name:    "failback",
	summary: "failover with the roles swapped: bring the connectors home once the old primary is back (docs/standby.md)",
	usage:   failoverUsage,
	new:     func(e *env) command { return &failoverCmd{env: e, by: "failback"} },
}

type failoverCmd struct {
	*env
	by      string
	standby standbyFlags
	dryRun  bool
	force   bool
	output  string
	// connectors is the scope (--connector); empty: every connector of
	// the state.
	connectors listFlag
	// again: an earlier run of this failover was killed part way (rerun).
	again bool
	// startedSince are the connectors an earlier run left STOPPED that
	// run on the standby now (resumedBefore): left as they run.
	startedSince []string
}

func (c *failoverCmd) Flags(fs *flag.FlagSet) {
	c.standby.register(fs, true)
	fs.BoolVar(&c.dryRun, "dry-run", false, "check and print what failover would do; write nothing, store no fence, resume nothing")
	fs.StringVar(&c.output, "output", "text", "output format: text or json")
	fs.Var(&c.connectors, "connector", "fail over only this connector of the state (its offsets, config and resume); repeatable (default every connector). The fence still keeps the primary's daemon from writing to the standby")
	fs.BoolVar(&c.force, "force", false, "fail over although the primary's Connect (--connect-url) runs connectors in scope (both clusters then run them), and end the offsets transactions left open on the standby (the primary's daemon caught mid-sync) instead of refusing")
	c.g.connect.register(fs)
}

// failoverDocument is failover --output json.
type failoverDocument struct {
	Command    string         `json:"command"`
	DryRun     bool           `json:"dry_run"`
	Primary    string         `json:"primary_cluster_id"`
	Standby    string         `json:"standby_cluster_id"`
	StateAt    time.Time      `json:"state_at"`
	RPOSeconds float64        `json:"rpo_seconds"`
	Fenced     bool           `json:"fenced"`
	Counts     restore.Counts `json:"counts"`
	Written    bool           `json:"written"`
	Verified   bool           `json:"verified"`
	Misses     int            `json:"translation_misses"`
	// Untranslated are the sink partitions counted in Misses, by group
	// and topic, with why (failover_misses.go).
	Untranslated []failoverMiss `json:"untranslated,omitempty"`
	// FixCommand is this failover with the flags that translate them;
	// HeldUntranslated the sinks left STOPPED until it runs.
	FixCommand       string   `json:"fix_command,omitempty"`
	HeldUntranslated []string `json:"held_untranslated,omitempty"`
	// DuplicatesBound is the most records the standby's sinks may
	// deliver again (the sum of DuplicateBounds, per sink partition).
	DuplicatesBound int64                    `json:"duplicates_bound"`
	DuplicateBounds []standby.DuplicateBound `json:"duplicate_bounds"`
	Configs         []standby.ConfigAction   `json:"configs,omitempty"`
	Resumed         []string                 `json:"resumed"`
	Paused          []string                 `json:"paused"`
	LeftStopped     []string                 `json:"left_stopped"`
	ResumeCommands  []string                 `json:"resume_commands,omitempty"`
	// Held are the sink connectors left STOPPED because their topics.regex
	// does not match the copies their offsets were translated to.
	Held []failoverHeld `json:"held_stopped,omitempty"`
	// ResumedBefore are the connectors an earlier run of this failover
	// resumed or paused, left as they run (failover_rerun.go).
	ResumedBefore []string `json:"resumed_before,omitempty"`
	// StartedSince are the connectors an earlier run left STOPPED (as
	// the state has them) that someone started on the standby since:
	// nothing written for them, left as they run (failover_rerun.go).
	StartedSince []string `json:"started_since_failover,omitempty"`
	// AlreadyRunning are the connectors that ran on the standby before
	// this failover (started there, not by a failover) while the standby
	// held their state: nothing written for them, left as they run.
	AlreadyRunning []string `json:"already_running,omitempty"`
	// DiffCommand shows what the failover moved on the standby (diff
	// --at state_at --live); empty in a dry run, or when the standby needs
	// security settings.
	DiffCommand string `json:"diff_command,omitempty"`
	// OpenTransactions are, in a dry run, offsetkeeper's transactions open
	// on the standby's offsets topics, which the real run refuses for or
	// ends (failover_dryrun.go).
	OpenTransactions []failoverOpenTxn `json:"open_transactions,omitempty"`
	Errors           []string          `json:"errors,omitempty"`
	Seconds          float64           `json:"duration_seconds"`
	// Phases are the seconds each step took: state (reading the store),
	// check, apply (configs, offsets, verify), resume.
	Phases map[string]float64 `json:"phase_seconds"`
}

func (c *failoverCmd) Run(ctx context.Context, args []string) error {
	began := time.Now()
	if err := c.checkUsage(args); err != nil {
		return err
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	_, ropts, err := c.g.kafkaSettings()
	if err != nil {
		return err
	}
	ropts.Connectors = []string(c.connectors)
	// First a check that writes nothing: a refusal leaves no fence.
	cl, check, err := c.standby.open(ctx, c.g, restore.Options{Options: ropts}, c.log, func(sc *standby.Config) { sc.DryRun, sc.Failover = true, true })
	if err != nil {
		return err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("%s: read the standby's cluster id: %w; nothing was written", c.by, err)
	}
	// The primary's state: the newest of a cluster other than the standby
	// (a store shared by both daemons holds the standby's too).
	state, at, err := standby.LatestState(ctx, st, func(cl string) bool { return cl != md.Cluster })
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was written", c.by, err)
	}
	if err := c.checkScope(state); err != nil {
		return err
	}
	doc := &failoverDocument{Command: c.by, DryRun: c.dryRun, Primary: state.ClusterID, Standby: md.Cluster, StateAt: at, Phases: map[string]float64{}}
	phase := began
	mark := func(name string) { doc.Phases[name] = time.Since(phase).Seconds(); phase = time.Now() }
	mark("state")
	out := c.stdout
	if c.output == "json" {
		out = io.Discard
	}
	fmt.Fprintf(out, "%s: the primary's (cluster %s) last state in the store is at %s (%s old)\n",
		c.by, state.ClusterID, snapshot.FmtTime(at), time.Since(at).Round(time.Millisecond))
	if err := c.primaryStopped(ctx, state, out); err != nil {
		return err
	}
	before, scoped, err := c.rerun(ctx, st, cl, state, md.Cluster, &ropts, out)
	if err != nil {
		return err
	}
	if len(before) > 0 && scoped == nil {
		noteResumedBefore(before, c.startedSince, doc, out) // nothing left to do
		return c.finish(doc, began, out)
	}
	if scoped != nil {
		check = scoped
	}
	rep, err := check.Sync(ctx, state, at)
	// A dry run writes nothing: transactions left open do not stop it.
	open := c.dryRunOpenTxns(ctx, cl, err, rep)
	if err != nil && open == nil {
		return c.runningRefusal(c.openTransactionRefusal(fmt.Errorf("%s: %w", c.by, err)))
	}
	mark("check")
	if c.dryRun {
		return c.dryRunReport(ctx, dryRunSeen{standby: md.Cluster, state: state, rep: rep, open: open, before: before}, doc, began, out)
	}
	if err := c.fence(ctx, st, state.ClusterID, md.Cluster, at, doc, out); err != nil {
		return err
	}
	if err := c.apply(ctx, cl, ropts, before, state, at, doc, mark, out); err != nil {
		return err
	}
	return c.finish(doc, began, out)
}

// dryRunSeen is what a failover's dry run found: the standby's cluster,
// the primary's state, the check's report, the transactions left open on
// the standby and the connectors an earlier run resumed.
type dryRunSeen struct {
	standby string
	state   *snapshot.Snapshot
	rep     *standby.Report
	open    []failoverOpenTxn
	before  map[string]string
}

// dryRunReport says what the failover would do, and ends as the real run
// would begin: refused by the transactions left open it would not end.
func (c *failoverCmd) dryRunReport(ctx context.Context, seen dryRunSeen, doc *failoverDocument, began time.Time, out io.Writer) error {
	rep := seen.rep
	doc.Counts, doc.Configs, doc.Misses = rep.Counts, rep.Configs, len(rep.Misses)
	fmt.Fprintln(out, "dry run: nothing written, no fence stored")
	fmt.Fprintf(out, "would write to standby cluster %s: %s\n", seen.standby, rep.Counts)
	c.noteMisses(rep, doc, out)
	c.noteOpenTxns(seen.open, doc, out)
	noteResumedBefore(seen.before, c.startedSince, doc, out)
	noteAlreadyRunning(rep, doc, out)
	c.resume(ctx, seen.state, rep, doc, out)
	if err := c.finish(doc, began, out); err != nil {
		return err
	}
	return c.openTxnsBlocker(seen.open)
}

// apply writes the state to the standby once the fence is stored,
// verifies it, says what it did and resumes the connectors; marks the
// phases "apply" and "resume". before are the connectors an earlier run
// resumed (ropts is then the scope of a run again).
func (c *failoverCmd) apply(ctx context.Context, cl *kgo.Client, ropts capture.Options, before map[string]string,
	state *snapshot.Snapshot, at time.Time, doc *failoverDocument, mark func(string), out io.Writer) error {
	acl, apply, err := c.standby.open(ctx, c.g, restore.Options{Options: ropts}, c.log, func(sc *standby.Config) {
		sc.Verify, sc.Failover = true, true
		if len(before) > 0 {
			sc.Options.Connectors = ropts.Connectors // the scope of a run again
		}
	})
	if err != nil {
		return err
	}
	defer acl.Close()
	rep, err := apply.Sync(ctx, state, at)
	doc.Counts, doc.Configs, doc.Misses = rep.Counts, rep.Configs, len(rep.Misses)
	if err != nil {
		return fmt.Errorf("%s: %w; the fence is stored: run %s again to finish", c.by, err, c.by)
	}
	doc.Written, doc.Verified = rep.Applied != nil, true
	mark("apply")
	fmt.Fprintf(out, "applied: %s; verified: the standby holds the state\n", rep.Counts)
	c.noteMisses(rep, doc, out) // failover_misses.go
	c.duplicates(ctx, cl, rep, doc, out)
	noteResumedBefore(before, c.startedSince, doc, out)
	noteAlreadyRunning(rep, doc, out)
	c.resume(ctx, state, rep, doc, out)
	mark("resume")
	if words := c.failoverDiffCommand(at, state.ClusterID); words != nil {
		doc.DiffCommand = strings.Join(words, " ")
		fmt.Fprintf(out, "what it moved on the standby (the translation's differences are named as such):\n%s\n", wrapCommand(words))
	}
	return nil
}

// primaryStopped refuses a failover while the primary's Connect, when
// --connect-url names it and it answers, runs connectors of the state:
// resumed on the standby too, they would run on both clusters, each
// committing its own offsets (a planned switchover stops them first). A
// primary that does not answer is taken as gone, as in a disaster.
func (c *failoverCmd) primaryStopped(ctx context.Context, state *snapshot.Snapshot, out io.Writer) error {
	if !c.g.connect.given() {
		// Said, not taken as gone in silence: the state in the store may
		// be seconds old because the primary still runs.
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: the primary's Connect was not asked (no --connect-url): if it still runs "+
			"connectors of the state (a primary half alive, a planned switchover), both clusters run them after this %s; "+
			"give --connect-url of the primary's Connect to have %s refuse while it does", c.by, c.by)))
		return nil
	}
	rc, err := c.g.connect.client()
	if err != nil || rc == nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	live, err := rc.Connectors(cctx)
	if err != nil {
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("note: the primary's Connect did not answer (%v): taken as gone; "+
			"if its workers come back with its Kafka, they run its connectors again beside the standby's: keep them down, "+
			"or stop the connectors there (PUT /connectors/NAME/stop) as soon as they answer", err)))
		return nil
	}
	var running []string
	for _, sc := range state.Connectors {
		if len(c.connectors) > 0 && !slices.Contains(c.connectors, sc.Name) {
			continue
		}
		if e, ok := live[sc.Name]; ok && e.Status != nil && e.Status.Connector.State == "RUNNING" {
			running = append(running, sc.Name)
		}
	}
	if len(running) == 0 {
		return nil
	}
	if c.force {
		fmt.Fprintf(out, "WARNING: --force: the primary's Connect still runs %s; both clusters run them from now on\n",
			plural(len(running), "connector", "connectors"))
		return nil
	}
	if why := c.primaryKafkaDown(ctx); why != nil {
		return c.kafkaDownRefusal(running, why) // failover_kafkadown.go
	}
	base := ""
	if len(c.g.connect.urls) > 0 {
		base = strings.TrimRight(splitList(c.g.connect.urls[0])[0], "/")
	}
	var cmds []string
	for _, n := range running {
		if base != "" {
			cmds = append(cmds, restore.Curl+" -X PUT "+restore.ShellQuote(base+"/connectors/"+restSegment(n)+"/stop"))
		}
	}
	how := strings.Join(cmds, "; ")
	if base == "" {
		how = "PUT /connectors/NAME/stop for each, on the primary's Connect"
	}
	// Stopped there, they are STOPPED in the state the failover applies,
	// and so left STOPPED on the standby: the advice resumes them.
	sbase := ""
	if len(c.standby.connectURLs) > 0 {
		sbase = strings.TrimRight(splitList(c.standby.connectURLs[0])[0], "/")
	}
	var resumes []string
	for _, n := range running {
		if sbase != "" {
			resumes = append(resumes, restore.Curl+" -X PUT "+restore.ShellQuote(sbase+"/connectors/"+restSegment(n)+"/resume"))
		}
	}
	then := strings.Join(resumes, "; ")
	if sbase == "" {
		then = "PUT /connectors/NAME/resume for each, on the standby's Connect"
	}
	refusal := refusedError(fmt.Sprintf("%s refused, nothing was written: the primary's Connect runs %s of the state (%s): "+
		"a failover now would run them on both clusters; stop them on the primary (a planned switchover): %s; "+
		"wait until the daemon's journal has the stop (a few journal intervals; %s --dry-run then counts them among those it leaves stopped), "+
		"run %s again, which leaves them STOPPED on the standby as the primary has them, then resume them there: %s; "+
		"--force fails over anyway%s",
		c.by, plural(len(running), "connector", "connectors"), strings.Join(running, ", "), how, c.by, c.by, then, c.kafkaUnasked()))
	return &restore.AdvisedError{Err: refusal, Commands: append(cmds, resumes...)}
}

// checkScope checks that each connector of --connector is one of the
// state's: a name mistyped fails over nothing.
func (c *failoverCmd) checkScope(state *snapshot.Snapshot) error {
	for _, name := range c.connectors {
		if _, ok := state.Connector(name); !ok {
			return fmt.Errorf("%s --connector %q: no such connector in the primary's last state (cluster %s); nothing was written",
				c.by, name, state.ClusterID)
		}
	}
	return nil
}

// refusedError is a refusal of a command other than restore: exit 3,
// nothing written.
type refusedError string

func (e refusedError) Error() string { return string(e) }

// Is makes a refusedError a restore.ErrRefused, for its exit code.
func (e refusedError) Is(target error) bool { return target == restore.ErrRefused }

// checkUsage checks the command line before anything is read.
func (c *failoverCmd) checkUsage(args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", c.by, args[0])
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	if err := c.standby.check(); err != nil {
		return err
	}
	if !c.standby.given() {
		return usagef("%s needs the standby: --standby-brokers (and its security settings, as the daemon has them)", c.by)
	}
	return nil
}

// fence stores the fence that keeps the daemon of cluster primary from
// writing to cluster standbyID again, and lifts the standby's own fence:
// the cluster made primary may be one a failover fenced before, and its
// own daemon keeps a standby again.
func (c *failoverCmd) fence(ctx context.Context, st *store.Store, primary, standbyID string, at time.Time, doc *failoverDocument, out io.Writer) error {
	if err := standby.PutFence(ctx, st, standby.Fence{Primary: primary, Standby: standbyID, At: time.Now(), StateAt: at, By: c.by,
		Translate: c.standby.translate, MM2SourceAlias: c.standby.alias, Margin: c.standby.margin,
		MapTopics: c.standby.topicMap(), TopicPrefix: c.standby.topicPrefix}); err != nil {
		return fmt.Errorf("%s: %w; nothing was written to the standby", c.by, err)
	}
	doc.Fenced = true
	fmt.Fprintf(out, "fenced: the daemon of cluster %s never writes to cluster %s again\n", primary, standbyID)
	if err := st.Fences().Delete(ctx, standbyID); err != nil {
		doc.Errors = append(doc.Errors, err.Error())
	}
	return nil
}

// resume resumes (or, in a dry run, names) the connectors that ran on the
// primary, pauses those it had paused; without the standby's Connect it
// prints the REST calls.
func (c *failoverCmd) resume(ctx context.Context, state *snapshot.Snapshot, rep *standby.Report, doc *failoverDocument, out io.Writer) {
	rc, err := c.standby.connect()
	if err != nil {
		doc.Errors = append(doc.Errors, err.Error())
		return
	}
	var jobs []resumeJob
	for _, cp := range rep.Plan.Connectors {
		sc, _ := state.Connector(cp.Name)
		if !sc.HasConfig || slices.Contains(doc.ResumedBefore, cp.Name) {
			continue // an earlier run resumed it (failover_rerun.go)
		}
		verb, list := "resume", &doc.Resumed
		switch sc.TargetState {
		case snapshot.StateStopped:
			doc.LeftStopped = append(doc.LeftStopped, cp.Name)
			c.holdStopped(ctx, rc, state, rep, cp.Name, doc)
			continue
		case snapshot.StatePaused:
			verb, list = "pause", &doc.Paused
		}
		if c.hold(ctx, rc, state, rep, cp.Name, verb, doc) || c.holdUntranslated(rep, cp.Name, doc) {
			continue // failover_sinktopics.go, failover_misses.go
		}
		if rc == nil {
			doc.ResumeCommands = append(doc.ResumeCommands,
				fmt.Sprintf(`%s -X PUT "$STANDBY_CONNECT_URL/connectors/%s/%s"`, restore.Curl, restSegment(cp.Name), verb))
			*list = append(*list, cp.Name)
			continue
		}
		if c.dryRun {
			*list = append(*list, cp.Name)
			continue
		}
		jobs = append(jobs, resumeJob{name: cp.Name, verb: verb, list: list})
	}
	c.sendResumes(ctx, rc, jobs, doc)
	c.noteHeld(doc, out)
	c.noteHeldUntranslated(doc, out)
	held := ""
	if n := len(doc.Held) - countStopped(doc.Held) + len(doc.HeldUntranslated); n > 0 {
		held = fmt.Sprintf(", held %d stopped (see above)", n)
	}
	switch {
	case rc == nil && len(doc.ResumeCommands) > 0:
		fmt.Fprintf(out, "no --standby-connect-url: set STANDBY_CONNECT_URL to the standby's Connect REST URL and run:\n")
		for _, cmd := range doc.ResumeCommands {
			fmt.Fprintf(out, "  %s\n", cmd)
		}
	case c.dryRun:
		fmt.Fprintf(out, "would resume %d connectors, pause %d, leave %d stopped%s\n", len(doc.Resumed), len(doc.Paused), len(doc.LeftStopped), held)
	default:
		fmt.Fprintf(out, "resumed %d connectors, paused %d, left %d stopped (as on the primary)%s\n", len(doc.Resumed), len(doc.Paused), len(doc.LeftStopped), held)
	}
}

// duplicates reads and prints the bound of the records the standby's
// sinks may deliver again (standby.DuplicateBounds), before they resume.
func (c *failoverCmd) duplicates(ctx context.Context, cl *kgo.Client, rep *standby.Report, doc *failoverDocument, out io.Writer) {
	bounds, err := standby.DuplicateBounds(ctx, cl, rep.State)
	if err != nil {
		doc.Errors = append(doc.Errors, err.Error()+": the duplicates bound is unknown")
		return
	}
	doc.DuplicateBounds = bounds
	per := map[string]int64{}
	var names []string
	for _, b := range bounds {
		doc.DuplicatesBound += b.Records
		if _, ok := per[b.Group]; !ok {
			names = append(names, b.Group)
		}
		per[b.Group] += b.Records
	}
	fmt.Fprintf(out, "duplicates: the standby's sinks may deliver again at most %d records\n", doc.DuplicatesBound)
	fmt.Fprintf(out, "  (from their translated offsets to the ends of the standby's topics)\n")
	for i, g := range names {
		if i == 10 {
			fmt.Fprintf(out, "  ... and %d more groups (--output json has each partition)\n", len(names)-i)
			break
		}
		fmt.Fprintf(out, "  %s: at most %d\n", g, per[g])
	}
}

// resumeJob is one resume (or pause) request of failover.
type resumeJob struct {
	name, verb string
	list       *[]string
}

// resumeConcurrency bounds the resume requests in flight: a Connect
// leader handles each with one config-topic write, so a few at once
// shorten a failover of many connectors without flooding the workers.
const resumeConcurrency = 8

// sendResumes sends jobs to the standby's Connect, a few at once; each
// done goes to its list (sorted), each failure to doc.Errors.
func (c *failoverCmd) sendResumes(ctx context.Context, rc *connectrest.Client, jobs []resumeJob, doc *failoverDocument) {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, resumeConcurrency)
	)
	for _, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			do := rc.Resume
			if j.verb == "pause" {
				do = rc.Pause
			}
			err := do(ctx, j.name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				doc.Errors = append(doc.Errors, fmt.Sprintf("%s connector %s on the standby: %v", j.verb, j.name, err))
				return
			}
			*j.list = append(*j.list, j.name)
		})
	}
	wg.Wait()
	slices.Sort(doc.Resumed)
	slices.Sort(doc.Paused)
	slices.Sort(doc.Errors)
}

// finish prints the summary (or the JSON document) and the errors met.
func (c *failoverCmd) finish(doc *failoverDocument, began time.Time, out io.Writer) error {
	doc.Seconds = time.Since(began).Seconds()
	doc.RPOSeconds = began.Sub(doc.StateAt).Seconds()
	if doc.Resumed == nil {
		doc.Resumed = []string{}
	}
	if doc.Paused == nil {
		doc.Paused = []string{}
	}
	if doc.LeftStopped == nil {
		doc.LeftStopped = []string{}
	}
	for _, e := range doc.Errors {
		fmt.Fprintf(c.stderr, "offsetkeeper %s: %s\n", c.by, e)
	}
	if c.output == "json" {
		if err := writeJSON(c.stdout, doc); err != nil {
			return err
		}
	} else {
		took := time.Duration(doc.Seconds * float64(time.Second)).Round(time.Millisecond)
		fmt.Fprintf(out, "%s done: RPO %s (age of the last change applied), took %s\n", c.by,
			time.Duration(doc.RPOSeconds*float64(time.Second)).Round(time.Millisecond), took)
		if !c.dryRun && len(doc.Resumed) > 0 {
			// What the failover controls ends at the resumes; the workers
			// then start the tasks themselves (minutes for a thousand).
			fmt.Fprintf(out, "RTO %s: from the start of %s until every connector was resumed; the standby's workers start their tasks now\n", took, c.by)
		}
	}
	if len(doc.Errors) > 0 {
		return errors.New("some connectors were not resumed (see above); resume them on the standby's Connect")
	}
	return nil
}
