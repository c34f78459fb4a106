package drill

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// ScratchClusterID is the cluster ID of the embedded scratch cluster.
const ScratchClusterID = "offsetkeeper-drill-scratch"

// scratchCompression is how a drill's restore compresses the batches it
// writes into the embedded scratch cluster (restore.Options.Compression).
// Its default level: the fastest one's smaller encoders do not make up
// for the larger copy kfake keeps.
var scratchCompression = kgo.ZstdCompression()

// scratchClientOpts are the options of the drill's clients of the scratch
// cluster, besides its brokers. Client telemetry (KIP-714) is off: the
// embedded cluster asks for it, and each push compresses the metrics with
// an lz4 writer whose pooled block buffer is megabytes, for a cluster
// that only the drill sees.
var scratchClientOpts = []kgo.Opt{kgo.DisableClientMetrics()}

// scratch is the cluster a drill restores into.
type scratch struct {
	cl      *kgo.Client
	cluster *kfake.Cluster // nil for --scratch-brokers
	seeds   []string
	topics  []topicSpec // created by the drill
	groups  []string    // committed by the restore
}

// topicSpec is a topic the drill creates in the scratch cluster.
type topicSpec struct {
	name       string
	partitions int32
	compact    bool
}

// startScratch starts the embedded scratch cluster (brokers empty) or
// connects to brokers, and creates the topics the state describes. A
// scratch cluster that does not start, does not answer or already has one
// of those topics is ErrCannotRun.
func startScratch(ctx context.Context, brokers []string, topics []topicSpec) (*scratch, error) {
	s := &scratch{seeds: brokers}
	if len(brokers) == 0 {
		c, err := connectdemo.NewCluster(kfake.ClusterID(ScratchClusterID))
		if err != nil {
			return nil, fmt.Errorf("%w: start the embedded scratch cluster: %v", ErrCannotRun, err)
		}
		s.cluster, s.seeds = c, c.ListenAddrs()
	}
	// The topics are made with a client of their own: a client that
	// asked for them before they existed keeps them missing in its
	// metadata cache for a while, and the restore needs them at once.
	setup, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.seeds...)}, scratchClientOpts...)...)
	if err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("%w: connect to the scratch cluster %v: %v", ErrCannotRun, s.seeds, err)
	}
	err = s.create(ctx, kadm.NewClient(setup), topics)
	setup.Close()
	if err != nil {
		s.close(ctx)
		return nil, err
	}
	if s.cl, err = kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.seeds...)}, scratchClientOpts...)...); err != nil {
		s.close(ctx)
		return nil, fmt.Errorf("%w: connect to the scratch cluster %v: %v", ErrCannotRun, s.seeds, err)
	}
	return s, nil
}

// create creates topics, none of which may exist yet.
func (s *scratch) create(ctx context.Context, adm *kadm.Client, topics []topicSpec) error {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.name
	}
	existing, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("%w: the scratch cluster %v does not answer: %v", ErrCannotRun, s.seeds, err)
	}
	for _, t := range names {
		if d, ok := existing[t]; ok && d.Err == nil {
			return fmt.Errorf("%w: the scratch cluster %v already has topic %q: give a scratch cluster without the Connect topics of the state (the drill creates them and deletes them after)", ErrCannotRun, s.seeds, t)
		}
	}
	for _, t := range topics {
		var cfgs map[string]*string
		if t.compact {
			cfgs = map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
		}
		resp, err := adm.CreateTopic(ctx, t.partitions, -1, cfgs, t.name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("%w: create topic %q (%d partitions) in the scratch cluster: %v", ErrCannotRun, t.name, t.partitions, err)
		}
		s.topics = append(s.topics, t)
	}
	return nil
}

// close removes what the drill made in a --scratch-brokers cluster (its
// topics and groups) and stops the embedded one.
func (s *scratch) close(ctx context.Context) {
	if s.cl != nil && s.cluster == nil {
		adm := kadm.NewClient(s.cl)
		if len(s.groups) > 0 {
			_, _ = adm.DeleteGroups(ctx, s.groups...)
		}
		var names []string
		for _, t := range s.topics {
			names = append(names, t.name)
		}
		if len(names) > 0 {
			_, _ = adm.DeleteTopics(ctx, names...)
		}
	}
	if s.cl != nil {
		s.cl.Close()
	}
	if s.cluster != nil {
		s.cluster.Close()
	}
}

// name is how a report names the scratch cluster.
func (s *scratch) name() string {
	if s.cluster != nil {
		return "embedded"
	}
	return fmt.Sprint(s.seeds)
}

// scratchTopics are the topics to create for state: its offsets topics
// (the partition counts it read them with) and config topics, compacted;
// the status topic as a worker creates it; and each sink topic with the
// partitions its groups hold offsets for.
func scratchTopics(state *snapshot.Snapshot, opts capture.Options) []topicSpec {
	seen := map[string]bool{}
	var out []topicSpec
	add := func(name string, n int32, compact bool) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		out = append(out, topicSpec{name: name, partitions: max(n, 1), compact: compact})
	}
	for _, t := range state.Topics {
		add(t.Name, int32(len(t.Partitions)), true)
	}
	tab := state.SourceTable()
	maxPart := map[string]int32{}
	for i := range int32(tab.Len()) {
		maxPart[tab.Topic(i)] = max(maxPart[tab.Topic(i)], tab.Partition(i)+1)
	}
	for _, t := range slices.Sorted(maps.Keys(maxPart)) {
		add(t, maxPart[t], true)
	}
	for _, t := range opts.OffsetsTopics {
		add(t, connectdemo.DefaultOffsetsPartitions, true)
	}
	add(opts.ConfigTopic, 1, true)
	status := opts.StatusTopic
	if status == "" {
		status = connectdemo.DefaultStatusTopic
	}
	add(status, connectdemo.DefaultStatusPartitions, true)
	sinkParts := map[string]int32{}
	for _, g := range state.SinkGroups {
		for _, o := range g.Offsets {
			sinkParts[o.Topic] = max(sinkParts[o.Topic], o.Partition+1)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(sinkParts)) {
		add(t, sinkParts[t], false)
	}
	return out
}
