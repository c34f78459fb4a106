package capture

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
)

// This file reads an offsets topic the two ways a Connect worker may:
// read_committed (a worker with exactly.once.source.support=enabled) and
// read_uncommitted (every other worker, the default), which applies the
// records of aborted transactions too, last write winning. A restore's
// aborted transaction is invisible to the first and visible to the second.

// ReadPartitionViews reads every partition of topic twice, read_committed
// and read_uncommitted, both up to the partition's last stable offset, at
// most batch partitions at a time, and calls fn with both views of each
// partition in partition order; what fn was given is garbage once it
// returns. Below the last stable offset every transaction is decided, so
// the views differ exactly at the keys whose last record there belongs to
// an aborted transaction. It returns the partition count, and fails with
// ErrTopicMissing for a topic that does not exist, or with fn's error.
func ReadPartitionViews(ctx context.Context, cl *kgo.Client, topic string, batch int, fn func(committed, uncommitted *PartitionKeys) error) (int32, error) {
	adm := kadm.NewClient(cl)
	all, parts, err := topicBounds(ctx, adm, topic)
	if err != nil {
		return 0, err
	}
	batch = max(batch, 1)
	for lo := 0; lo < len(parts); lo += batch {
		hi := min(lo+batch, len(parts))
		some := make(map[int32]kread.Bounds, hi-lo)
		for _, p := range parts[lo:hi] {
			some[p] = all[p]
		}
		bounds := map[string]map[int32]kread.Bounds{topic: some}
		vc, vu := keyview.NewTopicView(topic), keyview.NewTopicView(topic)
		if _, err := kread.ReadTopics(ctx, cl, adm, []*keyview.TopicView{vc}, bounds); err != nil {
			return 0, fmt.Errorf("read offsets topic %q read_committed: %w", topic, err)
		}
		if _, err := kread.ReadTopicsUncommitted(ctx, cl, adm, []*keyview.TopicView{vu}, bounds); err != nil {
			return 0, fmt.Errorf("read offsets topic %q read_uncommitted: %w", topic, err)
		}
		for _, p := range parts[lo:hi] {
			c, u := vc.Parts[p], vu.Parts[p]
			if c == nil {
				c = keyview.NewPartView(all[p].Start)
			}
			if u == nil {
				u = keyview.NewPartView(all[p].Start)
			}
			if err := fn(&PartitionKeys{Topic: topic, Partition: p, pv: c}, &PartitionKeys{Topic: topic, Partition: p, pv: u}); err != nil {
				return 0, err
			}
		}
	}
	return int32(len(parts)), nil
}

// ReadWorkerView reads every partition of topic as a Connect worker
// without exactly-once source support does: read_uncommitted, up to the
// high watermark, so the records of aborted and of open transactions are
// applied too. It calls fn with each partition's live keys, in partition
// order; what fn was given is garbage once it returns. It returns the
// partition count, and fails with ErrTopicMissing for a topic that does
// not exist.
func ReadWorkerView(ctx context.Context, cl *kgo.Client, topic string, fn func(*PartitionKeys) error) (int32, error) {
	adm := kadm.NewClient(cl)
	bounds, missing, err := kread.ListBounds(ctx, adm, []string{topic})
	if err != nil {
		return 0, err
	}
	if len(missing) > 0 {
		return 0, fmt.Errorf("read offsets topic %q: %w", topic, ErrTopicMissing)
	}
	hw, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("list end offsets of %q: %w", topic, err)
	}
	all := bounds[topic]
	for p, b := range all {
		o, ok := hw.Lookup(topic, p)
		if !ok || o.Err != nil {
			return 0, fmt.Errorf("list end offset of %s/%d: %v", topic, p, o.Err)
		}
		all[p] = kread.Bounds{Start: b.Start, End: max(b.End, o.Offset)}
	}
	v := keyview.NewTopicView(topic)
	if _, err := kread.ReadTopicsUncommitted(ctx, cl, adm, []*keyview.TopicView{v}, bounds); err != nil {
		return 0, fmt.Errorf("read offsets topic %q read_uncommitted: %w", topic, err)
	}
	parts := make([]int32, 0, len(all))
	for p := range all {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		pv := v.Parts[p]
		if pv == nil {
			pv = keyview.NewPartView(all[p].Start)
		}
		if err := fn(&PartitionKeys{Topic: topic, Partition: p, pv: pv}); err != nil {
			return 0, err
		}
	}
	return int32(len(parts)), nil
}
