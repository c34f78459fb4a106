package capture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/retry"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
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
func (c *Capturer) captureLastConsumed(ctx context.Context, groups []snapshot.SinkGroup) (warnings []string) {
	// The positions, each once (groups reading a partition at the same
	// offset share it): a sorted slice, not a map of them all (a map holds
	// about twice the slice's memory).
	var want []sinkPos
	for _, g := range groups {
		for _, o := range g.Offsets {
			if o.Offset > 0 {
				want = append(want, sinkPos{o.Topic, o.Partition, o.Offset})
			}
		}
	}
	slices.SortFunc(want, compareSinkPos)
	want = slices.Compact(want)
	// found is sized by what is found, not by what is asked: a topic
	// whose records cannot be read leaves it empty.
	found := make(map[sinkPos]snapshot.LastConsumed, len(c.lastConsumed))
	fetch := want[:0]
	for _, p := range want {
		if lc, ok := c.lastConsumed[p]; ok {
			found[p] = lc
		} else {
			fetch = append(fetch, p)
		}
	}
	failed := map[string]*sinkFailures{}
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
		f := failed[t]
		what := fmt.Sprintf("the last consumed record of %d partitions was not read", f.n)
		if f.n == 1 {
			what = "the last consumed record of 1 partition was not read"
		}
		warnings = append(warnings, fmt.Sprintf("sink topic %q: %s (%s): restore --translate timestamp cannot translate them", t, what, strings.Join(sortedKeysOf(f.whys), "; ")))
	}
	return warnings
}

// sinkFailures are the sink partitions of one topic whose last consumed
// record was not read: how many, and the distinct reasons.
type sinkFailures struct {
	n    int
	whys map[string]struct{}
}

func compareSinkPos(a, b sinkPos) int {
	return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part), cmp.Compare(a.offset, b.offset))
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
func readLastConsumed(ctx context.Context, adm *kadm.Client, cl *kgo.Client, ps []sinkPos, found map[sinkPos]snapshot.LastConsumed, failed map[string]*sinkFailures) {
	fail := func(p sinkPos, format string, args ...any) {
		why := format // a reason without arguments is one string, not one per partition
		if len(args) > 0 {
			why = fmt.Sprintf(format, args...)
		}
		f := failed[p.topic]
		if f == nil {
			f = &sinkFailures{whys: map[string]struct{}{}}
			failed[p.topic] = f
		}
		f.n++
		f.whys[why] = struct{}{}
	}
	// A broker that went away or a leader that moved is asked again, with
	// fresh metadata, as the rest of a capture does.
	for attempt := 1; len(ps) > 0; attempt++ {
		retry := map[sinkPos]string{}
		var mu sync.Mutex
		retryf := func(p sinkPos, format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			retry[p] = fmt.Sprintf(format, args...)
		}
		readLastConsumedOnce(ctx, adm, cl, ps, lastResults{found, fail, retryf})
		if len(retry) == 0 {
			return
		}
		if attempt == sinkRetry.Tries || ctx.Err() != nil {
			for p, why := range retry {
				fail(p, "%s", why)
			}
			return
		}
		ps = slices.Collect(maps.Keys(retry))
		_ = sinkRetry.Wait(ctx, attempt) // a context that ended fails the next round
	}
}

// sinkRetry asks again for the positions a broker that went away or a
// leader that moved left unread: five rounds in all.
var sinkRetry = retry.Policy{Tries: 5, Step: 100 * time.Millisecond}

// readLastConsumedOnce is one attempt of readLastConsumed: what cannot be
// read for good goes to fail, what may work on a retry to retry.
func readLastConsumedOnce(ctx context.Context, adm *kadm.Client, cl *kgo.Client, ps []sinkPos, out lastResults) {
	found, fail, retry := out.found, out.fail, out.retry
	var topics []string
	for _, p := range ps {
		if !slices.Contains(topics, p.topic) {
			topics = append(topics, p.topic)
		}
	}
	sort.Strings(topics)
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		for _, p := range ps {
			retry(p, "read metadata: %v", err)
		}
		return
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	var ends kadm.ListedOffsets
	if err == nil {
		ends, err = adm.ListEndOffsets(ctx, topics...)
	}
	if err != nil {
		for _, p := range ps {
			retry(p, "list offsets: %v", err)
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
		switch {
		case ok && pd.Err != nil && kerr.IsRetriable(pd.Err) && !errors.Is(pd.Err, kerr.ReplicaNotAvailable):
			retry(p, "partition metadata: %v", pd.Err)
			continue
		case !ok || pd.Err != nil && !errors.Is(pd.Err, kerr.ReplicaNotAvailable):
			fail(p, "partition metadata: %v", orMissing(pd.Err))
			continue
		}
		if e, ok := ends.Lookup(p.topic, p.part); ok && e.Err == nil && p.offset > e.Offset {
			fail(p, "the committed offset is past the log end")
			continue
		}
		if s, ok := starts.Lookup(p.topic, p.part); ok && s.Err == nil && p.offset <= s.Offset {
			found[p] = snapshot.LastConsumed{Offset: -1} // everything consumed is gone
			continue
		}
		byLeader[pd.Leader] = append(byLeader[pd.Leader], p)
	}
	ids := map[string][16]byte{}
	for name, t := range md.Topics {
		ids[name] = [16]byte(t.ID)
	}
	// One goroutine per leader; found and fail are shared.
	var mu sync.Mutex
	var wg sync.WaitGroup
	for leader, lps := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := map[sinkPos]snapshot.LastConsumed{}
			var whys [][2]any
			lfail := func(p sinkPos, format string, args ...any) {
				whys = append(whys, [2]any{p, fmt.Sprintf(format, args...)})
			}
			r := &leaderRead{cl: cl, leader: leader, ids: ids, lastResults: lastResults{got, lfail, retry}}
			r.run(ctx, lps)
			mu.Lock()
			defer mu.Unlock()
			maps.Copy(found, got)
			for _, w := range whys {
				fail(w[0].(sinkPos), "%s", w[1])
			}
		}()
	}
	wg.Wait()
}

// leaderRead is the reading of the positions one broker leads: where what
// is read goes (found, fail for good, retry for the next round), the
// topics' IDs, and the positions still pending per partition.
type leaderRead struct {
	cl     *kgo.Client
	leader int32
	ids    map[string][16]byte
	dec    kgo.Decompressor
	lastResults
	pending map[topicPartition][]sinkPos
}

// lastResults is where a reading of last records puts what it learns of
// each position: found, failed for good, or to retry in the next round.
type lastResults struct {
	found       map[sinkPos]snapshot.LastConsumed
	fail, retry func(sinkPos, string, ...any)
}

// run reads the positions ps led by r.leader. A Fetch names each
// partition once, at its lowest position still unread; what comes back
// (whole batches, up to lastPartMaxBytes) resolves every position of the
// partition it reaches, so positions of one partition (groups reading it
// at other offsets) take more rounds only when they lie far apart. A
// partition the broker truncated (its batch was larger than the partition
// limit and it was not first) is asked again alone: the first partition
// of a fetch always gets a whole batch.
func (r *leaderRead) run(ctx context.Context, ps []sinkPos) {
	pending := map[topicPartition][]sinkPos{}
	r.pending = pending
	for _, p := range ps {
		tp := topicPartition{p.topic, p.part}
		pending[tp] = append(pending[tp], p)
	}
	for _, q := range pending {
		slices.SortFunc(q, func(a, b sinkPos) int { return cmp.Compare(a.offset, b.offset) })
	}
	r.dec = kgo.DefaultDecompressor()
	alone := map[topicPartition]bool{}
	for len(pending) > 0 {
		var batch, single []topicPartition
		for tp := range pending {
			if alone[tp] {
				single = append(single, tp)
			} else {
				batch = append(batch, tp)
			}
		}
		slices.SortFunc(batch, func(a, b topicPartition) int {
			return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part))
		})
		var chunks [][]topicPartition
		for c := range slices.Chunk(batch, lastFetchBatch) {
			chunks = append(chunks, c)
		}
		for _, tp := range single {
			chunks = append(chunks, []topicPartition{tp})
		}
		for _, chunk := range chunks {
			for _, tp := range r.fetch(ctx, chunk) {
				if alone[tp] || len(chunk) == 1 {
					for _, p := range pending[tp] {
						r.fail(p, "no record before offset %d came back", p.offset)
					}
					delete(pending, tp)
					continue
				}
				alone[tp] = true
			}
		}
	}
}

// fetch sends one Fetch to the leader for the partitions, each at its
// lowest pending position, puts what it finds into found, fails what
// cannot be read (removing both from pending), and returns the partitions
// of which nothing came back.
func (r *leaderRead) fetch(ctx context.Context, tps []topicPartition) (empty []topicPartition) {
	pending, leader := r.pending, r.leader
	// Nothing the broker said: every position may work on a retry.
	failAll := func(format string, args ...any) []topicPartition {
		for _, tp := range tps {
			for _, p := range pending[tp] {
				r.retry(p, format, args...)
			}
			delete(pending, tp)
		}
		return nil
	}
	if leader < 0 {
		return failAll("the partition has no leader")
	}
	f := kread.NewFetch(kread.ReadUncommitted, 0, lastFetchMaxBytes, lastPartMaxBytes)
	for _, tp := range tps {
		f.Add(tp.topic, r.ids[tp.topic], tp.part, pending[tp][0].offset-1)
	}
	resp, err := f.Send(ctx, r.cl, leader)
	if err != nil {
		return failAll("fetch from broker %d: %v", leader, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && kerr.IsRetriable(err) {
		return failAll("fetch from broker %d: %v", leader, err)
	} else if err != nil {
		for _, tp := range tps {
			for _, p := range pending[tp] {
				r.fail(p, "fetch from broker %d: %v", leader, err)
			}
			delete(pending, tp)
		}
		return nil
	}
	answered := map[topicPartition]bool{}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		name := f.TopicOf(rt)
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			tp := topicPartition{name, rp.Partition}
			if _, ok := pending[tp]; !ok || answered[tp] || !slices.Contains(tps, tp) {
				continue
			}
			answered[tp] = true
			if !r.resolve(tp, rp) {
				empty = append(empty, tp)
			}
		}
	}
	for _, tp := range tps {
		if _, ok := pending[tp]; ok && !answered[tp] {
			empty = append(empty, tp)
		}
	}
	return empty
}

// resolve settles the pending positions of tp that the fetched records
// reach, and reports whether any record came back.
func (r *leaderRead) resolve(tp topicPartition, rp *kmsg.FetchResponseTopicPartition) bool {
	pending := r.pending
	q := pending[tp]
	first := q[0]
	// Offset 0 keeps the whole batch holding offset-1: under compaction
	// the record consumed last may sit below it.
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset: 0, IsolationLevel: kgo.ReadUncommitted(), Topic: tp.topic, Partition: tp.part,
	}, rp, r.dec, nil)
	settle := func(n int) {
		if pending[tp] = q[n:]; len(pending[tp]) == 0 {
			delete(pending, tp)
		}
	}
	switch {
	case fp.Err != nil && errors.Is(fp.Err, kerr.OffsetOutOfRange) && rp.LogStartOffset >= first.offset:
		r.found[first] = snapshot.LastConsumed{Offset: -1}
		settle(1)
		return true
	case fp.Err != nil && kerr.IsRetriable(fp.Err):
		for _, p := range q {
			r.retry(p, "fetch at offset %d: %v", p.offset-1, fp.Err)
		}
		settle(len(q))
		return true
	case fp.Err != nil:
		r.fail(first, "fetch at offset %d: %v", first.offset-1, fp.Err)
		settle(1)
		return true
	case len(fp.Records) == 0 && rp.HighWatermark < first.offset:
		r.fail(first, "the log ends at %d, before offset %d-1", rp.HighWatermark, first.offset)
		settle(1)
		return true
	case len(fp.Records) == 0:
		return false
	}
	// The records are whole from the fetch offset to the last one: every
	// position up to one past it is settled by them.
	lastOff := fp.Records[len(fp.Records)-1].Offset
	n, j := 0, -1
	for ; n < len(q) && q[n].offset-1 <= lastOff; n++ {
		for j+1 < len(fp.Records) && fp.Records[j+1].Offset < q[n].offset {
			j++
		}
		if j < 0 {
			r.fail(q[n], "no record before offset %d in the batch holding it (compacted away)", q[n].offset)
			continue
		}
		rec := fp.Records[j]
		r.found[q[n]] = snapshot.LastConsumed{Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(), LogAppendTime: rec.Attrs.TimestampType() == 1}
	}
	if n == 0 {
		r.fail(first, "no record at or after offset %d-1 came back", first.offset)
		n = 1
	}
	settle(n)
	return true
}

type topicPartition struct {
	topic string
	part  int32
}

func orMissing(err error) error {
	if err == nil {
		return errors.New("not in the answer")
	}
	return err
}
