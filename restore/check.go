package restore

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
	Connector string
	// Check names the check (CheckRunning, ...).
	Check string
	// Reason says what was found and how to resolve it.
	Reason string
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
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v, nothing was written (%d problems):", ErrRefused, len(e.Refusals))
	for _, r := range e.Refusals {
		b.WriteString("\n  - ")
		b.WriteString(r.String())
	}
	return b.String()
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Check runs the safety checks against the live cluster, and returns nil or
// a *RefusedError (wrapping ErrRefused) that lists every problem found:
//   - a connector in scope runs: its latest target state is not STOPPED or
//     its task count is not 0 (a connector without config here counts as
//     stopped);
//   - its sink group has members;
//   - an exactly-once connector (or one with its own offsets topic) has an
//     open transaction on a partition its keys live in or go to;
//   - an offsets topic written to has a cleanup.policy other than exactly
//     compact (as described by NewPlan);
//   - another restore's transaction is open.
//
// A check that cannot be run (a request fails) is a refusal too. The
// connector states and group members are those NewPlan read; open
// transactions are read now. Check writes nothing.
func (p *Plan) Check(ctx context.Context, cl *kgo.Client) error {
	var refusals []Refusal
	add := func(connector, check, format string, args ...any) {
		refusals = append(refusals, Refusal{Connector: connector, Check: check, Reason: fmt.Sprintf(format, args...)})
	}
	for _, cp := range p.Connectors {
		lc := cp.Live
		if lc.HasConfig && !lc.Stopped() {
			tasks := fmt.Sprintf("%d tasks", lc.Tasks)
			if lc.Tasks < 0 {
				tasks = "no task commit"
			}
			name := url.PathEscape(cp.Name)
			add(cp.Name, CheckRunning, "is running (target state %s, %s in the config topic); stop it with PUT /connectors/%s/stop and wait until GET /connectors/%s/status shows STOPPED with no tasks", lc.TargetState, tasks, name, name)
		}
		if sp := cp.Sink; sp != nil && sp.Members > 0 {
			add(cp.Name, CheckGroupMembers, "sink group %q has %d live members (state %s): its tasks still consume and commit; stop the connector and wait until the group is Empty", sp.Group, sp.Members, sp.State)
		}
	}

	refusals = append(refusals, p.checkTransactions(ctx, cl)...)

	written := map[string]bool{}
	for _, cp := range p.Connectors {
		if cp.Source == nil {
			continue
		}
		for _, ch := range cp.Source.Changes {
			if ch.Action.writes() {
				written[ch.Topic] = true
			}
		}
	}
	for _, t := range sortedKeys(written) {
		policy, ok := p.policies[t]
		if ok && !onlyCompact(policy) {
			add("", CheckCleanupPolicy, "offsets topic %q has cleanup.policy=%s: a Connect worker refuses to start on an offsets topic whose policy is not exactly compact; fix it with kafka-configs.sh --bootstrap-server <brokers> --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", t, policy, t)
		}
	}

	adm := kadm.NewClient(cl)
	listed, err := adm.ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort"})
	if err != nil {
		add("", CheckConcurrentRestore, "cannot check for another restore running (list transactions: %v)", err)
	}
	for _, t := range listed.Sorted() {
		if strings.HasPrefix(t.TxnID, TransactionalIDPrefix) {
			add("", CheckConcurrentRestore, "another restore is running: its transaction %q is %s; wait for it to finish (an abandoned one is aborted by the broker after its 1 minute timeout)", t.TxnID, t.State)
		}
	}

	if len(refusals) == 0 {
		return nil
	}
	return &RefusedError{Refusals: refusals}
}

// checkTransactions refuses while a transaction is open on a partition an
// exactly-once connector's keys live in or will be written to.
func (p *Plan) checkTransactions(ctx context.Context, cl *kgo.Client) []Refusal {
	owners := map[topicPart][]string{}
	set := kadm.TopicsSet{}
	for _, cp := range p.Connectors {
		if cp.Source == nil || !cp.Source.ExactlyOnce {
			continue
		}
		for t, ps := range cp.Source.touched {
			for part := range ps {
				set.Add(t, part)
				owners[topicPart{t, part}] = append(owners[topicPart{t, part}], cp.Name)
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	var refusals []Refusal
	connectorsOf := func() []string {
		var names []string
		for _, cp := range p.Connectors {
			if cp.Source != nil && cp.Source.ExactlyOnce {
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
		return refusals
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
		return refusals
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
		who := fmt.Sprintf("producer id %d", f.pid)
		if id := txnIDs[f.pid]; id != "" {
			who = fmt.Sprintf("transactional id %q (producer id %d)", id, f.pid)
		}
		for _, name := range owners[f.tp] {
			refusals = append(refusals, Refusal{Connector: name, Check: CheckOpenTransaction, Reason: fmt.Sprintf("a transaction of %s is open on %s/%d since offset %d: an exactly-once task or an offset alter is still writing; wait for it to end (the broker aborts it after its transaction timeout) or fence it", who, f.tp.topic, f.tp.part, f.offset)})
		}
	}
	sortRefusals(refusals)
	return refusals
}

func sortRefusals(rs []Refusal) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Connector < rs[j].Connector })
}
