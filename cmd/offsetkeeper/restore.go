package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

func init() {
	register(commandInfo{
		name:    "restore",
		summary: "write a snapshot's offsets back into Kafka (stop the connectors first; see docs/restore.md)",
		usage: `<ID|latest> [--connector NAME]... [--source-only|--sink-only] [--dry-run] [--force] [--allow-other-cluster]
       [--connect-url URL... [--stop-connectors [--resume]] [--via kafka|connect]]
       --from-file FILE [--connector NAME] [...the same flags]

Compares the snapshot with the live cluster for each connector in scope (the
snapshot's connectors, or those named with --connector) and prints the plan:
per connector "connector <name> (<type>, <state>)", then one line per offset
that changes (old -> new), and "plan: N source writes, M tombstones,
K sink commits, J sink deletions". Then, unless --dry-run:
  1. refuses (exit 3, nothing written) while a connector in scope runs (its
     target state is not STOPPED or its task count is not 0), its sink group
     has members, an exactly-once connector has a transaction open on its
     offsets partitions, an offsets topic is not cleanup.policy=compact, or
     another restore runs; --force skips these checks;
  2. stores the current state of the connectors in scope as an undo snapshot
     and prints "undo snapshot: <ID>" (restore that ID to roll back);
  3. writes source offsets (exact key and value bytes, on murmur2(key) of the
     connector's offsets topic, one transaction per topic) and sink offsets
     (commits and deletions per group);
  4. reads everything back and prints "verified: N connectors match the
     snapshot", or lists what differs and exits 1.
A second run of the same restore finds "nothing to do". With --dry-run the
plan and the safety checks are printed and nothing is written; the exit code
is 3 if the restore would be refused.

With --connect-url the plan shows each connector's REST state, and the
restore also refuses while a connector's REST status is not STOPPED with no
tasks. --stop-connectors stops the connectors in scope first (PUT
/connectors/NAME/stop) and waits until they are STOPPED with no tasks and
their sink groups are empty; --resume then puts those it stopped back
(resume, or pause for a PAUSED one) once the restore is verified. If
anything fails after stopping they are left stopped, and the error says the
state of each. --via connect writes through PATCH /connectors/NAME/offsets
(Kafka 3.6+) instead of Kafka and verifies with GET; Connect rewrites source
keys in its own byte form, so keys in another form are warned about.
--from-file restores a file instead of a snapshot: a Connect REST offsets
body (with --connector NAME) or kafka-consumer-groups CSV
(group,topic,partition,offset); the partitions it names get its offsets
(null removes one), the others stay. See docs/connect-rest.md.`,
		new: func(e *env) command { return &restoreCmd{env: e} },
	})
}

type restoreCmd struct {
	*env
	connectors        listFlag
	sourceOnly        bool
	sinkOnly          bool
	dryRun            bool
	force             bool
	allowOtherCluster bool
	timeout           time.Duration
	// Kafka Connect REST API, see restore_connect.go.
	stopConnectors bool
	resume         bool
	stopTimeout    time.Duration
	via            string
	fromFile       string
}

func (c *restoreCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "restore only this connector of the snapshot; repeatable (default every connector in the snapshot)")
	fs.BoolVar(&c.sourceOnly, "source-only", false, "restore only source connector offsets (the offsets topics)")
	fs.BoolVar(&c.sinkOnly, "sink-only", false, "restore only sink connector offsets (the consumer groups)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print the plan and the safety checks and write nothing (exit 3 if the restore would be refused)")
	fs.BoolVar(&c.force, "force", false, "skip the safety checks (connector running, sink group members, open transactions, offsets topic cleanup.policy, another restore running); dangerous")
	fs.BoolVar(&c.allowOtherCluster, "allow-other-cluster", false, "restore a snapshot taken from another Kafka cluster (migration or disaster recovery into a new cluster)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up the whole restore after this long")
	fs.BoolVar(&c.stopConnectors, "stop-connectors", false, "stop the connectors in scope through the Connect REST API first and wait until they are STOPPED with no tasks and their sink groups empty (needs --connect-url)")
	fs.BoolVar(&c.resume, "resume", false, "with --stop-connectors: once the restore is verified, put back the connectors it stopped (resume, or pause those that were PAUSED)")
	fs.DurationVar(&c.stopTimeout, "stop-timeout", 2*time.Minute, "how long --stop-connectors and --resume wait for the connectors to reach their state")
	fs.StringVar(&c.via, "via", viaKafka, "write the offsets through kafka (exact bytes, the default) or connect (PATCH /connectors/NAME/offsets, Kafka 3.6+; needs --connect-url)")
	fs.StringVar(&c.fromFile, "from-file", "", "restore this file instead of a snapshot: a Connect REST offsets body (needs --connector NAME) or a kafka-consumer-groups CSV (group,topic,partition,offset)")
	c.g.connect.register(fs)
}

// refused marks err as a safety refusal (exit 3) and keeps it matchable.
type refused struct{ err error }

func (r refused) Error() string   { return r.err.Error() }
func (r refused) Unwrap() []error { return []error{errRefused, r.err} }

func (c *restoreCmd) Run(ctx context.Context, args []string) (err error) {
	switch {
	case len(args) == 0 && c.fromFile == "":
		return usagef("missing snapshot ID (or latest), or --from-file FILE")
	case len(args) > 0 && c.fromFile != "":
		return usagef("unexpected argument %q: --from-file restores a file, not a snapshot", args[0])
	case len(args) > 1:
		return usagef("unexpected argument %q", args[1])
	case c.sourceOnly && c.sinkOnly:
		return usagef("--source-only and --sink-only exclude each other: give one or neither")
	}
	if err := c.checkConnectUsage(); err != nil {
		return err
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	var snap *snapshot.Snapshot
	if c.fromFile == "" {
		snap, _, err = store.Get(ctx, args[0])
		if err != nil {
			if errors.Is(err, snapshot.ErrNotFound) {
				return fmt.Errorf("read snapshot %q: %w; 'offsetkeeper list' shows the stored snapshots; nothing was written", args[0], err)
			}
			return fmt.Errorf("read snapshot %q: %w; do not restore it; nothing was written", args[0], err)
		}
	}

	cl, opts, err := c.g.kafkaClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	ropts := restore.Options{
		OffsetsTopics:     opts.OffsetsTopics,
		ConfigTopic:       opts.ConfigTopic,
		GroupPrefix:       opts.GroupPrefix,
		Connectors:        c.connectors,
		SourceOnly:        c.sourceOnly,
		SinkOnly:          c.sinkOnly,
		AllowOtherCluster: c.allowOtherCluster,
		ProgramVersion:    opts.ProgramVersion,
	}
	rc, err := c.connectPreflight(ctx)
	if err != nil {
		return err
	}
	if c.fromFile != "" {
		if snap, err = c.fileSnapshot(ctx, cl, store, ropts); err != nil {
			return err
		}
	}
	plan, err := restore.NewPlan(ctx, cl, snap, ropts)
	if err != nil {
		if errors.Is(err, restore.ErrOtherCluster) {
			return refused{fmt.Errorf("%w; nothing was written", err)}
		}
		return fmt.Errorf("plan restore of snapshot %s: %w; nothing was written", snap.ID, kafkaconf.DescribeError(err))
	}
	if rc != nil && (c.stopConnectors || c.via == viaConnect) {
		if err := sameCluster(ctx, rc, plan.ClusterID); err != nil {
			return err
		}
	}
	var stop *stopper
	if c.stopConnectors {
		stop = &stopper{rc: rc, cl: cl, configTopic: opts.ConfigTopic, out: c.stdout, log: c.log, timeout: c.stopTimeout, resume: c.resume}
		plan, err = c.stopFirst(ctx, stop, cl, snap, ropts, plan)
		if err != nil {
			return stop.fail(ctx, err)
		}
		defer func() { err = stop.fail(ctx, err) }()
	}
	var restRefused []restore.Refusal
	if rc != nil {
		if restRefused, err = restRefusals(ctx, rc, plan); err != nil {
			return fmt.Errorf("check restore of snapshot %s: %w; nothing was written", snap.ID, err)
		}
	}
	if err := plan.Print(c.stdout); err != nil {
		return err
	}
	counts := plan.Counts()

	checkErr := plan.Check(ctx, cl)
	var refusal *restore.RefusedError
	if checkErr != nil && !errors.As(checkErr, &refusal) {
		return fmt.Errorf("check restore of snapshot %s: %w; nothing was written", snap.ID, checkErr)
	}
	if len(restRefused) > 0 {
		if refusal == nil {
			refusal = &restore.RefusedError{}
		}
		refusal.Refusals = append(refusal.Refusals, restRefused...)
		checkErr = refusal
	}
	if refusal != nil && stop != nil && c.dryRun {
		// Stopping first would resolve these.
		refusal.Refusals = slices.DeleteFunc(refusal.Refusals, func(r restore.Refusal) bool { return stop.resolved(plan, r) })
		if len(refusal.Refusals) == 0 {
			refusal, checkErr = nil, nil
		}
	}
	if c.force {
		fmt.Fprintln(c.stderr, "WARNING: --force: the safety checks are SKIPPED (connector running, sink group members, open transactions, offsets topic cleanup.policy, another restore running).")
		fmt.Fprintln(c.stderr, "WARNING: a running connector overwrites restored offsets, and the broker rejects commits into a group that has members.")
		if refusal != nil {
			fmt.Fprintln(c.stderr, "WARNING: without --force this restore would be refused:")
			for _, r := range refusal.Refusals {
				fmt.Fprintf(c.stderr, "WARNING:   - %s\n", r)
			}
		}
		c.log.Warn("safety checks skipped with --force", "snapshot_id", snap.ID, "refusals", len(refusalsOf(refusal)))
		if !c.dryRun && slices.ContainsFunc(refusalsOf(refusal), func(r restore.Refusal) bool { return r.Check == restore.CheckConcurrentRestore }) {
			// As documented: --force fences the other restore's open
			// transaction at once, even when this one has nothing to write
			// to its topic (else the next restore is refused until the
			// broker's timeout aborts it).
			ids, err := restore.FenceOpenRestores(ctx, cl)
			for _, id := range ids {
				fmt.Fprintf(c.stderr, "WARNING: --force: fenced the open transaction %q of another restore; nothing it wrote in that transaction is kept\n", id)
			}
			if err != nil {
				return fmt.Errorf("fence another restore's transaction: %w; nothing was written", err)
			}
		}
	} else if refusal != nil {
		if c.dryRun {
			fmt.Fprintln(c.stdout, "dry run: nothing written; the restore would be refused (see below)")
		}
		return refused{checkErr}
	}
	var reqs []restore.ConnectRequest
	if c.via == viaConnect {
		if reqs, err = c.connectRequests(plan); err != nil {
			return err
		}
	}

	if counts.Writes() == 0 {
		if diffs := plan.Differences(); len(diffs) > 0 {
			return fmt.Errorf("%w: nothing can be written, but %d offsets differ:\n  - %s", restore.ErrVerifyFailed, len(diffs), strings.Join(diffs, "\n  - "))
		}
		fmt.Fprintf(c.stdout, "nothing to do: the live state of %d connectors already matches snapshot %s\n", len(plan.Connectors), snap.ID)
		c.log.Info("restore: nothing to do", "snapshot_id", snap.ID, "connectors", len(plan.Connectors), "duration", time.Since(began).Round(time.Millisecond))
		return stop.finish(ctx)
	}
	if c.dryRun {
		fmt.Fprintln(c.stdout, "dry run: nothing written")
		c.log.Info("restore planned (dry run)", "snapshot_id", snap.ID, "connectors", len(plan.Connectors),
			"source_writes", counts.SourceWrites, "tombstones", counts.Tombstones, "sink_commits", counts.SinkCommits, "sink_deletions", counts.SinkDeletions,
			"duration", time.Since(began).Round(time.Millisecond))
		return nil
	}

	undo, err := store.Put(ctx, plan.Live)
	if err != nil {
		return fmt.Errorf("store undo snapshot: %w; nothing was written", err)
	}
	fmt.Fprintf(c.stdout, "undo snapshot: %s\n", undo.ID)

	if c.via == viaConnect {
		if err := c.applyConnect(ctx, rc, reqs, undo.ID); err != nil {
			return err
		}
		c.log.Info("restore done through Connect", "snapshot_id", snap.ID, "undo_snapshot_id", undo.ID, "connectors", len(reqs),
			"duration", time.Since(began).Round(time.Millisecond))
		return stop.finish(ctx)
	}

	res, err := restore.Apply(ctx, cl, plan)
	if err != nil {
		if errors.Is(err, restore.ErrFenced) && len(res.Topics) == 0 && len(res.Groups) == 0 {
			// Regression: this said "to roll back: offsetkeeper restore
			// <undo>" although nothing was written, and doing so would
			// have undone the other restore.
			return fmt.Errorf("%w; nothing of this restore was written: do not restore its undo snapshot %s", err, undo.ID)
		}
		return fmt.Errorf("%w; to roll back what was written: offsetkeeper restore %s", kafkaconf.DescribeError(err), undo.ID)
	}
	fmt.Fprintf(c.stdout, "applied: %d source writes and %d tombstones in %d topics, %d sink commits and %d sink deletions in %d groups (%s)\n",
		res.SourceWrites, res.Tombstones, len(res.Topics), res.SinkCommits, res.SinkDeletions, len(res.Groups), res.Duration.Round(time.Millisecond))

	v, err := restore.Verify(ctx, cl, plan)
	if err != nil {
		return fmt.Errorf("%w; to roll back: offsetkeeper restore %s", err, undo.ID)
	}
	fmt.Fprintf(c.stdout, "verified: %d connectors match the snapshot\n", v.Connectors)
	c.log.Info("restore done", "snapshot_id", snap.ID, "undo_snapshot_id", undo.ID, "connectors", v.Connectors,
		"records", res.SourceWrites+res.Tombstones, "sink_offsets", res.SinkCommits+res.SinkDeletions,
		"duration", time.Since(began).Round(time.Millisecond))
	return stop.finish(ctx)
}

func refusalsOf(e *restore.RefusedError) []restore.Refusal {
	if e == nil {
		return nil
	}
	return e.Refusals
}
