package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// toNewTopic is restore --connector X --to-offsets-topic NEW: the AWS
// recipe for carrying a connector's offsets to a connector recreated on MSK
// Connect (whose own topics are new), or to any worker started with
// offset.storage.topic=NEW. It writes the snapshot's source offsets of X,
// byte for byte, on their murmur2 partitions of NEW, in one transaction,
// into a topic it creates compacted (or one that exists and is empty: a
// topic that holds records is refused, as another connector's may be
// there), reads them back, and prints the worker setting to use. Under a
// topic layout it warns of a name the layout will not find again.
func (c *restoreCmd) toNewTopic(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, layout *capture.Layout) error {
	switch {
	case len(c.connectors) != 1:
		return usagef("--to-offsets-topic takes one source connector: give --connector NAME once")
	case c.via != restore.ViaKafka, cl == nil:
		return usagef("--to-offsets-topic writes through Kafka: drop --via connect and give --brokers")
	case c.sinkOnly:
		return usagef("--to-offsets-topic restores a source connector's offsets: drop --sink-only")
	}
	name, topic := c.connectors[0], c.toOffsetsTopic
	var want []snapshot.SourceOffset
	var from string
	tab := snap.SourceTable()
	for i := range int32(tab.Len()) {
		if tab.Connector(i) == name {
			want = append(want, snapshot.SourceOffset{Connector: name, Topic: tab.Topic(i), Key: tab.Key(i), Value: tab.Value(i)})
			from = tab.Topic(i)
		}
	}
	if len(want) == 0 {
		return fmt.Errorf("connector %q has no source offsets in snapshot %s: nothing to carry to %q (a sink's offsets are its consumer group's, connect-%s, which a recreated sink of the same name reads)", name, snap.ID, topic, name)
	}
	if from == topic {
		return usagef("--to-offsets-topic %q is the topic the snapshot read the connector's offsets from: restore it without --to-offsets-topic", topic)
	}
	parts := int32(25) // Connect's offset.storage.partitions default
	for _, t := range snap.Topics {
		if t.Name == from && len(t.Partitions) > 0 {
			parts = int32(len(t.Partitions))
		}
	}
	adm := kadm.NewClient(cl)
	n, created, err := c.emptyOffsetsTopic(ctx, adm, topic, parts)
	if err != nil {
		return err
	}
	for i := range want {
		want[i].Topic, want[i].Partition = topic, snapshot.PartitionFor(want[i].Key, n)
	}
	out := c.progress()
	if layout != nil && !layout.Offsets.MatchString(topic) {
		fmt.Fprintf(c.stderr, "warning: %q does not match the offsets topic pattern %q: snapshots and the journal under this layout will not read the recreated connector's offsets from it; name it to match (on MSK Connect, __msk_connect_offsets_<name>) or widen --offsets-topic-pattern\n", topic, layout.Offsets)
	}
	if c.dryRun {
		fmt.Fprintf(out, "dry run: would create offsets topic %q (%d partitions, cleanup.policy=compact) and write %d source offsets of connector %q to it (from %q of snapshot %s); nothing was written\n", topic, n, len(want), name, from, snap.ID)
		return nil
	}
	if err := writeNewTopic(ctx, cl, topic, want); err != nil {
		return err
	}
	if err := verifyNewTopic(ctx, cl, topic, name, want); err != nil {
		return err
	}
	what := "empty"
	if created {
		what = "new"
	}
	fmt.Fprintf(out, "wrote %d source offsets of connector %q from snapshot %s to the %s offsets topic %q (%d partitions, each key on its murmur2 partition, one transaction) and read them back: verified\n", len(want), name, snap.ID, what, topic, n)
	fmt.Fprintf(out, "start the recreated connector's workers with this worker configuration line (on MSK Connect, in a custom worker configuration):\n  offset.storage.topic=%s\n", topic)
	return nil
}

// emptyOffsetsTopic returns the partition count of topic, made compacted
// with parts partitions when missing (not in a dry run), and refuses one
// that holds records or is not compacted.
func (c *restoreCmd) emptyOffsetsTopic(ctx context.Context, adm *kadm.Client, topic string, parts int32) (int32, bool, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, false, fmt.Errorf("describe topic %q: %w", topic, err)
	}
	if d, ok := td[topic]; ok && d.Err == nil {
		starts, err := adm.ListStartOffsets(ctx, topic)
		if err != nil {
			return 0, false, fmt.Errorf("list start offsets of %q: %w", topic, err)
		}
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return 0, false, fmt.Errorf("list end offsets of %q: %w", topic, err)
		}
		for p, e := range ends[topic] {
			if s := starts[topic][p]; e.Err == nil && s.Err == nil && e.Offset > s.Offset {
				return 0, false, fmt.Errorf("%w: topic %q already holds records (partition %d: offsets %d to %d): another connector's offsets may be there; give --to-offsets-topic a new name", restore.ErrRefused, topic, p, s.Offset, e.Offset)
			}
		}
		rc, err := adm.DescribeTopicConfigs(ctx, topic)
		if err == nil {
			if r, err := rc.On(topic, nil); err == nil {
				for _, kv := range r.Configs {
					if kv.Key == "cleanup.policy" && kv.Value != nil && *kv.Value != "compact" {
						return 0, false, fmt.Errorf("%w: topic %q has cleanup.policy=%s: a Connect worker refuses an offsets topic that is not exactly compact", restore.ErrRefused, topic, *kv.Value)
					}
				}
			}
		}
		return int32(len(d.Partitions)), false, nil
	}
	if c.dryRun {
		return parts, false, nil
	}
	resp, err := adm.CreateTopic(ctx, parts, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return 0, false, fmt.Errorf("create offsets topic %q: %w", topic, err)
	}
	return parts, true, nil
}

// writeNewTopic writes offs in one transaction, each on its partition.
func writeNewTopic(ctx context.Context, cl *kgo.Client, topic string, offs []snapshot.SourceOffset) error {
	txn, err := kgo.NewClient(append(cl.Opts(),
		kgo.TransactionalID(restore.TransactionalIDPrefix+topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ConsumeTopics(), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		return fmt.Errorf("write offsets topic %q: %w", topic, err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		return fmt.Errorf("write offsets topic %q: %w", topic, err)
	}
	recs := make([]*kgo.Record, len(offs))
	for i, o := range offs {
		recs[i] = &kgo.Record{Topic: topic, Partition: o.Partition, Key: o.Key, Value: o.Value}
	}
	perr := txn.ProduceSync(ctx, recs...).FirstErr()
	commit := kgo.TryCommit
	if perr != nil {
		commit = kgo.TryAbort
	}
	if err := errors.Join(perr, txn.EndTransaction(ctx, commit)); err != nil {
		return fmt.Errorf("write offsets topic %q (nothing committed): %w", topic, err)
	}
	return nil
}

// verifyNewTopic reads topic back and compares the connector's keys.
func verifyNewTopic(ctx context.Context, cl *kgo.Client, topic, name string, want []snapshot.SourceOffset) error {
	// A client of its own: cl's metadata cache remembers the topic missing
	// from before it was created.
	rd, err := kgo.NewClient(cl.Opts()...)
	if err != nil {
		return fmt.Errorf("read back offsets topic %q: %w", topic, err)
	}
	defer rd.Close()
	var got *snapshot.Snapshot
	// A topic just created reaches every broker's metadata a moment later.
	for try := 0; ; try++ {
		got, err = capture.Capture(ctx, rd, capture.Options{OffsetsTopics: []string{topic}, ConfigTopic: topic + ".no-config", ConfigTopicOptional: true, Connectors: []string{name}})
		if !errors.Is(err, capture.ErrTopicMissing) || try == 50 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("read back offsets topic %q: %w", topic, err)
	}
	have := map[string]string{}
	for _, o := range got.SourceOffsets {
		have[fmt.Sprintf("%d %s", o.Partition, o.Key)] = string(o.Value)
	}
	wantM := map[string]string{}
	for _, o := range want {
		wantM[fmt.Sprintf("%d %s", o.Partition, o.Key)] = string(o.Value)
	}
	if !maps.Equal(have, wantM) {
		keys := slices.Sorted(maps.Keys(wantM))
		return fmt.Errorf("%w: offsets topic %q holds %d keys of %q after the write, want %d (first wanted: %s)", restore.ErrVerifyFailed, topic, len(have), name, len(wantM), keys[0])
	}
	return nil
}
