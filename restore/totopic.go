package restore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// OffsetsTopicReport is what a restore with Request.ToOffsetsTopic did to
// the offsets topic it carried the connector's offsets to.
type OffsetsTopicReport struct {
	// Topic is Request.ToOffsetsTopic; From the topic the snapshot read
	// the connector's offsets from.
	Topic string `json:"topic"`
	From  string `json:"from"`
	// Partitions is the topic's partition count (the one it is created
	// with when missing: the From topic's in the snapshot).
	Partitions int32 `json:"partitions"`
	// Created is set when the restore created the topic (or, in a dry
	// run, would create it).
	Created bool `json:"created"`
	// WorkerSetting is the worker configuration line that points a
	// recreated connector's workers at Topic.
	WorkerSetting string `json:"worker_setting"`
}

// carry is a restore with Request.ToOffsetsTopic: the snapshot given is
// made a snapshot of the one connector's source offsets on their murmur2
// partitions of the new topic, and the restore writes that, as any other,
// into a topic that holds nothing (so the plan adds every key, and the
// undo snapshot is the empty topic).
type carry struct {
	rep *OffsetsTopicReport
	// missing is set while the topic does not exist: the plan is made
	// against an empty live state, and the topic is created just before
	// the undo snapshot.
	missing bool
	// fresh is the client the run goes on with once it created the topic
	// (see create); close closes it.
	fresh *kgo.Client
}

// close closes the client create made, if any.
func (c *carry) close() {
	if c != nil && c.fresh != nil {
		c.fresh.Close()
	}
}

// carryTo turns r.req into the restore of the connector's source offsets
// to r.req.ToOffsetsTopic: the scope's checks, the topic's (it must be
// empty and compacted: another connector's offsets may be in a topic
// that holds records), the snapshot rewritten and the options pointed at
// the topic alone, with a config topic that holds no config (the
// connector is a new one, recreated to read the topic).
func (r *run) carryTo(ctx context.Context) error {
	topic, snap := r.req.ToOffsetsTopic, r.req.Snapshot
	switch {
	case len(r.req.Connectors) != 1:
		return errors.New("restore: ToOffsetsTopic takes one source connector in Connectors")
	case r.req.Via != ViaKafka || r.Client == nil:
		return errors.New("restore: ToOffsetsTopic writes through Kafka: it needs Via kafka and a client")
	case r.req.SinkOnly:
		return errors.New("restore: ToOffsetsTopic restores source offsets: SinkOnly excludes it")
	}
	name := r.req.Connectors[0]
	var want []snapshot.SourceOffset
	var from string
	tab := snap.SourceTable()
	for i := range int32(tab.Len()) {
		if tab.Connector(i) == name {
			want = append(want, snapshot.SourceOffset{Connector: name, Key: tab.Key(i), Value: tab.Value(i)})
			from = tab.Topic(i)
		}
	}
	if len(want) == 0 {
		return fmt.Errorf("connector %q has no source offsets in snapshot %s: nothing to carry to %q (a sink's offsets are its consumer group's, connect-%s, which a recreated sink of the same name reads)", name, snap.ID, topic, name)
	}
	if from == topic {
		return fmt.Errorf("restore: ToOffsetsTopic %q is the topic the snapshot read the connector's offsets from", topic)
	}
	parts := int32(25) // Connect's offset.storage.partitions default
	for _, t := range snap.Topics {
		if t.Name == from && len(t.Partitions) > 0 {
			parts = int32(len(t.Partitions))
		}
	}
	if l := r.req.Options.Layout; l != nil && !l.Offsets.MatchString(topic) {
		fmt.Fprintf(r.Warn, "warning: %q does not match the offsets topic pattern %q: snapshots and the journal under this layout will not read the recreated connector's offsets from it; name it to match (on MSK Connect, __msk_connect_offsets_<name>) or widen --offsets-topic-pattern\n", topic, l.Offsets)
	}
	// Asked through a client of its own: a client's metadata answers may
	// be cached from before the topic was created.
	chk, err := kgo.NewClient(r.Client.Opts()...)
	if err != nil {
		return fmt.Errorf("describe topic %q: %w; nothing was written", topic, err)
	}
	n, exists, err := emptyOffsetsTopic(ctx, kadm.NewClient(chk), topic)
	chk.Close()
	if err != nil {
		return err
	}
	if !exists {
		n = parts
	}
	for i := range want {
		want[i].Topic, want[i].Partition = topic, snapshot.PartitionFor(want[i].Key, n)
	}
	r.carry = &carry{missing: !exists, rep: &OffsetsTopicReport{Topic: topic, From: from, Partitions: n, Created: !exists, WorkerSetting: "offset.storage.topic=" + topic}}
	r.report.OffsetsTopic = r.carry.rep

	carried := *snap
	carried.SetSourceOffsets(want)
	carried.SinkGroups, carried.SinkTopics, carried.Unread = nil, nil, nil
	carried.Connectors = nil
	for _, c := range snap.Connectors {
		if c.Name == name {
			c.OffsetsTopic = "" // the worker's: topic
			carried.Connectors = append(carried.Connectors, c)
		}
	}
	carried.Topics = []snapshot.Topic{{Name: topic, Role: snapshot.RoleOffsets, Partitions: partitionsOf(n)}}
	r.req.Snapshot = &carried

	opts := &r.req.Options
	opts.SourceOnly, opts.IncludeUnowned = true, false
	opts.Layout = nil
	opts.OffsetsTopics = []string{topic}
	// The recreated connector's config is in its own workers' config
	// topic, which this cluster may not have: none is read.
	opts.ConfigTopic, opts.ConfigTopics = topic+".no-config", nil
	opts.StatusTopic, opts.StatusTopics = "", nil
	r.req.Resets = false
	if r.req.DryRun && !exists {
		fmt.Fprintf(r.Out, "dry run: would create offsets topic %q (%d partitions, cleanup.policy=compact)\n", topic, n)
		fmt.Fprintf(r.Out, "  and write %d source offsets of connector %q to it, from %q of snapshot %s\n", len(want), name, from, snap.ID)
	}
	return nil
}

// partitionsOf is n empty partitions.
func partitionsOf(n int32) []snapshot.TopicPartition {
	out := make([]snapshot.TopicPartition, n)
	for i := range out {
		out[i].Partition = int32(i)
	}
	return out
}

// plan is the plan of a carry to a topic that does not exist yet: every
// key added, compared with an empty live state of this cluster.
func (c *carry) plan(ctx context.Context, r *run) (*Plan, error) {
	md, err := kadm.NewClient(r.Client).BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cluster metadata: %w; nothing was written", err)
	}
	snap := r.req.Snapshot
	live := &snapshot.Snapshot{Version: snap.Version, ClusterID: md.Cluster, Reason: snapshot.ReasonUndo, Scope: r.req.Connectors,
		Topics: snap.Topics, Connectors: []snapshot.Connector{}, SinkGroups: []snapshot.SinkGroup{}}
	live.SetSourceOffsets([]snapshot.SourceOffset{})
	plan, err := PlanStates(snap, live, r.req.Options)
	if err != nil {
		return nil, fmt.Errorf("plan restore of snapshot %s: %w; nothing was written", snap.ID, err)
	}
	return plan, nil
}

// create creates the missing topic, compacted, and returns the plan made
// again against it (it holds nothing, so the plan is the same): its live
// state is the undo snapshot, and Apply and Verify work from it.
func (c *carry) create(ctx context.Context, r *run) (*Plan, error) {
	rep := c.rep
	resp, err := kadm.NewClient(r.Client).CreateTopic(ctx, rep.Partitions, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, rep.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return nil, fmt.Errorf("create offsets topic %q: %w; nothing was written", rep.Topic, err)
	}
	c.missing = false
	fmt.Fprintf(r.Out, "created offsets topic %q (%d partitions, cleanup.policy=compact)\n", rep.Topic, rep.Partitions)
	// The run goes on with a client of its own: the given one's metadata
	// remembers the topic missing, from the plan, until its next refresh.
	fresh, err := kgo.NewClient(r.Client.Opts()...)
	if err != nil {
		return nil, fmt.Errorf("read back offsets topic %q: %w; nothing was written", rep.Topic, err)
	}
	c.fresh, r.Client = fresh, fresh
	// A topic just created reaches every broker's metadata a moment later.
	for try := 0; ; try++ {
		plan, err := r.plan(ctx, " once its offsets topic was created")
		if err == nil || !(errors.Is(err, ErrTopicMissing) || errors.Is(err, capture.ErrTopicMissing)) || try == 50 {
			return plan, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// done prints where the connector's offsets now are and the worker
// setting that reads them.
func (c *carry) done(r *run) {
	rep := c.rep
	fmt.Fprintf(r.Out, "offsets topic %q holds the source offsets of connector %q, each key on its murmur2 partition\n", rep.Topic, r.req.Connectors[0])
	fmt.Fprintf(r.Out, "start the recreated connector's workers with this line in their worker configuration\n(on MSK Connect, a custom worker configuration):\n  %s\n", rep.WorkerSetting)
}

// rollBack is the advice after a carry that wrote and then failed: the
// topic held nothing before (undo is the snapshot of it empty), and no
// worker reads it until one is started with the worker setting.
func (c *carry) rollBack(undo string) string {
	return fmt.Sprintf("the offsets topic %q held nothing before this restore (undo snapshot %s); no connector reads it until its workers are started with %s: do not start them; delete the topic, fix the cause above and run this restore again", c.rep.Topic, undo, c.rep.WorkerSetting)
}

// emptyOffsetsTopic returns the partition count of topic and whether it
// exists, and refuses one that holds records or is not compacted.
func emptyOffsetsTopic(ctx context.Context, adm *kadm.Client, topic string) (int32, bool, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, false, fmt.Errorf("describe topic %q: %w; nothing was written", topic, err)
	}
	d, ok := td[topic]
	if !ok || d.Err != nil {
		return 0, false, nil
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, false, fmt.Errorf("list start offsets of %q: %w; nothing was written", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, false, fmt.Errorf("list end offsets of %q: %w; nothing was written", topic, err)
	}
	for p, e := range ends[topic] {
		if s := starts[topic][p]; e.Err == nil && s.Err == nil && e.Offset > s.Offset {
			return 0, false, refusal{fmt.Errorf("topic %q already holds records (partition %d: offsets %d to %d): another connector's offsets may be there; give --to-offsets-topic a new name; nothing was written", topic, p, s.Offset, e.Offset)}
		}
	}
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err == nil {
		if rcfg, err := rc.On(topic, nil); err == nil {
			for _, kv := range rcfg.Configs {
				if kv.Key == "cleanup.policy" && kv.Value != nil && *kv.Value != "compact" {
					return 0, false, refusal{fmt.Errorf("topic %q has cleanup.policy=%s: a Connect worker refuses an offsets topic that is not exactly compact; nothing was written", topic, *kv.Value)}
				}
			}
		}
	}
	return int32(len(d.Partitions)), true, nil
}
