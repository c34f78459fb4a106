package capture

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
)

// This file reads an offsets topic a few partitions at a time, for a
// reader that looks at each partition once and lets it go (a restore's
// verify): it holds the live keys of those partitions only, instead of the
// whole topic's.

// PartitionKeys are the live keys of one partition, read with
// read_committed isolation up to its last stable offset: the last value of
// every key that was not removed.
type PartitionKeys struct {
	Topic     string
	Partition int32
	pv        *keyview.PartView
}

// Len is the number of live keys.
func (k *PartitionKeys) Len() int { return k.pv.Len() }

// Lookup returns the live value of key.
func (k *PartitionKeys) Lookup(key []byte) ([]byte, bool) {
	i, ok := k.pv.Lookup(key)
	if !ok {
		return nil, false
	}
	return k.pv.Record(i).Value, true
}

// All yields every live key and its value, in no particular order. The
// bytes are valid until the callback of ReadPartitions returns.
func (k *PartitionKeys) All() iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		for _, i := range k.pv.All() {
			if !yield(k.pv.KeyAt(i), k.pv.Record(i).Value) {
				return
			}
		}
	}
}

// topicBounds lists the bounds of every partition of topic and its
// partitions in order; ErrTopicMissing for a topic that does not exist.
func topicBounds(ctx context.Context, adm *kadm.Client, topic string) (map[int32]kread.Bounds, []int32, error) {
	ends, missing, err := kread.ListBounds(ctx, adm, []string{topic})
	if err != nil {
		return nil, nil, err
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("read offsets topic %q: %w", topic, ErrTopicMissing)
	}
	all := ends[topic]
	parts := make([]int32, 0, len(all))
	for p := range all {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return all, parts, nil
}

// ReadPartitions reads every partition of topic, at most batch at a time
// (the partitions of a batch in parallel, as a capture reads), and calls fn
// with each partition's live keys once it is read, in partition order;
// what fn was given is garbage once it returns. It returns the topic's
// partition count, and fails with ErrTopicMissing for a topic that does
// not exist, or with fn's error.
func ReadPartitions(ctx context.Context, cl *kgo.Client, topic string, batch int, fn func(*PartitionKeys) error) (int32, error) {
	adm := kadm.NewClient(cl)
	all, parts, err := topicBounds(ctx, adm, topic)
	if err != nil {
		return 0, err
	}
	batch = max(batch, 1)
	for lo := 0; lo < len(parts); lo += batch {
		hi := min(lo+batch, len(parts))
		v := keyview.NewTopicView(topic)
		some := make(map[int32]kread.Bounds, hi-lo)
		for _, p := range parts[lo:hi] {
			some[p] = all[p]
		}
		if _, err := kread.ReadTopics(ctx, cl, adm, []*keyview.TopicView{v}, map[string]map[int32]kread.Bounds{topic: some}); err != nil {
			return 0, fmt.Errorf("read offsets topic %q: %w", topic, err)
		}
		for _, p := range parts[lo:hi] {
			pv := v.Parts[p]
			if pv == nil {
				pv = keyview.NewPartView(all[p].Start)
			}
			if err := fn(&PartitionKeys{Topic: topic, Partition: p, pv: pv}); err != nil {
				return 0, err
			}
		}
	}
	return int32(len(parts)), nil
}

// KeyConnector is the connector a source offsets key belongs to, as a
// capture tells it: the name of a key [name, {partition}] (in key's bytes
// when it is plain ASCII); false for a key of another form, which a scoped
// capture leaves out.
func KeyConnector(key []byte) ([]byte, bool) {
	if name, _, ok := connectjson.PlainKey(key); ok {
		return name, true
	}
	name, _, _, err := connectjson.ParseKey(key)
	if err != nil {
		return nil, false
	}
	return []byte(name), true
}
