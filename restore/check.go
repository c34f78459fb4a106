package restore

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// Names of the safety checks, as Refusal.Check has them.
const (
	CheckRunning           = "connector-running"
	CheckGroupMembers      = "group-members"
	CheckOpenTransaction   = "open-transaction"
	CheckCleanupPolicy     = "cleanup-policy"
	CheckConcurrentRestore = "concurrent-restore"
)

// Refusal is one reason a restore is refused.
type Refusal struct {
	// Connector is the connector concerned, empty for a topic-wide check.
	Connector string `json:"connector,omitempty"`
	// Check names the check (CheckRunning, ...).
	Check string `json:"check"`
	// Reason says what was found and how to resolve it.
	Reason string `json:"reason"`
	// foreign marks members of a group whose connector runs no task here:
	// stopping it is no way ahead (hint).
	foreign bool
}

func (r Refusal) String() string {
	if r.Connector == "" {
		return r.Reason
	}
	return fmt.Sprintf("connector %q: %s", r.Connector, r.Reason)
}

// RefusedError lists every reason the safety checks refused a restore. It
// wraps ErrRefused.
type RefusedError struct {
	Refusals []Refusal
	// Scoped, ConnectURL and Stopping say what the restore was given
	// already (--connector, a Connect URL, --stop-connectors), so the
	// hint offers only the ways it was not.
	Scoped, ConnectURL, Stopping bool
	// Layout: the workers were found by a topic layout (MSK Connect),
	// which has no REST API to stop them through.
	Layout bool
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v, nothing was written (%s):", ErrRefused, plural(len(e.Refusals), "problem", "problems"))
	e.list(&b)
	return b.String()
}

// list writes the refusals, one "\n  - " line each, and how to go ahead
// when some connectors block.
func (e *RefusedError) list(b *strings.Builder) {
	for _, r := range e.Refusals {
		b.WriteString("\n  - ")
		b.WriteString(r.String())
	}
	if hint := e.hint(); hint != "" {
		b.WriteString("\n")
		b.WriteString(hint)
	}
}

// wrapLines wraps each line of s to the plan's 120 columns, an item
// ("  - ...") under its text, with english.Advice: the commands s holds
// (cmds) go on lines of their own, never broken at a space.
func wrapLines(s string, cmds ...string) string {
	return english.Advice(s, 120, cmds)
}

// advisedCommands tells that a refusal's text holds no command to paste
// (its reasons name flags and REST requests), so a printer may wrap it.
func (e *RefusedError) advisedCommands() []string { return nil }

// Blocking names the connectors a refusal is about because they run, are
// paused or have group members (the REST view's too), sorted: the
// connectors this restore would write that must be stopped first.
func (e *RefusedError) Blocking() []string {
	var names []string
	for _, r := range e.Refusals {
		switch r.Check {
		case CheckRunning, CheckGroupMembers, CheckConnectState:
			if r.Connector != "" && !r.foreign && !slices.Contains(names, r.Connector) {
				names = append(names, r.Connector)
			}
		}
	}
	sort.Strings(names)
	return names
}

// hint says how to go ahead when connectors block: stop them, leave them
// out, or let the restore stop and resume them.
func (e *RefusedError) hint() string {
	names := e.Blocking()
	if len(names) == 0 {
		return ""
	}
	them := "them"
	if len(names) == 1 {
		them = "it"
	}
	ways := []string{"stop " + them + " first"}
	if !e.Scoped {
		ways = append(ways, "restore the other connectors alone with --connector NAME")
	}
	switch {
	case e.Layout:
		// No REST API to stop them through (MSK Connect).
	case !e.ConnectURL:
		ways = append(ways, "let the restore stop and resume "+them+" with --connect-url URL --stop-connectors --resume")
	case !e.Stopping:
		ways = append(ways, "let the restore stop and resume "+them+" with --stop-connectors --resume")
	}
	last := len(ways) - 1
	text := ways[last]
	if last > 0 {
		text = strings.Join(ways[:last], ", ") + ", or " + ways[last]
	}
	return fmt.Sprintf("The restore would write %s %s: %s.", plural(len(names), "connector", "connectors"), strings.Join(names, ", "), text)
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Check runs the safety checks against the live cluster for what the plan
// writes, and returns nil or a *RefusedError (wrapping ErrRefused) that
// lists every problem found:
//   - a connector the plan writes (see ConnectorPlan.Writes) runs or is
//     paused: its latest target state is not STOPPED or its task count is
//     not 0 (a connector without config here counts as stopped);
//   - its sink group has members;
//   - it is exactly-once (or has its own offsets topic) and a transaction
//     is open on a partition its keys live in or go to;
//   - an offsets topic written to has a cleanup.policy other than exactly
//     compact (as described by NewPlan);
//   - another restore's transaction is open on an offsets topic written to
//     (or, for an exactly-once connector, on a partition its keys live in).
//
// A connector the plan leaves alone never refuses, whatever its state;
// another restore's transaction on a topic not written to is a warning
// (Plan.OpenRestores). A check that cannot be run (a request fails) is a
// refusal too. The connector states and group members are those NewPlan
// read; open transactions are read now. Check writes nothing but the
// plan's OpenRestores. A plan through the Connect REST API (PlanREST)
// runs only the connector checks, and cl may be nil then.
func (p *Plan) Check(ctx context.Context, cl *kgo.Client) error {
	var refusals []Refusal
	add := func(connector, check, format string, args ...any) {
		refusals = append(refusals, Refusal{Connector: connector, Check: check, Reason: fmt.Sprintf(format, args...)})
	}
	for _, cp := range p.Connectors {
		if !cp.Writes() {
			continue // left alone: its state does not matter
		}
		lc := cp.Live
		if p.opts.Layout != nil {
			// A layout's workers (MSK Connect's) have no REST API and no
			// stop: the config says STARTED for as long as the connector
			// exists; its status topic says whether a worker runs it.
			continue
		}
		if p.cloud {
			// Confluent Cloud pauses the connector while it applies the
			// offsets request, and resumes it: nothing to stop first.
			continue
		}
		if lc.HasConfig && !lc.Stopped() {
			name := url.PathEscape(cp.Name)
			add(cp.Name, CheckRunning, "is %s (target state %s, %s in the config topic); stop it with PUT /connectors/%s/stop and wait until GET /connectors/%s/status shows STOPPED with no tasks", cp.busy(), lc.TargetState, taskCount(lc.Tasks), name, name)
		}
		if sp := cp.Sink; sp != nil && sp.Members > 0 && (!lc.HasConfig || lc.Stopped()) {
			refusals = append(refusals, foreignMembers(ctx, cl, cp, sp))
		} else if sp != nil && sp.Members > 0 {
			add(cp.Name, CheckGroupMembers, "sink group %q has %s (state %s): its tasks still consume and commit; stop the connector and wait until the group is Empty", sp.Group, plural(sp.Members, "live member", "live members"), sp.State)
		}
	}

	refusals = append(refusals, p.sinkGuardRefusals()...)
	if p.opts.Layout != nil {
		refusals = append(refusals, p.checkStatuses(ctx, cl)...)
	}
	if p.rest {
		// Planned through the Connect REST API: no Kafka to ask about
		// transactions and policies; Connect checks its own.
		if len(refusals) == 0 {
			return nil
		}
		return &RefusedError{Refusals: refusals}
	}
	txnRefusals, restores := p.checkTransactions(ctx, cl)
	refusals = append(refusals, txnRefusals...)

	written := p.writtenTopics()
	for _, t := range sortedKeys(written) {
		policy, ok := p.policies[t]
		if ok && !capture.OnlyCompact(policy) {
			add("", CheckCleanupPolicy, "offsets topic %q has cleanup.policy=%s: a Connect worker refuses to start on an offsets topic whose policy is not exactly compact; fix it with kafka-configs.sh --bootstrap-server %s --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", t, policy, orBrokers(p.bootstrap), t)
		}
	}

	p.OpenRestores = nil
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort"})
	if err != nil && len(written) > 0 {
		add("", CheckConcurrentRestore, "cannot check for another restore running (list transactions: %v)", err)
	}
	for _, t := range listed.Sorted() {
		topic, ok := strings.CutPrefix(t.TxnID, TransactionalIDPrefix)
		if !ok {
			continue
		}
		p.OpenRestores = append(p.OpenRestores, OpenRestore{TxnID: t.TxnID, State: t.State, Topic: topic, Written: written[topic]})
		if written[topic] && !restores[t.TxnID] {
			add("", CheckConcurrentRestore, "another restore is running: its transaction %q is %s on offsets topic %q, which this restore writes; wait for it to finish (an abandoned one is aborted by the broker after its 1 minute timeout, --force fences it at once)", t.TxnID, t.State, topic)
		}
	}

	if len(refusals) == 0 {
		return nil
	}
	return &RefusedError{Refusals: refusals}
}

// OpenRestore is another restore's open transaction, as Check found it.
type OpenRestore struct {
	// TxnID is its transactional id, TransactionalIDPrefix + Topic.
	TxnID, State, Topic string
	// Written tells whether this plan writes Topic (Check then refuses).
	Written bool
}

// writtenTopics are the offsets topics the plan writes records to.
func (p *Plan) writtenTopics() map[string]bool {
	written := map[string]bool{}
	for _, cp := range p.Connectors {
		if cp.Source == nil {
			continue
		}
		for _, t := range cp.Source.writtenTopics() {
			written[t] = true
		}
	}
	return written
}

// taskCount is a config topic task count in words: "1 task", "no task
// commit".
func taskCount(n int) string {
	if n < 0 {
		return "no task commit"
	}
	return plural(n, "task", "tasks")
}

// checkTransactions refuses while a transaction is open on a partition an
// exactly-once connector's keys live in or will be written to. A
// transaction of another restore (its id starts with
// TransactionalIDPrefix) is refused as CheckConcurrentRestore; the
// returned set holds those transactional ids.
func (p *Plan) checkTransactions(ctx context.Context, cl *kgo.Client) (refusals []Refusal, restores map[string]bool) {
	restores = map[string]bool{}
	owners := map[topicPart][]string{}
	set := kadm.TopicsSet{}
	for _, cp := range p.Connectors {
		if cp.Source == nil || !cp.Source.ExactlyOnce || !cp.Writes() {
			continue
		}
		for t, ps := range cp.Source.touched {
			if p.wouldCreate(t) {
				continue // created empty by the real run: no transaction in it
			}
			for part := range ps {
				set.Add(t, part)
				owners[topicPart{t, part}] = append(owners[topicPart{t, part}], cp.Name)
			}
		}
	}
	if len(set) == 0 {
		return nil, restores
	}
	connectorsOf := func() []string {
		var names []string
		for _, cp := range p.Connectors {
			if cp.Source != nil && cp.Source.ExactlyOnce && cp.Writes() {
				names = append(names, cp.Name)
			}
		}
		return names
	}
	adm := kadm.NewClient(cl)
	described, err := adm.DescribeProducers(ctx, set)
	if err != nil {
		for _, name := range connectorsOf() {
			refusals = append(refusals, Refusal{Connector: name, Check: CheckOpenTransaction, Reason: fmt.Sprintf("cannot check for open transactions on its offsets partitions (describe producers: %v)", err)})
		}
		return refusals, restores
	}
	type open struct {
		tp     topicPart
		pid    int64
		offset int64
	}
	var found []open
	for _, dp := range described.SortedPartitions() {
		tp := topicPart{dp.Topic, dp.Partition}
		if _, ok := owners[tp]; !ok {
			continue
		}
		if dp.Err != nil {
			for _, name := range owners[tp] {
				refusals = append(refusals, Refusal{Connector: name, Check: CheckOpenTransaction, Reason: fmt.Sprintf("cannot check for open transactions on %s/%d: %v", dp.Topic, dp.Partition, dp.Err)})
			}
			continue
		}
		for _, prod := range dp.ActiveProducers.Sorted() {
			if prod.CurrentTxnStartOffset >= 0 {
				found = append(found, open{tp, prod.ProducerID, prod.CurrentTxnStartOffset})
			}
		}
	}
	for tp := range owners {
		if _, ok := described[tp.topic].Partitions[tp.part]; !ok {
			for _, name := range owners[tp] {
				refusals = append(refusals, Refusal{Connector: name, Check: CheckOpenTransaction, Reason: fmt.Sprintf("cannot check for open transactions on %s/%d: no answer from its leader", tp.topic, tp.part)})
			}
		}
	}
	if len(found) == 0 {
		sortRefusals(refusals)
		return refusals, restores
	}
	// Name the transactional ids, best effort.
	var pids []int64
	for _, f := range found {
		pids = append(pids, f.pid)
	}
	txnIDs := map[int64]string{}
	if listed, err := adm.ListTransactions(ctx, pids, nil); err == nil {
		for _, t := range listed {
			txnIDs[t.ProducerID] = t.TxnID
		}
	}
	for _, f := range found {
		id := txnIDs[f.pid]
		who := fmt.Sprintf("producer id %d", f.pid)
		if id != "" {
			who = fmt.Sprintf("transactional id %q (producer id %d)", id, f.pid)
		}
		for _, name := range owners[f.tp] {
			if strings.HasPrefix(id, TransactionalIDPrefix) {
				// Regression: another restore's transaction, seen here
				// and ended before the ListTransactions of Check, was
				// blamed on "an exactly-once task or an offset alter",
				// and the refusal did not say another restore was
				// running (reliability's TestKillRestore and
				// TestConcurrentRestoresRace failed now and then).
				restores[id] = true
				refusals = append(refusals, Refusal{Connector: name, Check: CheckConcurrentRestore, Reason: fmt.Sprintf("another restore is running: its transaction %q is open on %s/%d since offset %d; wait for it to finish (an abandoned one is aborted by the broker after its 1 minute timeout, --force fences it at once)", id, f.tp.topic, f.tp.part, f.offset)})
				continue
			}
			refusals = append(refusals, Refusal{Connector: name, Check: CheckOpenTransaction, Reason: fmt.Sprintf("a transaction of %s is open on %s/%d since offset %d: an exactly-once task or an offset alter is still writing; wait for it to end (the broker aborts it after its transaction timeout) or fence it", who, f.tp.topic, f.tp.part, f.offset)})
		}
	}
	sortRefusals(refusals)
	return refusals, restores
}

func sortRefusals(rs []Refusal) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Connector < rs[j].Connector })
}

// busyWorkerStates are the worker-reported states of a connector or task
// that a worker still runs (PAUSED keeps its tasks; RESTARTING comes back).
var busyWorkerStates = []string{capture.WorkerRunning, capture.WorkerPaused, capture.WorkerRestarting}

// checkStatuses is the running check of a layout's connectors: what their
// status topics say now. A worker that shuts down writes UNASSIGNED for its
// connector and tasks, so any other live state (or none readable) refuses.
func (p *Plan) checkStatuses(ctx context.Context, cl *kgo.Client) []Refusal {
	var out []Refusal
	var names []string
	for _, cp := range p.Connectors {
		if cp.Writes() && cp.Live.HasConfig {
			names = append(names, cp.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	topics := p.opts.StatusTopics
	if len(topics) == 0 {
		for _, n := range names {
			out = append(out, Refusal{Connector: n, Check: CheckRunning, Reason: "has a config, and the topic layout finds no status topic to tell whether a worker runs it (give --status-topic-pattern); once you know it is stopped, --force goes ahead"})
		}
		return out
	}
	st, err := capture.ReadStatuses(ctx, cl, topics[0], topics[1:]...)
	if err != nil {
		return []Refusal{{Check: CheckRunning, Reason: fmt.Sprintf("cannot tell whether the connectors run (%v)", err)}}
	}
	for _, n := range names {
		cs := st.Connectors[n]
		if cs == nil {
			continue // never reported: no worker ever ran it
		}
		var busy []string
		if c := cs.Connector; c != nil && slices.Contains(busyWorkerStates, c.State) {
			busy = append(busy, fmt.Sprintf("the connector is %s on worker %s", c.State, c.WorkerID))
		}
		for _, t := range cs.Tasks {
			if slices.Contains(busyWorkerStates, t.State) {
				busy = append(busy, fmt.Sprintf("task %d is %s on worker %s", t.ID, t.State, t.WorkerID))
			}
		}
		if len(busy) > 0 {
			out = append(out, Refusal{Connector: n, Check: CheckRunning, Reason: fmt.Sprintf("runs: its status topic says %s. On MSK Connect, delete the connector (its topics stay) and wait until its status shows UNASSIGNED; a worker that died without a word leaves RUNNING behind: once you know none runs, --force goes ahead", strings.Join(busy, ", "))})
		}
	}
	return out
}
