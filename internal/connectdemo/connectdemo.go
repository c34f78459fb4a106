// Package connectdemo builds realistic Kafka Connect clusters inside kfake,
// for the embedded demo (offsetkeeper demo) and for the tests of every other
// package.
//
// The three things to know are [Spec], a Connect cluster described as the
// exact records its workers wrote (see [DefaultSpec]); [Seed], which writes a
// Spec into a cluster; and [Expected], what a correct snapshot of that
// cluster must contain, computed by the seeder from what it wrote and never
// by reading it back.
//
// Guarantees:
//   - Keys and values are byte-for-byte what a Connect worker writes: compact
//     Jackson JSON, connector-specific field order, Jackson escaping (raw
//     UTF-8, raw <>&, upper-case \uD83D\uDE00 surrogates). They are written
//     as literal bytes, never produced by encoding/json.
//   - Records reach the partition franz-go's default partitioner (Kafka's
//     murmur2) picks, exactly as the worker's producer would; Seed checks
//     every produced record against its own murmur2. The only exceptions are
//     records a Spec explicitly forces to a partition, as a user following
//     the Debezium docs (kcat -p 11) does.
//   - Records written in aborted transactions never count in Expected.
package connectdemo

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
)

// DefaultClusterID is the cluster id NewCluster gives the fake cluster
// unless a kfake.ClusterID option overrides it.
const DefaultClusterID = "offsetkeeper-demo-cluster"

// Default topic names and partition counts, as a Connect worker with
// DistributedConfig defaults creates them.
const (
	DefaultOffsetsTopic      = "connect-offsets"
	DefaultConfigsTopic      = "connect-configs"
	DefaultStatusTopic       = "connect-status"
	DefaultOffsetsPartitions = 25
	DefaultStatusPartitions  = 5
	// DefaultWorkerGroupID is the workers' group.id; it prefixes the
	// transactional ids of exactly-once tasks and of the config leader.
	DefaultWorkerGroupID = "connect-cluster"
)

// NewCluster starts a 3-broker kfake cluster with cluster id
// DefaultClusterID and automatic topic creation off (a real Connect cluster
// creates its topics explicitly, and an auto-created topic would hide a
// bug). opts are applied after these defaults, so kfake.ClusterID,
// kfake.NumBrokers and the rest override them. The caller closes the cluster.
func NewCluster(opts ...kfake.Opt) (*kfake.Cluster, error) {
	all := append([]kfake.Opt{
		kfake.NumBrokers(3),
		kfake.ClusterID(DefaultClusterID),
	}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		return nil, fmt.Errorf("start kfake cluster: %w", err)
	}
	return c, nil
}

// Topics names the three worker topics. Zero fields take the defaults
// (DefaultOffsetsTopic, 25 partitions, and so on); ReplicationFactor 0
// means the broker default (-1).
type Topics struct {
	Offsets           string
	OffsetsPartitions int32
	Configs           string
	Status            string
	StatusPartitions  int32
	ReplicationFactor int16
}

// DefaultTopics returns the worker topics a Connect cluster with default
// settings uses.
func DefaultTopics() Topics { return Topics{}.withDefaults() }

func (t Topics) withDefaults() Topics {
	if t.Offsets == "" {
		t.Offsets = DefaultOffsetsTopic
	}
	if t.OffsetsPartitions == 0 {
		t.OffsetsPartitions = DefaultOffsetsPartitions
	}
	if t.Configs == "" {
		t.Configs = DefaultConfigsTopic
	}
	if t.Status == "" {
		t.Status = DefaultStatusTopic
	}
	if t.StatusPartitions == 0 {
		t.StatusPartitions = DefaultStatusPartitions
	}
	if t.ReplicationFactor == 0 {
		t.ReplicationFactor = -1
	}
	return t
}

// CreateTopics creates the offsets (25 partitions), configs (1) and status
// (5) topics of t, each with cleanup.policy=compact, as a Connect worker
// does at startup. A topic that already exists is left as it is and is not
// an error.
func CreateTopics(ctx context.Context, cl *kgo.Client, t Topics) error {
	t = t.withDefaults()
	adm := kadm.NewClient(cl)
	for _, ts := range []TopicSpec{
		{Name: t.Offsets, Partitions: t.OffsetsPartitions, Compact: true},
		{Name: t.Configs, Partitions: 1, Compact: true},
		{Name: t.Status, Partitions: t.StatusPartitions, Compact: true},
	} {
		if err := createTopic(ctx, adm, ts, t.ReplicationFactor); err != nil {
			return err
		}
	}
	return nil
}

// TopicSpec is a topic Seed creates besides the worker topics: a
// connector's own offsets topic, or a data topic sinks read.
type TopicSpec struct {
	Name       string
	Partitions int32
	// Compact sets cleanup.policy=compact.
	Compact bool
	// Records is how many records Seed first writes to each partition of a
	// data topic, so committed group offsets point inside the log.
	Records int
}

func createTopic(ctx context.Context, adm *kadm.Client, ts TopicSpec, rf int16) error {
	var cfgs map[string]*string
	if ts.Compact {
		compact := "compact"
		cfgs = map[string]*string{"cleanup.policy": &compact}
	}
	resp, err := adm.CreateTopic(ctx, ts.Partitions, rf, cfgs, ts.Name)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %q: %w", ts.Name, err)
	}
	return nil
}

// partitionCounts returns the partition count of each topic, failing if
// any is missing.
func partitionCounts(ctx context.Context, adm *kadm.Client, topics ...string) (map[string]int32, error) {
	td, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	out := make(map[string]int32, len(topics))
	for _, t := range topics {
		d, ok := td[t]
		if !ok {
			return nil, fmt.Errorf("describe topic %q: not in metadata", t)
		}
		if d.Err != nil {
			return nil, fmt.Errorf("describe topic %q: %w", t, d.Err)
		}
		out[t] = int32(len(d.Partitions))
	}
	return out, nil
}

// newClient opens a client to the brokers cl talks to, copying only how cl
// connects (seed brokers, dialer, TLS, SASL), never how it produces or
// consumes: Seed must control the partitioner and transactions itself.
func newClient(cl *kgo.Client, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := []kgo.Opt{}
	if seeds, ok := cl.OptValue(kgo.SeedBrokers).([]string); ok {
		opts = append(opts, kgo.SeedBrokers(seeds...))
	}
	if fn, ok := cl.OptValue(kgo.Dialer).(func(context.Context, string, string) (net.Conn, error)); ok && fn != nil {
		opts = append(opts, kgo.Dialer(fn))
	}
	if tc, ok := cl.OptValue(kgo.DialTLSConfig).(*tls.Config); ok && tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if ms, ok := cl.OptValue(kgo.SASL).([]sasl.Mechanism); ok && len(ms) > 0 {
		opts = append(opts, kgo.SASL(ms...))
	}
	c, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("open kafka client: %w", err)
	}
	return c, nil
}

// Murmur2Partition is the partition Kafka's default partitioner (and
// franz-go's) picks for key among n partitions:
// toPositive(murmur2(key)) % n. It is the seeder's own implementation,
// independent of franz-go, so Seed can check what the producer did.
func Murmur2Partition(key []byte, n int32) int32 {
	return int32(murmur2(key)&0x7fffffff) % n
}

// murmur2 is org.apache.kafka.common.utils.Utils.murmur2.
func murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	length := len(data)
	h := uint32(seed) ^ uint32(length)
	for i := 0; i+4 <= length; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := length &^ 3
	switch length % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
