package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Reading the last consumed record of every sink partition: the record
// before the committed offset, whose timestamp lets a restore into another
// cluster find the same record there (SinkOffset.LastConsumed). One Fetch
// per partition leader for up to lastFetchBatch partitions at a time, each
// asking for a small slice of the log at offset-1.

const (
	lastFetchBatch    = 200
	lastPartMaxBytes  = 32 << 10
	lastFetchMaxBytes = 4 << 20
)

// sinkPos is one committed position of a sink partition.
type sinkPos struct {
	topic  string
	part   int32
	offset int64
}

// captureLastConsumed sets LastConsumed on the sink offsets of groups. It
// is best effort: a partition whose record cannot be read (no READ ACL on
// the topic, a broker error) keeps none, and the warnings say which, so
// that a snapshot never fails for want of it. Positions read by the last
// Capture at the same offset are reused, not fetched again.
func (c *Capturer) captureLastConsumed(ctx context.Context, groups []SinkGroup) (warnings []string) {
	want := map[sinkPos]bool{}
	for _, g := range groups {
		for _, o := range g.Offsets {
			if o.Offset > 0 {
				want[sinkPos{o.Topic, o.Partition, o.Offset}] = true
			}
		}
	}
	found := make(map[sinkPos]LastConsumed, len(want))
	var fetch []sinkPos
	for p := range want {
		if lc, ok := c.lastConsumed[p]; ok {
			found[p] = lc
		} else {
			fetch = append(fetch, p)
		}
	}
	failed := map[string][]string{} // topic -> why, per partition
	if len(fetch) > 0 {
		readLastConsumed(ctx, c.adm, c.cl, fetch, found, failed)
	}
	c.lastConsumed = found
	for i := range groups {
		for j := range groups[i].Offsets {
			o := &groups[i].Offsets[j]
			if lc, ok := found[sinkPos{o.Topic, o.Partition, o.Offset}]; ok {
				lc := lc
				o.LastConsumed = &lc
			}
		}
	}
	for _, t := range sortedKeysOf(failed) {
		whys := failed[t]
		slices.Sort(whys)
		warnings = append(warnings, fmt.Sprintf("sink topic %q: the last consumed record of %d partitions was not read (%s): restore --translate timestamp cannot translate them", t, len(whys), strings.Join(slices.Compact(whys), "; ")))
	}
	return warnings
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readLastConsumed fetches the record before each position into found, and
// records in failed why one could not be read.
func readLastConsumed(ctx context.Context, adm *kadm.Client, cl *kgo.Client, ps []sinkPos, found map[sinkPos]LastConsumed, failed map[string][]string) {
	var topics []string
	for _, p := range ps {
		if !slices.Contains(topics, p.topic) {
			topics = append(topics, p.topic)
		}
	}
	sort.Strings(topics)
	fail := func(p sinkPos, format string, args ...any) {
		failed[p.topic] = append(failed[p.topic], fmt.Sprintf(format, args...))
	}
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		for _, p := range ps {
			fail(p, "read metadata: %v", err)
		}
		return
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		for _, p := range ps {
			fail(p, "list start offsets: %v", err)
		}
		return
	}
	byLeader := map[int32][]sinkPos{}
	for _, p := range ps {
		t, ok := md.Topics[p.topic]
		if !ok || t.Err != nil {
			fail(p, "topic metadata: %v", orMissing(t.Err))
			continue
		}
		pd, ok := t.Partitions[p.part]
		if !ok || pd.Err != nil && !errors.Is(pd.Err, kerr.ReplicaNotAvailable) {
			fail(p, "partition metadata: %v", orMissing(pd.Err))
			continue
		}
		if s, ok := starts.Lookup(p.topic, p.part); ok && s.Err == nil && p.offset <= s.Offset {
			found[p] = LastConsumed{Offset: -1} // everything consumed is gone
			continue
		}
		byLeader[pd.Leader] = append(byLeader[pd.Leader], p)
	}
	ids := map[string][16]byte{}
	for name, t := range md.Topics {
		ids[name] = [16]byte(t.ID)
	}
	dec := kgo.DefaultDecompressor()
	for leader, lps := range byLeader {
		slices.SortFunc(lps, func(a, b sinkPos) int {
			if c := strings.Compare(a.topic, b.topic); c != 0 {
				return c
			}
			return cmp.Compare(a.part, b.part)
		})
		var again []sinkPos
		for chunk := range slices.Chunk(lps, lastFetchBatch) {
			again = append(again, fetchLast(ctx, cl, leader, chunk, ids, dec, found, fail)...)
		}
		// A partition the broker truncated (its batch was larger than the
		// partition limit and it was not first) is asked again alone: the
		// first partition of a fetch always gets a whole batch.
		for _, p := range again {
			for _, p := range fetchLast(ctx, cl, leader, []sinkPos{p}, ids, dec, found, fail) {
				fail(p, "no record before offset %d came back", p.offset)
			}
		}
	}
}

func orMissing(err error) error {
	if err == nil {
		return errors.New("not in the answer")
	}
	return err
}

// fetchLast sends one Fetch for the positions to leader, puts what it
// finds into found, fails what cannot be read, and returns the positions
// to ask again.
func fetchLast(ctx context.Context, cl *kgo.Client, leader int32, ps []sinkPos, ids map[string][16]byte, dec kgo.Decompressor, found map[sinkPos]LastConsumed, fail func(sinkPos, string, ...any)) (again []sinkPos) {
	failAll := func(format string, args ...any) []sinkPos {
		for _, p := range ps {
			fail(p, format, args...)
		}
		return nil
	}
	if leader < 0 {
		return failAll("the partition has no leader")
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = lastFetchMaxBytes
	req.IsolationLevel = 0 // what a sink's consumer reads by default
	req.SessionEpoch = -1
	idx := map[string]int{}
	byPart := map[topicPartition]sinkPos{}
	for _, p := range ps {
		byPart[topicPartition{p.topic, p.part}] = p
		i, ok := idx[p.topic]
		if !ok {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = p.topic, ids[p.topic]
			req.Topics = append(req.Topics, rt)
			i = len(req.Topics) - 1
			idx[p.topic] = i
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p.part
		rp.FetchOffset = p.offset - 1
		rp.PartitionMaxBytes = lastPartMaxBytes
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return failAll("fetch from broker %d: %v", leader, err)
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return failAll("fetch from broker %d: %v", leader, err)
	}
	byID := map[[16]byte]string{}
	for name, id := range ids {
		byID[id] = name
	}
	answered := map[sinkPos]bool{}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		name := rt.Topic
		if name == "" {
			name = byID[rt.TopicID]
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			p, ok := byPart[topicPartition{name, rp.Partition}]
			if !ok || answered[p] {
				continue
			}
			answered[p] = true
			// Offset 0 keeps the whole batch holding offset-1: under
			// compaction the record consumed last may sit below it.
			fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Offset: 0, IsolationLevel: kgo.ReadUncommitted(), Topic: name, Partition: rp.Partition,
			}, rp, dec, nil)
			if fp.Err != nil {
				if errors.Is(fp.Err, kerr.OffsetOutOfRange) && rp.LogStartOffset >= p.offset {
					found[p] = LastConsumed{Offset: -1}
				} else {
					fail(p, "fetch at offset %d: %v", p.offset-1, fp.Err)
				}
				continue
			}
			var last *kgo.Record
			for _, r := range fp.Records {
				if r.Offset < p.offset {
					last = r
				}
			}
			switch {
			case last != nil:
				found[p] = LastConsumed{Offset: last.Offset, Timestamp: last.Timestamp.UnixMilli(), LogAppendTime: last.Attrs.TimestampType() == 1}
			case len(fp.Records) == 0:
				again = append(again, p) // truncated: ask alone
			default:
				fail(p, "no record before offset %d in the batch holding it (compacted away)", p.offset)
			}
		}
	}
	for _, p := range ps {
		if !answered[p] {
			again = append(again, p)
		}
	}
	return again
}

type topicPartition struct {
	topic string
	part  int32
}
