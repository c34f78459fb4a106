package restore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// This file is what a Run records in the store about itself (see
// interrupted.go): its store.RestoreIntent, written before the first
// change to the cluster, brought up to date before the offsets are
// written, and removed once the restore is done.

// testPoint, when set by a test, is called at the named points of a
// restore: "intent" (recorded, nothing changed yet), "undo" (the undo
// snapshot stored, nothing written), "half" (half of a topic's records
// produced in its open transaction), "produced" (all of them, not
// committed) and "committed".
var testPoint func(point string)

func atPoint(point string) {
	if testPoint != nil {
		testPoint(point)
	}
}

// newRestoreID is a restore's ID: the time it began and a random suffix.
func newRestoreID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(b[:])
}

// intentTopics are the offsets topics plan writes, sorted.
func intentTopics(plan *Plan, unowned bool) []store.IntentTopic {
	var topics []string
	for _, cp := range plan.Connectors {
		if cp.Source != nil {
			topics = append(topics, cp.Source.writtenTopics()...)
		}
	}
	if unowned {
		topics = append(topics, plan.opts.OffsetsTopics...)
	}
	sort.Strings(topics)
	topics = slices.Compact(topics)
	out := make([]store.IntentTopic, 0, len(topics))
	for _, t := range topics {
		if t != "" {
			out = append(out, store.IntentTopic{Topic: t, TransactionalID: TransactionalIDPrefix + t})
		}
	}
	return out
}

// record writes the run's intent at stage, with what plan writes and
// the connectors stopped; the first call makes it.
func (r *run) record(ctx context.Context, plan *Plan, stage string, stopping []ConnectorPlan) error {
	if r.Store == nil || r.req.DryRun {
		return nil
	}
	if r.intent == nil {
		host, _ := os.Hostname()
		r.intent = &store.RestoreIntent{
			ID: r.restoreID(), Snapshot: r.req.Snapshot.ID, ClusterID: plan.ClusterID,
			Started: r.began.UTC(), Host: host, PID: os.Getpid(), Again: r.req.Again.Run,
			Unowned: r.req.IncludeUnowned,
		}
	}
	in := r.intent
	in.Stage = stage
	in.Undo = r.report.Undo
	in.Topics = intentTopics(plan, r.req.IncludeUnowned)
	in.Connectors = planNames(plan.Connectors)
	for _, cp := range stopping {
		if !slices.ContainsFunc(in.Stopped, func(s store.IntentStopped) bool { return s.Name == cp.Name }) {
			in.Stopped = append(in.Stopped, store.IntentStopped{Name: cp.Name, Target: cp.Live.TargetState, Before: cp.State()})
		}
	}
	if err := r.Store.Restores().Put(ctx, *in); err != nil {
		return err
	}
	atPoint("intent")
	return nil
}

// recorded removes the run's intent: the restore is done, or left
// nothing to check or put back.
func (r *run) recorded(ctx context.Context) {
	if r.intent == nil {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := r.Store.Restores().Delete(dctx, r.intent.ID); err != nil {
		r.Log.Warn("remove restore record", "restore_id", r.intent.ID, "error", err)
	}
}

// keepRecord marks the run's intent failed: something is left for a
// later run (connectors stopped, a write to check).
func (r *run) keepRecord(ctx context.Context) {
	if r.intent == nil {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r.intent.Stage = store.IntentFailed
	if err := r.Store.Restores().Put(dctx, *r.intent); err != nil {
		r.Log.Warn("record failed restore", "restore_id", r.intent.ID, "error", err)
	}
}

// recoverFirst looks for restores that did not finish before this one
// plans, repairs what their aborted transactions left visible (a dry run
// says what it would write) and takes over the connectors they stopped:
// this restore resumes them as if it had stopped them.
func (r *run) recoverFirst(ctx context.Context) error {
	if r.Store == nil || r.req.Snapshot.ViaREST() {
		return nil
	}
	found, err := RecoverInterrupted(ctx, Recovery{Client: r.Client, Store: r.Store, Out: r.Out, Log: r.Log, DryRun: r.req.DryRun})
	if err != nil {
		return fmt.Errorf("look for restores that did not finish: %w; nothing was written", err)
	}
	for _, x := range found {
		if !x.Done() {
			continue
		}
		r.inherited = append(r.inherited, x.Intent)
	}
	return nil
}

// repairAborted writes back the committed values of the keys of plan's
// topics that the restore's aborted transaction left visible to
// read_uncommitted readers, and says what it did, for the error.
func (r *run) repairAborted(ctx context.Context, plan *Plan, committed []TopicResult) string {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*transactionTimeout)
	defer cancel()
	names := map[string]bool{}
	for _, cp := range plan.Connectors {
		names[cp.Name] = true
	}
	keep := func(k []byte) bool {
		name, ok := capture.KeyConnector(k)
		if !ok {
			return r.req.IncludeUnowned
		}
		return names[string(name)]
	}
	var notes []string
	for _, t := range intentTopics(plan, r.req.IncludeUnowned) {
		if slices.ContainsFunc(committed, func(c TopicResult) bool { return c.Topic == t.Topic }) {
			continue
		}
		// Its own transaction, if an abort did not reach the broker (the
		// commit failed in a way that leaves it open): ended here, by
		// fencing its own transactional id, not at the broker's timeout.
		open, err := openTransactions(rctx, r.Client, []store.IntentTopic{t})
		if err == nil && len(open) > 0 {
			err = fenceIDs(rctx, r.Client, open)
		}
		var diffs []ViewDifference
		if err == nil {
			diffs, err = compareSettled(rctx, r.Client, t.Topic, keep)
		}
		if err == nil && len(diffs) > 0 {
			err = RepairViews(rctx, r.Client, t.Topic, diffs)
			if err == nil {
				notes = append(notes, fmt.Sprintf("its aborted transaction had left %s of topic %s visible to workers without exactly-once source support: their values from before the restore were written back in a committed transaction", plural(len(diffs), "key", "keys"), t.Topic))
			}
		}
		if err != nil {
			r.repairFailed = true
			notes = append(notes, fmt.Sprintf("checking topic %s for what its aborted transaction left visible failed (%v): any later offsetkeeper command against this cluster and store checks it again", t.Topic, err))
		}
	}
	return strings.Join(notes, "; ")
}

// interrupted says an interrupt (Ctrl-C, SIGTERM: main cancels the
// context) stopped the restore, in words, rather than "context canceled".
func interrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return err
	}
	return interruptError{err}
}

// interruptError is an error of a restore cut short by an interrupt: its
// text says "interrupted" where the cause said "context canceled"; it
// still matches context.Canceled.
type interruptError struct{ err error }

func (e interruptError) Error() string {
	msg := strings.ReplaceAll(e.err.Error(), context.Canceled.Error(), "interrupted")
	if !strings.HasPrefix(msg, "interrupted") {
		msg = "interrupted: " + msg
	}
	return msg
}

func (e interruptError) Unwrap() error { return e.err }

// settle removes the run's record once nothing is left for a later run,
// and the records of the restores it took over once their connectors are
// resumed or named; otherwise it marks its own failed.
func (r *run) settle(ctx context.Context, err error) {
	if r.req.DryRun {
		return
	}
	left := err != nil && (!r.nothingWritten() || (r.stop != nil && len(r.stop.stopped) > 0))
	if left {
		r.keepRecord(ctx)
		return
	}
	r.recorded(ctx)
	if err != nil {
		return
	}
	if r.stop == nil {
		if lines := leftStopped(r.report.Plan, r.Connect, r.inherited); len(lines) > 0 {
			for _, l := range lines {
				fmt.Fprintln(r.Out, wrapLines(l, startIn(l)))
			}
			return // their records stay: the next restore names them again
		}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, in := range r.inherited {
		if derr := r.Store.Restores().Delete(dctx, in.ID); derr != nil {
			r.Log.Warn("remove record of restore that did not finish", "restore_id", in.ID, "error", derr)
		}
	}
}
