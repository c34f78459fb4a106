package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// UnownedChange is one offsets topic key of the snapshot that no connector
// owns (a key that is not [connector, {partition}], kept raw), compared
// with this cluster by Options.IncludeUnowned.
type UnownedChange struct {
	// Action is Unchanged, Changed, Added or Skipped (its topic does not
	// exist here).
	Action    Action         `json:"action"`
	Topic     string         `json:"topic"`
	Partition int32          `json:"partition"`
	Key       snapshot.Bytes `json:"key"`
	// Old is the value here, absent when added; New the snapshot's.
	Old    snapshot.Bytes `json:"old,omitempty"`
	New    snapshot.Bytes `json:"new"`
	Reason string         `json:"reason,omitempty"`
}

// unownedOf returns the source offsets of snap that no connector owns.
func unownedOf(snap *snapshot.Snapshot) []snapshot.SourceOffset {
	t := snap.SourceTable()
	var out []snapshot.SourceOffset
	for i := range int32(t.Len()) {
		if t.Connector(i) == "" {
			out = append(out, snapshot.SourceOffset{Topic: t.Topic(i), Partition: t.Partition(i), Key: t.Key(i), Value: t.Value(i)})
		}
	}
	return out
}

// planUnowned compares the snapshot's unowned keys with this cluster: a
// key goes to the partition it had when the topic has as many partitions
// here (no worker looks it up, so nothing decides another), else to its
// murmur2 partition. Live unowned keys the snapshot lacks are left alone.
func (r *run) planUnowned(ctx context.Context, plan *Plan) ([]UnownedChange, error) {
	offs := unownedOf(r.req.Snapshot)
	if len(offs) == 0 {
		return nil, nil
	}
	var topics []string
	for _, o := range offs {
		if !slices.Contains(topics, o.Topic) {
			topics = append(topics, o.Topic)
		}
	}
	tds, err := kadm.NewClient(r.Client).ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe the offsets topics of the unowned keys: %w; nothing was written", err)
	}
	missing := map[string]bool{}
	var present []string
	for _, t := range topics {
		td, ok := tds[t]
		if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			missing[t] = true
			continue
		}
		if td.Err != nil {
			return nil, fmt.Errorf("describe offsets topic %q: %w; nothing was written", t, td.Err)
		}
		plan.partitions[t] = int32(len(td.Partitions))
		present = append(present, t)
	}
	live := map[string][]byte{}
	if len(present) > 0 {
		opts := plan.opts.Options
		opts.OffsetsTopics, opts.Connectors, opts.ConfigTopicOptional, opts.Incremental = present, nil, true, false
		snap, err := capture.Capture(ctx, r.Client, opts)
		if err != nil {
			return nil, fmt.Errorf("read the unowned keys of the offsets topics: %w; nothing was written", err)
		}
		for _, o := range snap.SourceTable().All() {
			if o.Connector == "" {
				live[unownedID(o.Topic, o.Partition, o.Key)] = o.Value
			}
		}
	}
	out := make([]UnownedChange, 0, len(offs))
	for _, o := range offs {
		ch := UnownedChange{Topic: o.Topic, Partition: o.Partition, Key: o.Key, New: o.Value}
		n := plan.partitions[o.Topic]
		switch {
		case missing[o.Topic]:
			ch.Action, ch.Reason = Skipped, fmt.Sprintf("topic %s does not exist here: create it, then run the same restore again", o.Topic)
		default:
			if n != r.req.Snapshot.PartitionCount(o.Topic) || o.Partition >= n {
				ch.Partition = snapshot.PartitionFor(o.Key, n)
			}
			old, ok := live[unownedID(o.Topic, ch.Partition, o.Key)]
			switch {
			case !ok:
				ch.Action = Added
			case bytes.Equal(old, o.Value):
				ch.Action, ch.Old = Unchanged, old
			default:
				ch.Action, ch.Old = Changed, old
			}
		}
		out = append(out, ch)
	}
	r.report.Unowned = out
	return out, nil
}

func unownedID(topic string, part int32, key []byte) string {
	return fmt.Sprintf("%s\x00%d\x00%s", topic, part, key)
}

// unownedWrites counts the changes that write.
func unownedWrites(cs []UnownedChange) int {
	n := 0
	for _, c := range cs {
		if c.Action.writes() {
			n++
		}
	}
	return n
}

// printUnowned lists the unowned keys with the plan.
func (r *run) printUnowned(cs []UnownedChange) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(r.Out, "unowned keys (no connector owns them; --include-unowned): %s, %d to write\n", plural(len(cs), "key", "keys"), unownedWrites(cs))
	for _, c := range cs {
		line := fmt.Sprintf("  unowned  %s/%d  %s  %s", c.Topic, c.Partition, DisplayKey(c.Key), c.Action)
		switch c.Action {
		case Changed:
			line += fmt.Sprintf("  %s -> %s", DisplayKey(c.Old), DisplayKey(c.New))
		case Added:
			line += "  " + DisplayKey(c.New)
		case Skipped:
			line += ": " + c.Reason
		}
		fmt.Fprintln(r.Out, line)
	}
}

// applyUnowned writes the unowned keys that change, exact bytes, in one
// transaction per topic, and reads them back.
func (r *run) applyUnowned(ctx context.Context, cs []UnownedChange) error {
	if unownedWrites(cs) == 0 {
		return nil
	}
	byTopic := map[string][]*kgo.Record{}
	var topics []string
	for _, c := range cs {
		if !c.Action.writes() {
			continue
		}
		if byTopic[c.Topic] == nil {
			topics = append(topics, c.Topic)
		}
		rec := &kgo.Record{Topic: c.Topic, Key: c.Key, Value: c.New, Context: context.WithValue(ctx, strayPartition{}, c.Partition)}
		byTopic[c.Topic] = append(byTopic[c.Topic], rec)
	}
	for _, t := range topics {
		last, err := writeRaw(ctx, r.Client, t, byTopic[t])
		if err != nil {
			return fmt.Errorf("write the unowned keys of offsets topic %q: %w", t, err)
		}
		if err := waitReadable(ctx, r.Client, t, last, readableWait, r.report.Plan.notify); err != nil {
			return err
		}
	}
	again, err := r.planUnowned(ctx, r.report.Plan)
	if err != nil {
		return err
	}
	var diffs []string
	for _, c := range again {
		if c.Action.writes() {
			diffs = append(diffs, fmt.Sprintf("%s/%d %s", c.Topic, c.Partition, DisplayKey(c.Key)))
		}
	}
	r.report.Unowned = cs
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %d unowned keys differ: %s", ErrVerifyFailed, len(diffs), strings.Join(diffs, ", "))
	}
	fmt.Fprintf(r.Out, "applied and verified: %s no connector owns\n", plural(unownedWrites(cs), "unowned key", "unowned keys"))
	return nil
}

// writeRaw writes recs to topic in one transaction, each to the partition
// its context names, and returns the last offset written per partition.
func writeRaw(ctx context.Context, cl *kgo.Client, topic string, recs []*kgo.Record) (map[int32]int64, error) {
	pcl, err := kgo.NewClient(append(slices.Clone(cl.Opts()),
		kgo.TransactionalID(TransactionalIDPrefix+topic),
		kgo.TransactionTimeout(transactionTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(restorePartitioner{}),
	)...)
	if err != nil {
		return nil, fmt.Errorf("create transactional producer: %w", err)
	}
	defer pcl.Close()
	if err := pcl.BeginTransaction(); err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	var mu sync.Mutex
	var perr error
	last := map[int32]int64{}
	var wg sync.WaitGroup
	wg.Add(len(recs))
	for _, rec := range recs {
		pcl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				perr = errors.Join(perr, fmt.Errorf("produce key %s: %w", DisplayKey(r.Key), err))
			} else if r.Offset >= last[r.Partition] {
				last[r.Partition] = r.Offset
			}
		})
	}
	wg.Wait()
	if perr != nil {
		abort(ctx, pcl)
		return nil, perr
	}
	if err := pcl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		abort(ctx, pcl)
		if fenced(err) {
			return nil, fencedError(topic, err)
		}
		return nil, fmt.Errorf("commit transaction: %w", err)
	}
	return last, nil
}
