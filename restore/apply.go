package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// transactionTimeout bounds a restore transaction: a restore that dies
// with its transaction open holds that topic's readers back this long.
const transactionTimeout = time.Minute

// Result is what Apply wrote.
type Result struct {
	// SourceWrites are key records written, Tombstones the tombstones.
	SourceWrites, Tombstones int
	// SinkCommits are group offsets committed, SinkDeletions deleted.
	SinkCommits, SinkDeletions int
	// Topics are the offsets topics written, each in one committed
	// transaction, in the order written.
	Topics []TopicResult
	// Groups are the consumer groups written, in the order written.
	Groups []string
	// PartlyWritten names the group whose write failed part way: some of
	// its offsets may be committed.
	PartlyWritten []string
	Duration      time.Duration
}

// Written names what a failed Apply committed ("topic T (N records)",
// "group G", "group G (in part)"); empty when nothing was.
func (res *Result) Written() []string {
	if res == nil {
		return nil
	}
	var parts []string
	for _, t := range res.Topics {
		parts = append(parts, fmt.Sprintf("topic %s (%s)", t.Topic, plural(t.Records, "record", "records")))
	}
	for _, g := range res.Groups {
		parts = append(parts, "group "+g)
	}
	for _, g := range res.PartlyWritten {
		parts = append(parts, "group "+g+" (in part)")
	}
	return parts
}

// TopicResult is one offsets topic written.
type TopicResult struct {
	Topic   string
	Records int
	// Last is the offset of the last record written to each partition.
	Last map[int32]int64
	// Partitions is the topic's partition count the records were placed by.
	Partitions int32
}

// Apply writes the plan: for each offsets topic, the changed, added and
// removed keys (as tombstones) in one transaction of a producer with
// transactional id TransactionalIDPrefix+topic; then, for each group, the
// changed and added offsets in one commit and the removed ones in one
// offset delete. Every record's partition is checked against
// murmur2(key) % partitions before its transaction commits, and every
// partition's commit and delete error is checked.
//
// The producers are new clients made from cl.Opts() (so they share its
// brokers, TLS and SASL settings); cl must not be configured to consume.
// Apply does not run the safety checks (see Plan.Check) and does not store
// the undo snapshot (Plan.Live): the caller does both first. On failure it
// returns what was done so far with an error wrapping ErrApply that says
// which topics and groups were written: a topic whose transaction did not
// commit is left as it was.
func Apply(ctx context.Context, cl *kgo.Client, p *Plan) (*Result, error) {
	began := time.Now()
	res := &Result{}
	var unreadable []error
	done := func() string {
		parts := res.Written()
		if len(parts) == 0 {
			return "nothing was written"
		}
		return "already written: " + strings.Join(parts, ", ")
	}

	// The changes to write, by topic, in the plan's order: a connector's
	// changes are sorted by topic, so each is a range of them.
	byTopic := map[string][]changeRange{}
	for _, cp := range p.Connectors {
		sp := cp.Source
		if sp == nil {
			continue
		}
		for lo := 0; lo < len(sp.changes); {
			t := sp.changes[lo].topic
			hi := lo + 1
			for hi < len(sp.changes) && sp.changes[hi].topic == t {
				hi++
			}
			r := changeRange{sp: sp, lo: lo, hi: hi}
			if r.writes() > 0 {
				byTopic[sp.Topics[t]] = append(byTopic[sp.Topics[t]], r)
			}
			lo = hi
		}
	}
	for _, topic := range sortedKeys(byTopic) {
		changes := byTopic[topic]
		n := p.partitions[topic]
		last, err := writeTopic(ctx, cl, topic, n, changes, p.restoreID, p.opts.Compression)
		if err != nil {
			res.Duration = time.Since(began)
			return res, fmt.Errorf("%w: write offsets topic %q: %w (its transaction was not committed: the topic is as it was; %s)", ErrApply, topic, err, done())
		}
		records := 0
		for _, r := range changes {
			records += r.writes()
			for i := r.lo; i < r.hi; i++ {
				switch r.sp.changes[i].action {
				case actRemoved:
					res.Tombstones++
				case actChanged, actAdded:
					res.SourceWrites++
				}
			}
		}
		res.Topics = append(res.Topics, TopicResult{Topic: topic, Records: records, Partitions: n, Last: last})
		p.opts.Progress.Written(records)
		if err := waitReadable(ctx, cl, topic, last, readableWait, p.notify); err != nil {
			if !errors.Is(err, ErrNotReadable) {
				res.Duration = time.Since(began)
				return res, fmt.Errorf("%w: offsets topic %q: %w (%s)", ErrApply, topic, err, done())
			}
			// Committed: the rest is written too, and the error says
			// what holds these records back.
			unreadable = append(unreadable, err)
		}
	}

	adm := kadm.NewClient(cl)
	for _, cp := range p.Connectors {
		sp := cp.Sink
		if sp == nil {
			continue
		}
		commits, deletes := kadm.Offsets{}, kadm.TopicsSet{}
		nc, nd := 0, 0
		for _, ch := range sp.Changes() {
			switch ch.Action {
			case Changed, Added:
				commits.Add(kadm.Offset{Topic: ch.Topic, Partition: ch.Partition, At: ch.New, LeaderEpoch: ch.LeaderEpoch, Metadata: ch.Metadata})
				nc++
			case Removed:
				deletes.Add(ch.Topic, ch.Partition)
				nd++
			}
		}
		if nc == 0 && nd == 0 {
			continue
		}
		if err := writeGroup(ctx, adm, sp, commits, deletes); err != nil {
			res.Duration = time.Since(began)
			if !errors.Is(err, errNothingCommitted) {
				res.PartlyWritten = append(res.PartlyWritten, sp.Group)
			}
			return res, fmt.Errorf("%w: restore offsets of group %q (connector %q): %w (%s)", ErrApply, sp.Group, cp.Name, err, done())
		}
		res.SinkCommits += nc
		res.SinkDeletions += nd
		res.Groups = append(res.Groups, sp.Group)
		p.opts.Progress.GroupCommitted()
	}
	res.Duration = time.Since(began)
	if len(unreadable) > 0 {
		return res, fmt.Errorf("%w: %w (%s)", ErrApply, errors.Join(unreadable...), done())
	}
	return res, nil
}

// writeTopic writes changes to topic in one transaction and commits it
// only if every record landed on its murmur2 partition of n.
//
// The producer buffers up to maxBuffered records of the transaction (the
// records are made as they are produced, a chunk at a time, so a restore
// of millions of keys never holds a kgo.Record for each) and does not
// compress unless Options.Compression says so (a drill),
// as Connect's own offsets producer does not (compression.type none):
// kgo's default snappy costs the producer CPU for no gain in wall time,
// and every reader has to decompress it.
// maxBuffered is the most records a restore's producer holds at once, and
// recordChunk how many it allocates at a time. A restore writes as fast
// with this many buffered as with all its records (Produce waits for room
// only while the brokers are busy with what it sent), and holds much less.
const (
	maxBuffered = 8 << 10
	recordChunk = 1 << 10
)

// writeTopic (see above) returns the offset of the last record it wrote to
// each partition.
// Every record carries snapshot.RestoreHeader with restoreID, when set:
// the journal tells the tool's own writes from a reset by it.
func writeTopic(ctx context.Context, cl *kgo.Client, topic string, n int32, ranges []changeRange, restoreID string, codec kgo.CompressionCodec) (last map[int32]int64, _ error) {
	total := 0
	for _, r := range ranges {
		total += r.writes()
	}
	opts := append(slices.Clone(cl.Opts()),
		kgo.TransactionalID(TransactionalIDPrefix+topic),
		kgo.TransactionTimeout(transactionTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(restorePartitioner{}),
		kgo.ProducerBatchCompression(codec), // Options.Compression: none unless a drill sets it
		kgo.MaxBufferedRecords(max(min(total, maxBuffered), 1)),
	)
	pcl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("create transactional producer: %w", err)
	}
	defer pcl.Close()
	txnID := TransactionalIDPrefix + topic
	// The producer id and epoch this restore holds the transactional id
	// with, to tell later whether another restore took it over.
	pid, epoch, err := pcl.ProducerID(ctx)
	if err != nil {
		if fenced(err) {
			return nil, fencedError(topic, err)
		}
		return nil, fmt.Errorf("initialize transactional producer %q: %w", txnID, err)
	}
	if err := pcl.BeginTransaction(); err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	// Records are allocated recordChunk at a time; a chunk is garbage once
	// kgo is done with its records. The promises (kgo calls them one at a
	// time, in the order ProduceSync would list the results) check each
	// result; a stray copy's tombstone has its own promise, as it goes to
	// the partition it removes the copy from.
	var records []kgo.Record
	var headers []kgo.RecordHeader
	if restoreID != "" {
		headers = []kgo.RecordHeader{{Key: snapshot.RestoreHeader, Value: []byte(restoreID)}}
	}
	var (
		wg             sync.WaitGroup
		perr, fenceErr error
	)
	last = map[int32]int64{}
	result := func(r *kgo.Record, err error, stray bool) {
		defer wg.Done()
		if err == nil && r.Offset >= last[r.Partition] {
			last[r.Partition] = r.Offset
		}
		switch {
		case fenceErr != nil:
		case err != nil && fenced(err):
			fenceErr = err
		case err != nil:
			perr = errors.Join(perr, fmt.Errorf("produce key %s: %w", DisplayKey(r.Key), err))
		case !stray:
			if want := snapshot.PartitionFor(r.Key, n); r.Partition != want {
				perr = errors.Join(perr, fmt.Errorf("key %s landed on partition %d, not its murmur2 partition %d of %d (did the topic's partition count change?)", DisplayKey(r.Key), r.Partition, want, n))
			}
		}
	}
	onRecord := func(r *kgo.Record, err error) { result(r, err, false) }
	onStray := func(r *kgo.Record, err error) { result(r, err, true) }
	wg.Add(total)
	i := 0
	for _, rg := range ranges {
		sp := rg.sp
		for k := rg.lo; k < rg.hi; k++ {
			ch := &sp.changes[k]
			if !srcWrites(ch.action) {
				continue
			}
			// Exact bytes; Value nil is a tombstone.
			if i%recordChunk == 0 {
				records = make([]kgo.Record, min(recordChunk, total-i))
			}
			r := &records[i%recordChunk]
			i++
			if testPoint != nil && i == total/2+1 {
				_ = pcl.Flush(ctx) // the first half in the log, not committed
				atPoint("half")
			}
			*r = kgo.Record{Topic: topic, Key: sp.key(ch), Value: sp.newValue(ch), Headers: headers}
			if ch.stray {
				r.Context = context.WithValue(ctx, strayPartition{}, ch.part)
				pcl.Produce(ctx, r, onStray)
			} else {
				pcl.Produce(ctx, r, onRecord)
			}
		}
	}
	wg.Wait()
	atPoint("produced")
	if fenceErr != nil {
		abort(ctx, pcl)
		return nil, fencedError(topic, fenceErr)
	}
	if perr != nil {
		if tookOver(ctx, cl, txnID, pid, epoch) {
			abort(ctx, pcl)
			return nil, fencedError(topic, perr)
		}
		abort(ctx, pcl)
		return nil, perr
	}
	if err := pcl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		if fenced(err) || tookOver(ctx, cl, txnID, pid, epoch) {
			abort(ctx, pcl)
			return nil, fencedError(topic, err)
		}
		abort(ctx, pcl)
		return nil, fmt.Errorf("commit transaction: %w", err)
	}
	atPoint("committed")
	return last, nil
}

// readableWait is how long a restore waits, after its transaction
// committed, for every record it wrote to be readable with read_committed;
// waitNotice how often it says what it waits for meanwhile.
var (
	readableWait = 30 * time.Second
	waitNotice   = 5 * time.Second
)

// waitReadable waits until the last stable offset of each partition of
// topic in last has passed the offset given (the last record written
// there), or limit has passed. A broker answers EndTxn once the commit is
// decided and writes the commit markers to the partitions afterwards, so a
// read_committed reader (Verify, a worker) may not see the records at
// once; verifying before then would report the restore as failed. Another
// producer's open transaction on a partition holds its last stable offset
// until it ends: notify (when set) is told every waitNotice whose it is and
// how long this has waited, and the error (ErrNotReadable) names it with
// the command that aborts it.
func waitReadable(ctx context.Context, cl *kgo.Client, topic string, last map[int32]int64, limit time.Duration, notify func(string)) error {
	if len(last) == 0 {
		return nil
	}
	adm := kadm.NewClient(cl)
	began := time.Now()
	deadline, nextNotice := began.Add(limit), began.Add(min(waitNotice, limit/2))
	noticed := false // at least once before giving up
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		listed, err := adm.ListCommittedOffsets(ctx, topic)
		if err == nil {
			err = listed.Error()
		}
		var behind []string
		var parts []int32
		if err == nil {
			for p, off := range last {
				if lo, ok := listed.Lookup(topic, p); !ok || lo.Offset <= off {
					parts = append(parts, p)
				}
			}
			if len(parts) == 0 {
				return nil
			}
			slices.Sort(parts)
			for _, p := range parts {
				behind = append(behind, fmt.Sprintf("%s/%d", topic, p))
			}
		}
		now := time.Now()
		giveUp := now.After(deadline)
		if notify != nil && err == nil && (now.After(nextNotice) || giveUp && !noticed) {
			noticed, nextNotice = true, now.Add(waitNotice)
			waiting := fmt.Sprintf("waiting (%s of %s) for the committed records on %s to be readable with read_committed", now.Sub(began).Round(100*time.Millisecond), limit, strings.Join(behind, ", "))
			if blockers, derr := describeBlockers(ctx, adm, topic, parts, TransactionalIDPrefix+topic); derr == nil && len(blockers) > 0 {
				for _, b := range blockers {
					waiting += "; held by " + b.String()
				}
			}
			notify(waiting)
		}
		if giveUp {
			if err != nil {
				return fmt.Errorf("the transaction committed, but reading its last stable offsets failed: %w", err)
			}
			blockers, derr := describeBlockers(ctx, adm, topic, parts, TransactionalIDPrefix+topic)
			return notReadableError(topic, limit, behind, blockers, derr, seedsOf(cl))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the committed records to be readable: %w", ctx.Err())
		case <-time.After(backoff):
		}
	}
}

// FenceOpenRestores ends the transactions that other restores left open:
// for each open (Ongoing, PrepareCommit or PrepareAbort) transaction whose
// id starts with TransactionalIDPrefix it initializes a producer with that
// id, on which the broker aborts the open transaction and fences the
// producer that opened it. It returns the ids it fenced. It is what
// restore --force does about a restore killed or fenced part way (whose
// transaction the broker would otherwise abort only after its timeout),
// even when this restore then has nothing to write to that topic; a
// restore still running is fenced too, and fails without writing.
func FenceOpenRestores(ctx context.Context, cl *kgo.Client) ([]string, error) {
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort"})
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	var ids []string
	for _, t := range listed.Sorted() {
		if !strings.HasPrefix(t.TxnID, TransactionalIDPrefix) {
			continue
		}
		pcl, err := kgo.NewClient(append(slices.Clone(cl.Opts()), kgo.TransactionalID(t.TxnID), kgo.TransactionTimeout(transactionTimeout))...)
		if err != nil {
			return ids, fmt.Errorf("fence transaction %q: create producer: %w", t.TxnID, err)
		}
		_, _, err = pcl.ProducerID(ctx)
		pcl.Close()
		if err != nil {
			return ids, fmt.Errorf("fence transaction %q: %w", t.TxnID, err)
		}
		ids = append(ids, t.TxnID)
	}
	return ids, nil
}

// fenced reports whether err says a newer producer with the same
// transactional id, another restore of the same topic, fenced this one.
//
// INVALID_TXN_STATE says so too: the other restore's producer, with the
// same transactional id, moved the transaction on (aborted this one's and
// began its own) between this one's requests.
func fenced(err error) bool {
	return errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidTxnState)
}

// tookOver reports whether another producer holds transactional id txnID
// now: its producer id differs from pid or its epoch is newer than epoch.
// It is how a restore tells it lost to another whatever the broker
// answered it.
func tookOver(ctx context.Context, cl *kgo.Client, txnID string, pid int64, epoch int16) bool {
	if pid < 0 {
		return false
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	described, err := kadm.NewClient(cl).DescribeTransactions(dctx, txnID)
	if err != nil {
		return false
	}
	d, ok := described[txnID]
	if !ok || d.Err != nil {
		return false
	}
	return d.ProducerID != pid || d.ProducerEpoch > epoch
}

// fencedError explains a fenced restore producer, once, instead of the
// broker's INVALID_PRODUCER_EPOCH for every record: two restores passed
// the concurrent-restore check together (it cannot see a restore that has
// not opened its transaction yet), and the later one took over.
func fencedError(topic string, err error) error {
	return fmt.Errorf("%w %q: it started at the same time as this one and took over the transactional id %q, so the broker aborted this one's transaction (%w); let it finish, then run this restore again to see what is left", ErrFenced, topic, TransactionalIDPrefix+topic, err)
}

// abort ends pcl's transaction with an abort, even when ctx is done.
func abort(ctx context.Context, pcl *kgo.Client) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = pcl.AbortBufferedRecords(actx)
	_ = pcl.EndTransaction(actx, kgo.TryAbort)
}

// writeGroup commits and deletes one group's offsets, checking every
// partition's answer.
func writeGroup(ctx context.Context, adm *kadm.Client, sp *SinkPlan, commits kadm.Offsets, deletes kadm.TopicsSet) error {
	var failed []string
	members := false
	committed := 0 // partitions committed or deleted
	if len(commits) > 0 {
		resp, err := adm.CommitOffsets(ctx, sp.Group, commits)
		if err != nil {
			return fmt.Errorf("commit offsets: %w (%w)", err, errNothingCommitted)
		}
		commits.Each(func(o kadm.Offset) {
			r, ok := resp.Lookup(o.Topic, o.Partition)
			switch {
			case !ok:
				failed = append(failed, fmt.Sprintf("commit %s/%d: no answer", o.Topic, o.Partition))
			case r.Err != nil:
				if errors.Is(r.Err, kerr.UnknownMemberID) || errors.Is(r.Err, kerr.IllegalGeneration) {
					members = true
				}
				failed = append(failed, fmt.Sprintf("commit %s/%d: %v", o.Topic, o.Partition, r.Err))
			default:
				committed++
			}
		})
	}
	if len(deletes) > 0 && len(failed) == 0 {
		resp, err := adm.DeleteOffsets(ctx, sp.Group, deletes)
		if err != nil {
			if committed == 0 {
				return fmt.Errorf("delete offsets: %w (%w)", err, errNothingCommitted)
			}
			return fmt.Errorf("delete offsets: %w", err)
		}
		for _, tp := range deletes.Sorted() {
			for _, part := range tp.Partitions {
				perr, ok := resp[tp.Topic][part]
				switch {
				case !ok:
					failed = append(failed, fmt.Sprintf("delete %s/%d: no answer", tp.Topic, part))
				case perr != nil:
					if errors.Is(perr, kerr.GroupSubscribedToTopic) {
						members = true
					}
					failed = append(failed, fmt.Sprintf("delete %s/%d: %v", tp.Topic, part, perr))
				default:
					committed++
				}
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	sort.Strings(failed)
	hint := ""
	if members {
		hint = membersHint(ctx, adm, sp.Group)
	}
	err := fmt.Errorf("%s failed: %s%s", plural(len(failed), "partition", "partitions"), strings.Join(failed, "; "), hint)
	if committed == 0 {
		return fmt.Errorf("%w (%w)", err, errNothingCommitted)
	}
	return err
}

// errNothingCommitted marks a group write that failed before anything of
// it was committed or deleted.
var errNothingCommitted = errors.New("nothing of this group was written")

// changeRange is changes[lo:hi] of a SourcePlan, all of one topic.
type changeRange struct {
	sp     *SourcePlan
	lo, hi int
}

// writes counts the records the range writes.
func (r changeRange) writes() int {
	n := 0
	for i := r.lo; i < r.hi; i++ {
		if srcWrites(r.sp.changes[i].action) {
			n++
		}
	}
	return n
}

// strayPartition is the record context key holding the partition of a
// stray copy's tombstone.
type strayPartition struct{}

// restorePartitioner places a record on murmur2(key) % partitions, as
// Connect's producer does, using the partition count the producer sees at
// that moment; the tombstone of a stray copy goes to the partition that copy
// lives in (its record context says which).
type restorePartitioner struct{}

func (restorePartitioner) ForTopic(string) kgo.TopicPartitioner { return restorePartitioner{} }

func (restorePartitioner) RequiresConsistency(*kgo.Record) bool { return true }

func (restorePartitioner) Partition(r *kgo.Record, n int) int {
	if r.Context != nil {
		if p, ok := r.Context.Value(strayPartition{}).(int32); ok && int(p) < n {
			return int(p)
		}
	}
	return int(snapshot.PartitionFor(r.Key, int32(n)))
}
