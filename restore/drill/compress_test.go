package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// smallBenchState is a state shaped as bench/cluster seeds it, small
// enough for a test: 2,000 source keys of 1,000 connectors on 25
// partitions, and 4 sink groups of 50 partitions.
func smallBenchState() *snapshot.Snapshot { return benchState(2000, 4) }

// drillWith drills state into the embedded scratch cluster, without the
// completeness check, calling plant between the restore and the read-back.
func drillWith(t *testing.T, state *snapshot.Snapshot, plant func(context.Context, *kgo.Client)) *Report {
	t.Helper()
	rep, err := Run(t.Context(), Env{}, Request{State: state, Named: State{Kind: "capture", At: state.CreatedAt},
		SkipComplete: "test", ToolVersion: "test", afterRestoreForTests: plant})
	if err != nil {
		t.Fatalf("drill: %v", err)
	}
	return rep
}

// batchCodecs fetches every partition of topic from the start, raw, from
// its leader, and
// returns the compression codec of each data batch (attributes & 7) and
// the bytes of those batches.
func batchCodecs(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, parts int32) (codecs map[int8]int, size int) {
	t.Helper()
	codecs = map[int8]int{}
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, td[topic].Err)
	}
	for p := range parts {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis, req.MaxBytes = 0, 64<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, td[topic].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes = p, 64<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kr, err := cl.Broker(int(td[topic].Partitions[p].Leader)).Request(ctx, req)
		resp, _ := kr.(*kmsg.FetchResponse)
		if err != nil {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		}
		for _, tr := range resp.Topics {
			for _, pr := range tr.Partitions {
				if pr.ErrorCode != 0 {
					t.Fatalf("fetch %s/%d: error code %d", topic, p, pr.ErrorCode)
				}
				for raw := pr.RecordBatches; len(raw) > 0; {
					var b kmsg.RecordBatch
					if err := b.ReadFrom(raw); err != nil {
						t.Fatalf("read a batch of %s/%d: %v", topic, p, err)
					}
					n := 12 + int(b.Length)
					raw = raw[n:]
					if b.Attributes&0x20 != 0 { // a transaction marker
						continue
					}
					codecs[int8(b.Attributes&7)]++
					size += n
				}
			}
		}
	}
	return codecs, size
}

// The restore into the embedded scratch cluster writes compressed batches
// (the scratch cluster's copy is a fraction of the state's bytes), and the
// drill still reads back every key and group and passes.
func TestDrillScratchCopyIsCompressed(t *testing.T) {
	state := smallBenchState()
	var raw int
	for _, o := range state.SourceTable().Collect() {
		raw += len(o.Key) + len(o.Value)
	}
	var codecs map[int8]int
	var size int
	rep := drillWith(t, state, func(ctx context.Context, cl *kgo.Client) {
		codecs, size = batchCodecs(t, ctx, cl, snapshot.DefaultOffsetsTopic, 25)
	})
	if rep.Result != Passed {
		t.Fatalf("result %s: %+v", rep.Result, rep.Checks)
	}
	const zstd = 4 // the codec bits of a zstd batch
	if len(codecs) != 1 || codecs[zstd] == 0 {
		t.Fatalf("batch codecs in the scratch cluster %v, want zstd (%d) only", codecs, zstd)
	}
	if size == 0 || size*2 > raw {
		t.Fatalf("the scratch cluster holds %d bytes of batches for %d bytes of keys and values: not compressed", size, raw)
	}
	if got := rep.Check(CheckRestorable).Summary; !strings.Contains(got, "2000 source keys") {
		t.Errorf("summary %q does not count the 2000 keys", got)
	}
}

// Faults planted in the scratch cluster after the restore, in compressed
// batches, each fail the drill, named: a value with one byte flipped, a key
// removed (a tombstone), a copy of a key on a partition murmur2 does not
// put it on, and a sink group whose offsets were deleted.
func TestDrillCompressedReadBackFindsPlantedFaults(t *testing.T) {
	state := smallBenchState()
	flipped, gone, moved := *state.SourceTable().At(10), *state.SourceTable().At(20), *state.SourceTable().At(30)
	wrongPart := (moved.Partition + 1) % 25
	// Five offsets in the group lost, so that every failure is listed
	// (a check lists maxFailures).
	state.SinkGroups[1].Offsets = state.SinkGroups[1].Offsets[:5]
	lostGroup := state.SinkGroups[1]
	rep := drillWith(t, state, func(ctx context.Context, cl *kgo.Client) {
		pcl, err := kgo.NewClient(append(slices.Clone(cl.Opts()),
			kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			t.Fatal(err)
		}
		defer pcl.Close()
		value := slices.Clone(flipped.Value)
		value[len(value)-2] ^= 0x01
		res := pcl.ProduceSync(ctx,
			&kgo.Record{Topic: flipped.Topic, Partition: flipped.Partition, Key: flipped.Key, Value: value},
			&kgo.Record{Topic: gone.Topic, Partition: gone.Partition, Key: gone.Key},
			&kgo.Record{Topic: moved.Topic, Partition: wrongPart, Key: moved.Key, Value: moved.Value})
		if err := res.FirstErr(); err != nil {
			t.Fatalf("plant records: %v", err)
		}
		if _, err := kadm.NewClient(cl).DeleteGroups(ctx, lostGroup.Group); err != nil {
			t.Fatalf("delete group %s: %v", lostGroup.Group, err)
		}
	})
	if rep.Result != Failed {
		t.Fatalf("result %s, want failed", rep.Result)
	}
	key := func(fs []Failure, k []byte) bool {
		return slices.ContainsFunc(fs, func(f Failure) bool { return strings.Contains(f.Detail, fmt.Sprintf("%q", k)) })
	}
	if fs := failuresOf(rep, CheckRestorable, CauseValueDiffers); len(fs) != 1 || !key(fs, flipped.Key) || fs[0].Connector != flipped.Connector {
		t.Errorf("value-differs failures %+v, want the flipped key %s", fs, flipped.Key)
	}
	if fs := failuresOf(rep, CheckRestorable, CauseKeyMissing); len(fs) != 1 || !key(fs, gone.Key) || fs[0].Partition != gone.Partition {
		t.Errorf("key-missing failures %+v, want the removed key %s", fs, gone.Key)
	}
	if fs := failuresOf(rep, CheckRestorable, CauseUnexpectedKey); len(fs) != 1 || !key(fs, moved.Key) || fs[0].Partition != wrongPart {
		t.Errorf("unexpected-key failures %+v, want %s on partition %d", fs, moved.Key, wrongPart)
	}
	fs := failuresOf(rep, CheckRestorable, CauseSinkDiffers)
	if len(fs) != len(lostGroup.Offsets) || slices.ContainsFunc(fs, func(f Failure) bool { return f.Group != lostGroup.Group }) {
		t.Errorf("sink-differs failures %d (%+v), want the %d offsets of group %s", len(fs), fs, len(lostGroup.Offsets), lostGroup.Group)
	}
	if n := len(rep.Check(CheckRestorable).Failures); n != 3+len(lostGroup.Offsets) {
		t.Errorf("%d failures, want %d: %+v", n, 3+len(lostGroup.Offsets), rep.Check(CheckRestorable).Failures)
	}
}
