package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file reads compacted topics to a fixed end with read_committed
// isolation, keeping the last value of every key per partition. It speaks
// the Fetch API directly instead of running a kgo consumer: a read_committed
// consumer cannot tell that it has reached the last stable offset when the
// records just below it are aborted (they are never returned), while
// kgo.ProcessFetchPartition gives the exact next offset after every fetch.

// record is the winning write of one key in one partition.
type record struct {
	value  []byte
	offset int64
}

// partView is what has been read of one partition: the live keys and the
// next offset to read.
type partView struct {
	start int64 // log start offset when last read
	next  int64
	keys  map[string]record
	nulls int // records with a null key, which no task can look up
}

// topicView is what has been read of one topic. A Capturer keeps views
// between runs to read only what is new.
type topicView struct {
	name  string
	id    kadm.TopicID
	parts map[int32]*partView
	// onRecord, when set, is called for every record in log order instead
	// of maintaining keys (the config topic is a state machine, not a map).
	onRecord func(r *kgo.Record)
}

func newTopicView(name string) *topicView {
	return &topicView{name: name, parts: make(map[int32]*partView)}
}

// cursor is one partition still to be read up to end.
type cursor struct {
	view *topicView
	part int32
	pv   *partView
	end  int64
}

// bounds is the range a partition must be read over: from its log start
// (used when the view has nothing yet) up to end, exclusive.
type bounds struct {
	start, end int64
}

// fetchMaxBytes bounds one fetch response; partMaxBytes one partition of it.
const (
	fetchMaxBytes = 64 << 20
	partMaxBytes  = 16 << 20
)

// readTopics brings every view up to the given ends. leaders maps topic and
// partition to the leader broker; it is refreshed on leadership errors.
// A view whose partition moved under it (log start past its position, or
// end before it) is reset and read from the start, and reported.
func readTopics(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*topicView, ends map[string]map[int32]bounds) (resets []string, err error) {
	topicNames := make([]string, 0, len(views))
	byName := make(map[string]*topicView, len(views))
	for _, v := range views {
		topicNames = append(topicNames, v.name)
		byName[v.name] = v
	}
	decompressor := kgo.DefaultDecompressor()

	var (
		leaders  map[string]map[int32]int32
		attempts int
		first    = true
	)
	refresh := func() error {
		defer func() { first = false }()
		md, err := adm.Metadata(ctx, topicNames...)
		if err != nil {
			return fmt.Errorf("read metadata of %v: %w", topicNames, err)
		}
		leaders = make(map[string]map[int32]int32)
		for _, t := range md.Topics {
			if t.Err != nil {
				return fmt.Errorf("read metadata of topic %q: %w", t.Topic, t.Err)
			}
			if v := byName[t.Topic]; v != nil {
				if v.id != (kadm.TopicID{}) && t.ID != (kadm.TopicID{}) && v.id != t.ID {
					if !first {
						return fmt.Errorf("%w: topic %q was recreated during the read", errTopicChanged, t.Topic)
					}
					// Recreated since the last run: nothing kept is valid.
					v.parts = make(map[int32]*partView)
					resets = append(resets, fmt.Sprintf("%s: topic was recreated", t.Topic))
				}
				v.id = t.ID
			}
			leaders[t.Topic] = make(map[int32]int32)
			for p, d := range t.Partitions {
				leaders[t.Topic][p] = d.Leader
			}
		}
		return nil
	}
	if err := refresh(); err != nil {
		return resets, err
	}

	var pending []*cursor
	for _, v := range views {
		for p, b := range ends[v.name] {
			pv := v.parts[p]
			// Records below a log start that moved are gone, and so are
			// the keys they held: only a read from the new start is exact.
			if pv == nil || b.start > pv.start || pv.next > b.end {
				if pv != nil {
					resets = append(resets, fmt.Sprintf("%s/%d: log moved from [%d, %d) to [%d, %d)", v.name, p, pv.start, pv.next, b.start, b.end))
				}
				pv = &partView{start: b.start, next: b.start, keys: make(map[string]record)}
				v.parts[p] = pv
			}
			if pv.next < b.end {
				pending = append(pending, &cursor{view: v, part: p, pv: pv, end: b.end})
			}
		}
	}

	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return resets, err
		}
		byLeader := make(map[int32][]*cursor)
		for _, c := range pending {
			byLeader[leaders[c.view.name][c.part]] = append(byLeader[leaders[c.view.name][c.part]], c)
		}
		var (
			mu       sync.Mutex
			wg       sync.WaitGroup
			firstErr error
			retryErr error
		)
		for leader, cs := range byLeader {
			wg.Add(1)
			go func(leader int32, cs []*cursor) {
				defer wg.Done()
				retry, err := fetchOnce(ctx, cl, leader, cs, decompressor)
				mu.Lock()
				defer mu.Unlock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if retry != nil {
					retryErr = retry
				}
			}(leader, cs)
		}
		wg.Wait()
		if firstErr != nil {
			return resets, firstErr
		}
		if retryErr != nil {
			attempts++
			if attempts > 20 {
				return resets, fmt.Errorf("read topics %v: gave up after %d attempts: %w; check broker health", topicNames, attempts, retryErr)
			}
			select {
			case <-ctx.Done():
				return resets, ctx.Err()
			case <-time.After(time.Duration(attempts) * 100 * time.Millisecond):
			}
			if err := refresh(); err != nil {
				return resets, err
			}
		}
		next := pending[:0]
		for _, c := range pending {
			if c.pv.next < c.end {
				next = append(next, c)
			}
		}
		pending = next
	}
	return resets, nil
}

var errTopicChanged = errors.New("topic changed")

// fetchOnce sends one Fetch to leader for the cursors and applies what comes
// back. It reports retry when leadership must be refreshed first.
func fetchOnce(ctx context.Context, cl *kgo.Client, leader int32, cs []*cursor, dec kgo.Decompressor) (retry, err error) {
	if leader < 0 {
		return errors.New("partition has no leader"), nil
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 500
	req.MinBytes = 1
	req.MaxBytes = fetchMaxBytes
	req.IsolationLevel = 1 // read_committed
	req.SessionEpoch = -1  // no fetch session
	type key struct {
		topic string
		part  int32
	}
	index := make(map[key]*cursor, len(cs))
	topics := make(map[string]int)
	for _, c := range cs {
		index[key{c.view.name, c.part}] = c
		i, ok := topics[c.view.name]
		if !ok {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = c.view.name
			rt.TopicID = c.view.id
			req.Topics = append(req.Topics, rt)
			i = len(req.Topics) - 1
			topics[c.view.name] = i
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = c.part
		rp.FetchOffset = c.pv.next
		rp.PartitionMaxBytes = partMaxBytes
		rp.CurrentLeaderEpoch = -1
		rp.LogStartOffset = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A broker that went away: refresh leadership and try again.
		return fmt.Errorf("fetch from broker %d: %w", leader, err), nil
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if kerr.IsRetriable(err) {
			return fmt.Errorf("fetch from broker %d: %w", leader, err), nil
		}
		return nil, fmt.Errorf("fetch from broker %d: %w", leader, err)
	}
	byID := make(map[[16]byte]string)
	for _, c := range cs {
		byID[c.view.id] = c.view.name
	}
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		name := rt.Topic
		if name == "" {
			name = byID[rt.TopicID]
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			c := index[key{name, rp.Partition}]
			if c == nil {
				continue
			}
			fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Offset:         c.pv.next,
				IsolationLevel: kgo.ReadCommitted(),
				Topic:          name,
				Partition:      rp.Partition,
			}, rp, dec, nil)
			if fp.Err != nil {
				switch {
				case errors.Is(fp.Err, kerr.OffsetOutOfRange):
					// The log start moved past us (retention or
					// DeleteRecords): nothing below it exists any more.
					if rp.LogStartOffset > c.pv.next {
						// What was read below it may be gone too: start over.
						*c.pv = partView{start: rp.LogStartOffset, next: rp.LogStartOffset, keys: make(map[string]record)}
						continue
					}
					return nil, fmt.Errorf("fetch %s/%d at offset %d: %w", name, rp.Partition, c.pv.next, fp.Err)
				case kerr.IsRetriable(fp.Err):
					retry = fmt.Errorf("fetch %s/%d: %w", name, rp.Partition, fp.Err)
					continue
				default:
					return nil, fmt.Errorf("fetch %s/%d at offset %d: %w", name, rp.Partition, c.pv.next, fp.Err)
				}
			}
			for _, r := range fp.Records {
				if r.Offset >= c.end {
					break
				}
				c.view.apply(c.pv, r)
			}
			if next > c.pv.next {
				c.pv.next = min(next, c.end)
			}
		}
	}
	return retry, nil
}

// apply applies one committed record in log order.
func (v *topicView) apply(pv *partView, r *kgo.Record) {
	if v.onRecord != nil {
		v.onRecord(r)
		return
	}
	if r.Key == nil {
		pv.nulls++
		return
	}
	if r.Value == nil {
		delete(pv.keys, string(r.Key))
		return
	}
	pv.keys[string(r.Key)] = record{value: r.Value, offset: r.Offset}
}

// listBounds returns, for each existing topic, its partitions' log start and
// last stable offset. Missing topics are returned separately.
func listBounds(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[int32]bounds, []string, error) {
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("list start offsets of %v: %w", topics, err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("list end offsets of %v: %w", topics, err)
	}
	out := make(map[string]map[int32]bounds)
	var missing []string
	for _, t := range topics {
		sp, eps := starts[t], ends[t]
		if len(sp) == 0 || len(eps) == 0 {
			missing = append(missing, t)
			continue
		}
		m := make(map[int32]bounds, len(eps))
		for p, e := range eps {
			if e.Err != nil {
				if errors.Is(e.Err, kerr.UnknownTopicOrPartition) {
					missing = append(missing, t)
					m = nil
					break
				}
				return nil, nil, fmt.Errorf("list end offset of %s/%d: %w", t, p, e.Err)
			}
			s, ok := sp[p]
			if !ok || s.Err != nil {
				serr := fmt.Errorf("no start offset returned")
				if ok {
					serr = s.Err
				}
				return nil, nil, fmt.Errorf("list start offset of %s/%d: %w", t, p, serr)
			}
			m[p] = bounds{start: s.Offset, end: e.Offset}
		}
		if m != nil {
			out[t] = m
		}
	}
	sort.Strings(missing)
	return out, missing, nil
}
