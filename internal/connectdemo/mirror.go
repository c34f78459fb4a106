package connectdemo

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Mirror says how MirrorTopics copies topics from one cluster to another
// as MirrorMaker 2 does with its default replication policy.
type Mirror struct {
	// SourceAlias and TargetAlias are MM2's cluster aliases: copies are
	// named <SourceAlias>.<topic>, checkpoints go to
	// <SourceAlias>.checkpoints.internal on the target, offset syncs to
	// mm2-offset-syncs.<TargetAlias>.internal on the source.
	SourceAlias, TargetAlias string
	// Topics are the topics copied, whole.
	Topics []string
	// Shift is how many filler records (older than anything copied) each
	// partition of the copy starts with, so its offsets differ.
	Shift func(topic string, partition int32) int64
	// SyncEvery writes an offset sync every that many upstream records
	// (MM2 emits one about every offset.lag.max records), and one for the
	// last record; 0 means every record.
	SyncEvery int64
	// Checkpointed are the groups MM2 emits checkpoints for (those its
	// groups filter lets through).
	Checkpointed []string
}

// Mirrored is what MirrorTopics wrote.
type Mirrored struct {
	// Shift of each copied partition (downstream = upstream + shift).
	Shift map[string]map[int32]int64
	// Checkpoints written, by group, downstream topic and partition:
	// the downstream offset.
	Checkpoints map[string]map[string]map[int32]int64
}

// MirrorTopics copies m.Topics from src to dst as MirrorMaker 2 does: each
// record's key, value, headers and timestamp (CreateTime, as
// MirrorSourceTask keeps it) into the same partition of <alias>.<topic>
// after Shift filler records; writes offset syncs on src and, for each
// checkpointed group, one checkpoint per committed partition on dst,
// translated by MM2's OffsetSyncStore rule (latest sync at or before the
// group's offset; one past its downstream offset unless exactly on it).
// The MM2 records are encoded here on their own, not with package
// restore, as org.apache.kafka.connect.mirror's Checkpoint and OffsetSync
// write them.
func MirrorTopics(ctx context.Context, src, dst *kgo.Client, m Mirror) (*Mirrored, error) {
	sadm, dadm := kadm.NewClient(src), kadm.NewClient(dst)
	out := &Mirrored{Shift: map[string]map[int32]int64{}, Checkpoints: map[string]map[string]map[int32]int64{}}
	counts, err := partitionCounts(ctx, sadm, m.Topics...)
	if err != nil {
		return nil, err
	}
	syncsTopic := "mm2-offset-syncs." + m.TargetAlias + ".internal"
	cpTopic := m.SourceAlias + ".checkpoints.internal"
	if err := createTopic(ctx, sadm, TopicSpec{Name: syncsTopic, Partitions: 1, Compact: true}, -1); err != nil {
		return nil, err
	}
	if err := createTopic(ctx, dadm, TopicSpec{Name: cpTopic, Partitions: 1, Compact: true}, -1); err != nil {
		return nil, err
	}
	manual := func(cl *kgo.Client) (*kgo.Client, error) {
		return kgo.NewClient(append(cl.Opts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	}
	dp, err := manual(dst)
	if err != nil {
		return nil, err
	}
	defer dp.Close()
	sp, err := manual(src)
	if err != nil {
		return nil, err
	}
	defer sp.Close()

	type sync struct{ up, down int64 }
	syncs := map[string]map[int32][]sync{}
	for _, topic := range m.Topics {
		n := counts[topic]
		copyName := m.SourceAlias + "." + topic
		if err := createTopic(ctx, dadm, TopicSpec{Name: copyName, Partitions: n}, -1); err != nil {
			return nil, err
		}
		out.Shift[topic] = map[int32]int64{}
		syncs[topic] = map[int32][]sync{}
		for p := range n {
			recs, err := readAll(ctx, src, topic, p)
			if err != nil {
				return nil, err
			}
			shift := m.Shift(topic, p)
			out.Shift[topic][p] = shift
			var rs []*kgo.Record
			old := time.UnixMilli(1_000_000_000_000)
			for i := range shift {
				rs = append(rs, &kgo.Record{Topic: copyName, Partition: p, Key: fmt.Appendf(nil, "filler-%d", i), Value: []byte("filler"), Timestamp: old.Add(time.Duration(i) * time.Millisecond)})
			}
			var ss []*kgo.Record
			for i, r := range recs {
				rs = append(rs, &kgo.Record{Topic: copyName, Partition: p, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp})
				if m.SyncEvery <= 0 || r.Offset%m.SyncEvery == 0 || i == len(recs)-1 {
					s := sync{r.Offset, r.Offset + shift}
					syncs[topic][p] = append(syncs[topic][p], s)
					ss = append(ss, &kgo.Record{Topic: syncsTopic, Partition: 0, Key: syncKey(topic, p), Value: syncValue(s.up, s.down)})
				}
			}
			if err := dp.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				return nil, fmt.Errorf("copy %s/%d: %w", topic, p, err)
			}
			if err := sp.ProduceSync(ctx, ss...).FirstErr(); err != nil {
				return nil, fmt.Errorf("write offset syncs of %s/%d: %w", topic, p, err)
			}
		}
	}

	var cps []*kgo.Record
	for _, g := range m.Checkpointed {
		fetched, err := sadm.FetchOffsets(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("fetch offsets of group %q: %w", g, err)
		}
		out.Checkpoints[g] = map[string]map[int32]int64{}
		fetched.Each(func(o kadm.OffsetResponse) {
			ss := syncs[o.Topic][o.Partition]
			if o.Err != nil || o.At < 0 || len(ss) == 0 {
				return
			}
			down := int64(-1)
			for i := len(ss) - 1; i >= 0; i-- {
				if ss[i].up <= o.At {
					down = ss[i].down
					if ss[i].up != o.At {
						down++
					}
					break
				}
			}
			if down < 0 {
				return // MM2 drops a checkpoint it cannot translate
			}
			copyName := m.SourceAlias + "." + o.Topic
			if out.Checkpoints[g][copyName] == nil {
				out.Checkpoints[g][copyName] = map[int32]int64{}
			}
			out.Checkpoints[g][copyName][o.Partition] = down
			cps = append(cps, &kgo.Record{Topic: cpTopic, Partition: 0, Key: checkpointKey(g, copyName, o.Partition), Value: checkpointValue(o.At, down, o.Metadata)})
		})
	}
	if len(cps) > 0 {
		if err := dp.ProduceSync(ctx, cps...).FirstErr(); err != nil {
			return nil, fmt.Errorf("write checkpoints: %w", err)
		}
	}
	return out, nil
}

// readAll reads every record of topic/partition.
func readAll(ctx context.Context, cl *kgo.Client, topic string, p int32) ([]*kgo.Record, error) {
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	end, _ := ends.Lookup(topic, p)
	if end.Offset == 0 {
		return nil, nil
	}
	c, err := kgo.NewClient(append(cl.Opts(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}))...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []*kgo.Record
	for {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return nil, fmt.Errorf("read %s/%d: %w", topic, p, err)
		}
		for _, r := range fs.Records() {
			out = append(out, r)
			if r.Offset+1 >= end.Offset {
				return out, nil
			}
		}
	}
}

// Kafka protocol STRING: int16 length, UTF-8.
func kstr(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func syncKey(topic string, p int32) []byte {
	return binary.BigEndian.AppendUint32(kstr(nil, topic), uint32(p))
}

func syncValue(up, down int64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(up)), uint64(down))
}

func checkpointKey(group, topic string, p int32) []byte {
	return binary.BigEndian.AppendUint32(kstr(kstr(nil, group), topic), uint32(p))
}

func checkpointValue(up, down int64, metadata string) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0) // version 0
	b = binary.BigEndian.AppendUint64(b, uint64(up))
	b = binary.BigEndian.AppendUint64(b, uint64(down))
	return kstr(b, metadata)
}

// MigrationSpec is DefaultSpec with its data topics left empty by Seed;
// fill then writes the records Seed would have (the same counts, keys and
// values), each stamped with its own CreateTime: the i-th record of
// partition p of the k-th data topic at base + k s + i×10 ms + p ms. A
// timestamp translation needs timestamps that tell records apart, which
// records produced in one burst do not.
func MigrationSpec(base time.Time) (spec Spec, fill func(ctx context.Context, cl *kgo.Client) error) {
	spec = DefaultSpec()
	var data []TopicSpec
	for i, ts := range spec.ExtraTopics {
		if ts.Records > 0 {
			data = append(data, ts)
			spec.ExtraTopics[i].Records = 0
		}
	}
	fill = func(ctx context.Context, cl *kgo.Client) error {
		pc, err := kgo.NewClient(append(cl.Opts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer pc.Close()
		var rs []*kgo.Record
		for k, ts := range data {
			for p := range ts.Partitions {
				for i := range ts.Records {
					rs = append(rs, &kgo.Record{
						Topic: ts.Name, Partition: p,
						Key:       fmt.Appendf(nil, `{"id":"%s-%d-%d"}`, ts.Name, p, i),
						Value:     fmt.Appendf(nil, `{"seq":%d,"partition":%d}`, i, p),
						Timestamp: base.Add(time.Duration(k)*time.Second + time.Duration(i)*10*time.Millisecond + time.Duration(p)*time.Millisecond),
					})
				}
			}
		}
		if err := pc.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return fmt.Errorf("fill data topics: %w", err)
		}
		return nil
	}
	return spec, fill
}
