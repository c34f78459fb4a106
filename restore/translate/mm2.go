package translate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MirrorMaker 2's internal records, as org.apache.kafka.connect.mirror's
// Checkpoint and OffsetSync encode them with Kafka's protocol Schema and
// Struct types: big-endian, a STRING is an int16 length and UTF-8 bytes.
//
//	checkpoint key    group STRING, topic STRING, partition INT32
//	checkpoint value  version INT16 (0), upstreamOffset INT64, offset INT64, metadata STRING
//	offset-sync key   topic STRING, partition INT32
//	offset-sync value upstreamOffset INT64, offset INT64 (no version)
//
// Checkpoints live in <source alias>.checkpoints.internal on the target
// cluster, their topic the downstream (renamed) one; offset syncs in
// mm2-offset-syncs.<target alias>.internal on the source cluster by
// default (offset-syncs.topic.location=source), their topic the upstream
// one. MM2 reads partition 0 of both.

// Checkpoint is one record of MM2's checkpoints topic: group's committed
// offset Upstream on the source cluster translated to Downstream on the
// target's copy of the topic.
type Checkpoint struct {
	Group      string
	Topic      string // the downstream topic
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string
}

// OffsetSync is one record of MM2's offset-syncs topic: upstream offset
// Upstream of the source topic was replicated as Downstream.
type OffsetSync struct {
	Topic      string // the upstream topic
	Partition  int32
	Upstream   int64
	Downstream int64
}

// CheckpointsTopic is where MM2 writes the checkpoints of source cluster
// alias (DefaultReplicationPolicy.checkpointsTopic).
func CheckpointsTopic(alias string) string { return alias + ".checkpoints.internal" }

// OffsetSyncsTopic is where MM2 writes the offset syncs towards target
// cluster alias (MirrorClientConfig.offsetSyncsTopic).
func OffsetSyncsTopic(targetAlias string) string {
	return "mm2-offset-syncs." + targetAlias + ".internal"
}

// AppendKey appends the checkpoint's record key.
func (c Checkpoint) AppendKey(dst []byte) []byte {
	dst = appendKafkaString(dst, c.Group)
	dst = appendKafkaString(dst, c.Topic)
	return binary.BigEndian.AppendUint32(dst, uint32(c.Partition))
}

// AppendValue appends the checkpoint's record value (version 0).
func (c Checkpoint) AppendValue(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Upstream))
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Downstream))
	return appendKafkaString(dst, c.Metadata)
}

// ParseCheckpoint decodes a checkpoint record. Data after the fields is
// ignored, as Schema.read ignores it; a version other than 0 is an error.
func ParseCheckpoint(key, value []byte) (Checkpoint, error) {
	var c Checkpoint
	k := kafkaReader{b: key}
	c.Group, c.Topic, c.Partition = k.str(), k.str(), k.i32()
	if k.err != nil {
		return Checkpoint{}, fmt.Errorf("decode checkpoint key: %w", k.err)
	}
	v := kafkaReader{b: value}
	if version := v.i16(); v.err == nil && version != 0 {
		return Checkpoint{}, fmt.Errorf("decode checkpoint value: version %d, this build reads version 0", version)
	}
	c.Upstream, c.Downstream, c.Metadata = v.i64(), v.i64(), v.str()
	if v.err != nil {
		return Checkpoint{}, fmt.Errorf("decode checkpoint value: %w", v.err)
	}
	return c, nil
}

// AppendKey appends the offset sync's record key.
func (s OffsetSync) AppendKey(dst []byte) []byte {
	dst = appendKafkaString(dst, s.Topic)
	return binary.BigEndian.AppendUint32(dst, uint32(s.Partition))
}

// AppendValue appends the offset sync's record value.
func (s OffsetSync) AppendValue(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.Upstream))
	return binary.BigEndian.AppendUint64(dst, uint64(s.Downstream))
}

// ParseOffsetSync decodes an offset-sync record.
func ParseOffsetSync(key, value []byte) (OffsetSync, error) {
	var s OffsetSync
	k := kafkaReader{b: key}
	s.Topic, s.Partition = k.str(), k.i32()
	if k.err != nil {
		return OffsetSync{}, fmt.Errorf("decode offset sync key: %w", k.err)
	}
	v := kafkaReader{b: value}
	s.Upstream, s.Downstream = v.i64(), v.i64()
	if v.err != nil {
		return OffsetSync{}, fmt.Errorf("decode offset sync value: %w", v.err)
	}
	return s, nil
}

func appendKafkaString(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// kafkaReader reads Kafka protocol primitives; the first error sticks.
type kafkaReader struct {
	b   []byte
	err error
}

func (r *kafkaReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("%d bytes left, %d needed", len(r.b), n)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *kafkaReader) i16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *kafkaReader) i32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *kafkaReader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *kafkaReader) str() string {
	n := r.i16()
	if r.err == nil && n < 0 {
		r.err = errors.New("null string where MM2 writes a STRING")
		return ""
	}
	return string(r.take(int(n)))
}

// errNoTopic: an MM2 topic does not exist (or has no partition 0).
var errNoTopic = errors.New("topic does not exist")

// Checkpoints are the checkpoints of one checkpoints topic, per group and
// downstream partition in the order written.
type Checkpoints struct {
	Topic string
	by    map[string]map[topicPart][]Checkpoint
	// Skipped counts records that did not decode.
	Skipped int
}

// Groups reports whether group has any checkpoint.
func (cs *Checkpoints) HasGroup(group string) bool { return len(cs.by[group]) > 0 }

// Lookup returns group's checkpoints of topic/partition, oldest first.
func (cs *Checkpoints) Lookup(group, topic string, partition int32) []Checkpoint {
	return cs.by[group][topicPart{topic, partition}]
}

// ReadCheckpoints reads partition 0 of MM2's checkpoints topic on cl (the
// target cluster) from its start to its end, as MirrorClient does. A
// missing topic is ErrTopicMissing.
func ReadCheckpoints(ctx context.Context, cl *kgo.Client, topic string) (*Checkpoints, error) {
	cs := &Checkpoints{Topic: topic, by: map[string]map[topicPart][]Checkpoint{}}
	err := readPartition0(ctx, cl, topic, func(r *kgo.Record) {
		if r.Value == nil {
			return
		}
		c, err := ParseCheckpoint(r.Key, r.Value)
		if err != nil {
			cs.Skipped++
			return
		}
		m := cs.by[c.Group]
		if m == nil {
			m = map[topicPart][]Checkpoint{}
			cs.by[c.Group] = m
		}
		tp := topicPart{c.Topic, c.Partition}
		m[tp] = append(m[tp], c)
	})
	if err != nil {
		return nil, fmt.Errorf("read MirrorMaker 2 checkpoints topic %q: %w", topic, err)
	}
	return cs, nil
}

// OffsetSyncStore translates upstream offsets to downstream ones from MM2's
// offset syncs, by OffsetSyncStore.translateDownstream's rule: take the
// latest sync at or before the upstream offset U; U itself when it is the
// sync's, else one past the sync's downstream offset (records after a sync
// may or may not have been replicated, so a re-read is chosen over a skip).
// Unlike MM2's in-memory store, which keeps about 64 exponentially spaced
// syncs of those it read after it started, this one keeps every sync still
// in the topic, so an older group offset translates more closely. A sync
// below the one before it (MM2 restarted from scratch, the topic
// recreated) makes the older syncs invalid, as in MM2.
type OffsetSyncStore struct {
	Topic string
	syncs map[topicPart][]OffsetSync
	// Skipped counts records that did not decode.
	Skipped int
}

// ReadOffsetSyncs reads partition 0 of MM2's offset-syncs topic on cl (the
// source cluster, by default) from its start to its end.
func ReadOffsetSyncs(ctx context.Context, cl *kgo.Client, topic string) (*OffsetSyncStore, error) {
	st := &OffsetSyncStore{Topic: topic, syncs: map[topicPart][]OffsetSync{}}
	err := readPartition0(ctx, cl, topic, func(r *kgo.Record) {
		if r.Value == nil {
			return
		}
		s, err := ParseOffsetSync(r.Key, r.Value)
		if err != nil {
			st.Skipped++
			return
		}
		st.Add(s)
	})
	if err != nil {
		return nil, fmt.Errorf("read MirrorMaker 2 offset-syncs topic %q: %w", topic, err)
	}
	return st, nil
}

// Add adds a sync read after the others.
func (st *OffsetSyncStore) Add(s OffsetSync) {
	if st.syncs == nil {
		st.syncs = map[topicPart][]OffsetSync{}
	}
	tp := topicPart{s.Topic, s.Partition}
	prev := st.syncs[tp]
	if n := len(prev); n > 0 && prev[n-1].Upstream > s.Upstream {
		prev = prev[:0] // a rewind: the old syncs are invalid
	}
	st.syncs[tp] = append(prev, s)
}

// Has reports whether the store holds syncs of topic/partition.
func (st *OffsetSyncStore) Has(topic string, partition int32) bool {
	return len(st.syncs[topicPart{topic, partition}]) > 0
}

// Translate translates upstream offset u of topic/partition (upstream
// names) and returns the sync used. ok is false when there is no sync for
// the partition, or only syncs after u (MM2's -1: too old to translate).
func (st *OffsetSyncStore) Translate(topic string, partition int32, u int64) (downstream int64, sync OffsetSync, ok bool) {
	syncs := st.syncs[topicPart{topic, partition}]
	for i := len(syncs) - 1; i >= 0; i-- {
		s := syncs[i]
		if s.Upstream <= u {
			if s.Upstream == u {
				return s.Downstream, s, true
			}
			return s.Downstream + 1, s, true
		}
	}
	if len(syncs) > 0 {
		return -1, syncs[0], false
	}
	return -1, OffsetSync{}, false
}

// readPartition0 reads partition 0 of topic from its start to its end
// (the high watermark taken first), read_uncommitted as MM2 reads it,
// with a consumer made from cl's options.
func readPartition0(ctx context.Context, cl *kgo.Client, topic string, fn func(*kgo.Record)) error {
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return err
	}
	s, sok := starts.Lookup(topic, 0)
	e, eok := ends.Lookup(topic, 0)
	switch {
	case !sok || !eok:
		return errNoTopic
	case s.Err != nil:
		return s.Err
	case e.Err != nil:
		return e.Err
	case s.Offset >= e.Offset:
		return nil
	}
	c, err := kgo.NewClient(append(cl.Opts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(s.Offset)}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))...)
	if err != nil {
		return err
	}
	defer c.Close()
	for {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return ferr
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < e.Offset {
				fn(r)
			}
			if r.Offset+1 >= e.Offset {
				done = true
			}
		})
		if done {
			return nil
		}
	}
}

// topicPart is one partition of a topic.
type topicPart struct {
	topic string
	part  int32
}
