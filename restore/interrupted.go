package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// This file keeps a restore's aborted transaction from being seen. A
// restore writes each offsets topic in one transaction, which is atomic
// only for read_committed readers: a Connect worker without exactly-once
// source support (the default) reads its offsets topic read_uncommitted
// and applies the records of an aborted transaction too, last write
// winning, until the key is written again. So when a restore's transaction
// aborts (it failed, it was killed and the broker or the next command
// aborted it, it was fenced), the keys it wrote are written once more with
// their committed values (a tombstone where there is none) in a committed
// transaction: then every reader agrees, on the state before the restore.
//
// The restore records what it is about to do in the store first (a
// store.RestoreIntent); the next command that finds the record of a restore
// that did not finish checks the topics it wrote and repairs them
// (RecoverInterrupted).

// RepairIDPrefix starts the transactional id of the producer that writes
// back the committed values of keys an aborted restore transaction left
// visible (RepairIDPrefix plus the topic): not a restore's own id, so that
// a repair never fences a restore that is still running.
const RepairIDPrefix = "offsetkeeper-repair-"

// ViewDifference is a key whose live value a read_uncommitted reader (a
// worker without exactly-once source support) sees otherwise than a
// read_committed one (a worker with it, and every snapshot): the last
// record of the key is of an aborted transaction.
type ViewDifference struct {
	Topic     string
	Partition int32
	Key       []byte
	// Committed and Uncommitted are the values each reader sees; nil when
	// the key is absent for it.
	Committed, Uncommitted []byte
}

func (d ViewDifference) String() string {
	show := func(v []byte) string {
		switch {
		case v == nil:
			return "absent"
		case utf8.Valid(v) && !bytes.ContainsFunc(v, unicode.IsControl):
			return string(v)
		}
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%s/%d key %s: read_committed %s, read_uncommitted %s", d.Topic, d.Partition, DisplayKey(d.Key), show(d.Committed), show(d.Uncommitted))
}

// CompareViews reads topic read_committed and read_uncommitted, up to the
// last stable offsets, and returns the keys the two readers see
// differently, of those keep accepts (nil: all), in partition and key
// order.
func CompareViews(ctx context.Context, cl *kgo.Client, topic string, keep func(key []byte) bool) ([]ViewDifference, error) {
	var out []ViewDifference
	_, err := capture.ReadPartitionViews(ctx, cl, topic, 8, func(c, u *capture.PartitionKeys) error {
		var part []ViewDifference
		for k, uv := range u.All() {
			if keep != nil && !keep(k) {
				continue
			}
			if cv, ok := c.Lookup(k); !ok || !bytes.Equal(cv, uv) {
				part = append(part, ViewDifference{Topic: topic, Partition: u.Partition, Key: bytes.Clone(k), Committed: bytes.Clone(cv), Uncommitted: presentValue(uv)})
			}
		}
		for k, cv := range c.All() {
			if keep != nil && !keep(k) {
				continue
			}
			if _, ok := u.Lookup(k); !ok {
				part = append(part, ViewDifference{Topic: topic, Partition: c.Partition, Key: bytes.Clone(k), Committed: presentValue(cv)})
			}
		}
		slices.SortFunc(part, func(a, b ViewDifference) int { return bytes.Compare(a.Key, b.Key) })
		out = append(out, part...)
		return nil
	})
	return out, err
}

// presentValue copies v, a present value: empty, never nil.
func presentValue(v []byte) []byte { return append([]byte{}, v...) }

// RepairViews writes, for each difference of topic, the committed value
// (a tombstone where the key has none) to the partition it differs in, in
// one committed transaction of transactional id RepairIDPrefix+topic, and
// checks that both readers then agree on them. It refuses while another
// producer's transaction is open on the topic: a repair written inside it
// could land before a write that then commits.
func RepairViews(ctx context.Context, cl *kgo.Client, topic string, diffs []ViewDifference) error {
	if len(diffs) == 0 {
		return nil
	}
	var parts []int32
	for _, d := range diffs {
		if !slices.Contains(parts, d.Partition) {
			parts = append(parts, d.Partition)
		}
	}
	if open, err := describeBlockers(ctx, kadm.NewClient(cl), topic, parts, ""); err != nil {
		return fmt.Errorf("check open transactions on %s: %w", topic, err)
	} else if len(open) > 0 {
		return fmt.Errorf("an open transaction holds %s (%s): write the committed values back once it ends (run the command again)", topic, open[0])
	}
	pcl, err := kgo.NewClient(append(slices.Clone(cl.Opts()),
		kgo.TransactionalID(RepairIDPrefix+topic),
		kgo.TransactionTimeout(transactionTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
	)...)
	if err != nil {
		return fmt.Errorf("create repair producer: %w", err)
	}
	defer pcl.Close()
	if err := pcl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin repair transaction: %w", err)
	}
	recs := make([]*kgo.Record, len(diffs))
	for i, d := range diffs {
		recs[i] = &kgo.Record{Topic: topic, Partition: d.Partition, Key: d.Key, Value: d.Committed}
	}
	if err := pcl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		abort(ctx, pcl)
		return fmt.Errorf("write committed values back to %s: %w", topic, err)
	}
	if err := pcl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		abort(ctx, pcl)
		return fmt.Errorf("commit the committed values written back to %s: %w", topic, err)
	}
	keys := map[string]bool{}
	for _, d := range diffs {
		keys[string(d.Key)] = true
	}
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		left, err := CompareViews(ctx, cl, topic, func(k []byte) bool { return keys[string(k)] })
		if err != nil {
			return fmt.Errorf("check %s after writing committed values back: %w", topic, err)
		}
		if len(left) == 0 {
			return nil
		}
		// The commit markers follow EndTxn: until they are written the
		// last stable offset is below the values written back.
		select {
		case <-ctx.Done():
			return fmt.Errorf("check %s after writing committed values back: %d keys still differ (%s): %w", topic, len(left), left[0], ctx.Err())
		case <-time.After(wait):
		}
		if wait >= time.Second {
			return fmt.Errorf("check %s after writing committed values back: %d keys still differ, first %s", topic, len(left), left[0])
		}
	}
}

// Interrupted is what RecoverInterrupted found of one restore that did
// not finish, and what it did about it.
type Interrupted struct {
	Intent store.RestoreIntent
	// Repaired counts, per topic, the keys whose committed values were
	// written back (or, on a dry run, would be).
	Repaired map[string]int
	// Open names the transactions of the restore still open: it may still
	// be running, and nothing was done about its topics.
	Open []string
	// Err is why the topics are not checked or repaired yet.
	Err error
}

// Done reports whether the restore's topics are checked and every reader
// agrees on them.
func (x Interrupted) Done() bool { return len(x.Open) == 0 && x.Err == nil }

// Recovery is one look for restores that did not finish.
type Recovery struct {
	Client *kgo.Client
	Store  *store.Store
	// Out gets what was found and done; nil is io.Discard.
	Out io.Writer
	Log *slog.Logger
	// DryRun checks and says what it would write, and writes nothing.
	DryRun bool
	// Skip is the ID of the restore running the recovery.
	Skip string
}

// RecoverInterrupted finds, in the store, the restores that did not finish
// on this cluster and, for each: when its transaction is still open and
// its process is known to be gone (same host), aborts it; when none is
// open, writes back the committed values of every key (of its
// connectors) that read_uncommitted readers see otherwise, so that a
// worker reads the state before the restore. It says what it found and
// did on Out, and logs it. Restores whose transactions are open and whose
// process may still run are reported and left alone. The records stay:
// the next restore removes them once it resumed what they stopped.
func RecoverInterrupted(ctx context.Context, rec Recovery) ([]Interrupted, error) {
	if rec.Out == nil {
		rec.Out = io.Discard
	}
	if rec.Log == nil {
		rec.Log = slog.Default()
	}
	if rec.Store == nil {
		return nil, nil
	}
	intents, err := rec.Store.Restores().List(ctx)
	if err != nil || len(intents) == 0 {
		return nil, err
	}
	adm := kadm.NewClient(rec.Client)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cluster id: %w", err)
	}
	var out []Interrupted
	for _, in := range intents {
		if in.ID == rec.Skip || (in.ClusterID != "" && in.ClusterID != md.Cluster) {
			continue
		}
		x := rec.recoverOne(ctx, in)
		out = append(out, x)
		rec.report(x)
	}
	return out, nil
}

func (rec Recovery) recoverOne(ctx context.Context, in store.RestoreIntent) Interrupted {
	x := Interrupted{Intent: in, Repaired: map[string]int{}}
	if len(in.Topics) == 0 {
		return x
	}
	open, err := openTransactions(ctx, rec.Client, in.Topics)
	if err != nil {
		x.Err = err
		return x
	}
	if len(open) > 0 {
		if !processGone(in) || rec.DryRun {
			x.Open = open
			return x
		}
		if err := fenceIDs(ctx, rec.Client, open); err != nil {
			x.Err = err
			return x
		}
	}
	scope := map[string]bool{}
	for _, c := range in.Connectors {
		scope[c] = true
	}
	keep := func(k []byte) bool {
		name, ok := capture.KeyConnector(k)
		if !ok {
			return in.Unowned
		}
		return scope[string(name)]
	}
	for _, t := range in.Topics {
		diffs, err := compareSettled(ctx, rec.Client, t.Topic, keep)
		if err != nil {
			x.Err = err
			return x
		}
		if len(diffs) == 0 {
			continue
		}
		x.Repaired[t.Topic] = len(diffs)
		if rec.DryRun {
			continue
		}
		if err := RepairViews(ctx, rec.Client, t.Topic, diffs); err != nil {
			x.Err = err
			return x
		}
	}
	return x
}

// compareSettled is CompareViews once no transaction is open on topic:
// the broker writes the abort markers of a fenced transaction a moment
// after it answers, and until then the last stable offset hides the
// records to compare.
func compareSettled(ctx context.Context, cl *kgo.Client, topic string, keep func([]byte) bool) ([]ViewDifference, error) {
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(transactionTimeout)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		parts, err := topicPartitions(ctx, adm, topic)
		if err != nil {
			return nil, err
		}
		open, err := describeBlockers(ctx, adm, topic, parts, "")
		if err != nil {
			return nil, fmt.Errorf("check open transactions on %s: %w", topic, err)
		}
		if len(open) == 0 {
			return CompareViews(ctx, cl, topic, keep)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("an open transaction holds %s (%s): its keys are checked once it ends (run the command again)", topic, open[0])
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func topicPartitions(ctx context.Context, adm *kadm.Client, topic string) ([]int32, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", topic, err)
	}
	var parts []int32
	for p, o := range ends[topic] {
		if o.Err != nil {
			return nil, fmt.Errorf("list partitions of %s: %w", topic, o.Err)
		}
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return parts, nil
}

// openTransactions returns the transactional ids of topics whose
// transaction is open.
func openTransactions(ctx context.Context, cl *kgo.Client, topics []store.IntentTopic) ([]string, error) {
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort"})
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	var open []string
	for _, t := range topics {
		if _, ok := listed[t.TransactionalID]; ok {
			open = append(open, t.TransactionalID)
		}
	}
	return open, nil
}

// fenceIDs aborts the open transactions of ids by initializing a producer
// with each.
func fenceIDs(ctx context.Context, cl *kgo.Client, ids []string) error {
	for _, id := range ids {
		pcl, err := kgo.NewClient(append(slices.Clone(cl.Opts()), kgo.TransactionalID(id), kgo.TransactionTimeout(transactionTimeout))...)
		if err != nil {
			return fmt.Errorf("abort transaction %q: create producer: %w", id, err)
		}
		_, _, err = pcl.ProducerID(ctx)
		pcl.Close()
		if err != nil {
			return fmt.Errorf("abort transaction %q: %w", id, err)
		}
	}
	return nil
}

// processGone reports whether the process that ran the restore of in is
// known to be gone: it ran on this host and no process has its id.
func processGone(in store.RestoreIntent) bool {
	host, err := os.Hostname()
	if err != nil || in.Host != host || in.PID <= 0 || in.PID == os.Getpid() {
		return false
	}
	p, err := os.FindProcess(in.PID)
	if err != nil {
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH)
}

// report says what was found of x, and what was done.
func (rec Recovery) report(x Interrupted) {
	in := x.Intent
	what := fmt.Sprintf("restore %s of snapshot %s (started %s", in.ID, in.Snapshot, in.Started.UTC().Format(time.RFC3339))
	if in.Host != "" {
		what += fmt.Sprintf(" on %s, pid %d", in.Host, in.PID)
	}
	what += ") did not finish"
	// Logged once the note is whole: a log line on the same stderr would
	// otherwise split it from the command that ends it.
	var logs []func()
	defer func() {
		for _, l := range logs {
			l()
		}
	}()
	switch {
	case len(x.Open) > 0:
		rec.say("%s, or is still running: its transaction %s is open; a dead restore's is aborted by the broker within %s, then any command writes back what it left visible",
			what, strings.Join(x.Open, ", "), transactionTimeout)
		logs = append(logs, func() {
			rec.Log.Warn("restore not finished or still running", "restore_id", in.ID, "snapshot_id", in.Snapshot, "open", x.Open)
		})
	case x.Err != nil:
		rec.say("%s; checking what it wrote failed: %v", what, x.Err)
		logs = append(logs, func() {
			rec.Log.Error("check interrupted restore", "restore_id", in.ID, "snapshot_id", in.Snapshot, "error", x.Err)
		})
	case len(x.Repaired) > 0:
		verb := "wrote back"
		if rec.DryRun {
			verb = "would write back (dry run)"
		}
		for _, t := range sortedKeys(x.Repaired) {
			rec.say("%s: its aborted transaction left %s of topic %s visible to read_uncommitted readers (workers without exactly-once source support); %s their committed values in a committed transaction",
				what, plural(x.Repaired[t], "key", "keys"), t, verb)
			n := x.Repaired[t]
			logs = append(logs, func() {
				rec.Log.Warn("interrupted restore repaired", "restore_id", in.ID, "snapshot_id", in.Snapshot, "topic", t, "records", n, "dry_run", rec.DryRun)
			})
		}
	default:
		rec.say("%s; every reader sees the offsets it touched alike (nothing of an aborted transaction is visible)", what)
		logs = append(logs, func() { rec.Log.Info("interrupted restore checked", "restore_id", in.ID, "snapshot_id", in.Snapshot) })
	}
	if len(x.Open) == 0 {
		rec.sayAgain(in)
	}
}

// say prints one message on Out, wrapped to 120 columns; it holds no
// command to paste.
func (rec Recovery) say(format string, args ...any) { rec.sayWith(nil, format, args...) }

// sayWith prints one message on Out, wrapped to 120 columns, the commands
// it holds (cmds) on lines of their own, never broken at a space.
func (rec Recovery) sayWith(cmds []string, format string, args ...any) {
	fmt.Fprintln(rec.Out, wrapLines(fmt.Sprintf(format, args...), cmds...))
}
