package main

// This file is failover --dry-run before offsets transactions left open on
// the standby (the primary's daemon killed mid-sync, or a failover killed
// part way): the dry run writes nothing, so they do not stop it; it names
// them and says what the real run will do about them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// failoverOpenTxn is an offsets transaction of offsetkeeper's open on the
// standby, as failover --dry-run found it.
type failoverOpenTxn struct {
	TxnID string `json:"transactional_id"`
	State string `json:"state"`
	Topic string `json:"topic"`
	// Since is when the broker says it began; nil when it does not say.
	Since *time.Time `json:"since,omitempty"`
	// Ended tells that the real run ends it first (--force, or a run
	// again after a failover killed part way); otherwise the real run is
	// refused while it is open.
	Ended bool `json:"ended_by_the_run"`
}

// dryRunOpenTxns returns, when err (a dry run's check) refused only for
// offsetkeeper's transactions open on the standby's offsets topics, those
// transactions; nil otherwise (err stands as it is).
func (c *failoverCmd) dryRunOpenTxns(ctx context.Context, cl *kgo.Client, err error, rep *standby.Report) []failoverOpenTxn {
	var refused *restore.RefusedError
	if !c.dryRun || rep == nil || rep.Plan == nil || len(rep.Plan.OpenRestores) == 0 || !errors.As(err, &refused) ||
		len(refused.Refusals) == 0 || slices.ContainsFunc(refused.Refusals, func(r restore.Refusal) bool {
		return r.Check != restore.CheckConcurrentRestore
	}) {
		return nil
	}
	var ids []string
	for _, o := range rep.Plan.OpenRestores {
		ids = append(ids, o.TxnID)
	}
	// Since when, best effort: the refusal stands on the open transactions
	// the check found, whatever this says.
	described, _ := kadm.NewClient(cl).DescribeTransactions(ctx, ids...)
	var out []failoverOpenTxn
	for _, o := range rep.Plan.OpenRestores {
		t := failoverOpenTxn{TxnID: o.TxnID, State: o.State, Topic: o.Topic, Ended: c.force || c.again}
		if d, ok := described[o.TxnID]; ok && d.Err == nil && d.StartTimestamp > 0 {
			since := time.UnixMilli(d.StartTimestamp).UTC()
			t.Since = &since
		}
		out = append(out, t)
	}
	return out
}

// noteOpenTxns says, in a dry run, which transactions are open on the
// standby and what the real run does about them.
func (c *failoverCmd) noteOpenTxns(txns []failoverOpenTxn, doc *failoverDocument, out io.Writer) {
	doc.OpenTransactions = txns
	if len(txns) == 0 {
		return // nothing open: nothing to refuse for, nothing to end
	}
	for _, t := range txns {
		since := ""
		if t.Since != nil {
			since = fmt.Sprintf(" since %s (%s ago)", snapshot.FmtTime(*t.Since), time.Since(*t.Since).Round(time.Second))
		}
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("open transaction on the standby: offsetkeeper's transactional id %q, %s%s, on offsets topic %q: "+
			"the primary's daemon caught mid-sync, a %s killed part way, or a restore someone runs there", t.TxnID, t.State, since, t.Topic, c.by)))
	}
	switch {
	case c.force:
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("--force: the %s ends it first; what was in it is written again by the %s", c.by, c.by)))
	case c.again:
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("the %s ends it first (a run again after one killed part way); what was in it is written again", c.by)))
	default:
		fmt.Fprintln(out, wrapNote(fmt.Sprintf("the %s will be refused while it is open (exit 3, nothing written, no fence stored); "+
			"with --force it ends it first; or the broker aborts it after its timeout (1 minute by default)", c.by)))
	}
}

// openTxnsBlocker is how a dry run that found transactions the real run
// refuses for ends: as restore --dry-run's refusal (exit 3), with the
// real run under --force, which ends them, as the command to run.
func (c *failoverCmd) openTxnsBlocker(txns []failoverOpenTxn) error {
	if len(txns) == 0 || txns[0].Ended {
		return nil
	}
	var ids []string
	for _, t := range txns {
		ids = append(ids, fmt.Sprintf("%q", t.TxnID))
	}
	how := fmt.Sprintf("run the same %s without --dry-run, with --force, which ends it first", c.by)
	var cmds []string
	if words := c.againCommand("--force"); words != nil {
		cmds = append(cmds, strings.Join(words, " "))
		how = fmt.Sprintf("the %s with --force ends it first: %s", c.by, cmds[0])
	}
	return &restore.AdvisedError{Err: refusedError(fmt.Sprintf("dry run: nothing was written, no fence stored; the %s would be refused "+
		"while offsetkeeper's transaction %s is open on the standby's offsets topic; %s; or wait for the broker to abort it "+
		"(1 minute by default)", c.by, strings.Join(ids, ", "), how)), Commands: cmds}
}
