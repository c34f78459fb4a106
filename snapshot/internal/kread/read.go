package kread

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/retry"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file reads compacted topics to a fixed end with read_committed
// isolation, keeping the last value of every key per partition. It speaks
// the Fetch API directly instead of running a kgo consumer: a read_committed
// consumer cannot tell that it has reached the last stable offset when the
// records just below it are aborted (they are never returned), while
// kgo.ProcessFetchPartition gives the exact next offset after every fetch.
// Most partitions of a fetch are applied from their record batches
// directly (batches.go); kgo.ProcessFetchPartition takes the rest.

// cursor is one partition still to be read up to end.
type cursor struct {
	view *keyview.TopicView
	part int32
	pv   *keyview.PartView
	end  int64
	// notified: onDone was called for it (see ReadTopicsNotify).
	notified bool
}

// Bounds is the range a partition must be read over: from its log start
// (used when the view has nothing yet) up to end, exclusive.
type Bounds struct {
	Start, End int64
}

// fetchMaxBytes bounds one fetch response; partMaxBytes one partition of
// it. A partition's records are decoded all at once, so partMaxBytes bounds
// the records in flight per broker; with 4 MiB a response still holds
// several partitions and a read takes few round trips. A larger bound is
// no faster and holds more memory (the responses in flight are live when
// the collector runs); a smaller one is slower.
const (
	fetchMaxBytes = 4 << 20
	partMaxBytes  = 1 << 20
)

// ReadTopics brings every view up to the given ends. leaders maps topic and
// partition to the leader broker; it is refreshed on leadership errors.
// A view whose partition moved under it (log start past its position, or
// end before it) is reset and read from the start, and reported.
func ReadTopics(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*keyview.TopicView, ends map[string]map[int32]Bounds) (resets []string, err error) {
	return ReadTopicsNotify(ctx, cl, adm, views, ends, nil)
}

// ReadTopicsNotify is readTopics, calling onDone, when set, as each
// partition that had records to read reached its end; the partition is not
// read again, nor its view written, in this read. left is the share of the
// read's offsets still to read then (0 to 1). onDone is called from the
// goroutine reading the partition's leader, which waits meanwhile: it must
// return soon. It is called for every such partition of a read that
// succeeds, never twice for one.
func ReadTopicsNotify(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*keyview.TopicView, ends map[string]map[int32]Bounds, onDone func(v *keyview.TopicView, p int32, pv *keyview.PartView, left float64)) (resets []string, err error) {
	return readTopics(ctx, cl, adm, views, ends, onDone, ReadCommitted)
}

// ReadTopicsUncommitted is ReadTopics with read_uncommitted isolation, as
// a Connect worker without exactly-once source support reads its offsets
// topic: the records of aborted transactions are applied too, in log
// order. Read to the same ends as a read_committed read (ListBounds: the
// last stable offsets), the two views differ exactly where an aborted
// transaction's record is a key's last.
func ReadTopicsUncommitted(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*keyview.TopicView, ends map[string]map[int32]Bounds) (resets []string, err error) {
	return readTopics(ctx, cl, adm, views, ends, nil, ReadUncommitted)
}

func readTopics(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*keyview.TopicView, ends map[string]map[int32]Bounds, onDone func(v *keyview.TopicView, p int32, pv *keyview.PartView, left float64), isolation int8) (resets []string, err error) {
	r := &topicReader{cl: cl, adm: adm, byName: make(map[string]*keyview.TopicView, len(views)), decompressor: kgo.DefaultDecompressor(), first: true, onDone: onDone, isolation: isolation}
	r.topicNames = make([]string, 0, len(views))
	for _, v := range views {
		r.topicNames = append(r.topicNames, v.Name)
		r.byName[v.Name] = v
	}
	if err := r.refresh(ctx); err != nil {
		return r.resets, err
	}
	pending := r.cursors(views, ends)
	for _, c := range pending {
		r.total += c.end - c.pv.Next
	}

	// lastRetry is the last error retried: when time runs out, it is what
	// went wrong, not the deadline.
	var lastRetry error
	stopped := func(err error) error {
		if lastRetry != nil && ctx.Err() != nil {
			return fmt.Errorf("%w (while retrying: %w)", err, lastRetry)
		}
		return err
	}
	attempts := 0
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return r.resets, stopped(err)
		}
		firstErr, retryErr := r.fetchRound(ctx, pending)
		if firstErr != nil {
			return r.resets, stopped(firstErr)
		}
		if retryErr != nil {
			lastRetry = retryErr
			attempts++
			if attempts >= fetchRetry.Tries {
				return r.resets, fmt.Errorf("read topics %v: gave up after %d attempts: %w; check broker health", r.topicNames, attempts, retryErr)
			}
			if err := fetchRetry.Wait(ctx, attempts); err != nil {
				return r.resets, stopped(err)
			}
			if err := r.refresh(ctx); err != nil {
				return r.resets, stopped(err)
			}
		}
		next := pending[:0]
		for _, c := range pending {
			if c.pv.Next < c.end {
				next = append(next, c)
			} else {
				r.notify(c) // read by a fetch that also asked for a retry
			}
		}
		pending = next
	}
	return r.resets, nil
}

// topicReader is one readTopics' state.
type topicReader struct {
	cl           *kgo.Client
	adm          *kadm.Client
	topicNames   []string
	byName       map[string]*keyview.TopicView
	decompressor kgo.Decompressor
	// leaders maps topic and partition to the leader broker.
	leaders map[string]map[int32]int32
	// first is set until the first refresh is done.
	first  bool
	resets []string
	onDone func(v *keyview.TopicView, p int32, pv *keyview.PartView, left float64)
	// isolation is the Fetch isolation level: ReadCommitted or ReadUncommitted.
	isolation int8
	// total is the offsets to read, read those read so far.
	total int64
	read  atomic.Int64
}

// refresh reads the leaders, and resets a view whose topic was recreated
// since the last run (it fails when that happens during the read).
func (r *topicReader) refresh(ctx context.Context) error {
	defer func() { r.first = false }()
	md, err := r.adm.Metadata(ctx, r.topicNames...)
	if err != nil {
		return fmt.Errorf("read metadata of %v: %w", r.topicNames, err)
	}
	r.leaders = make(map[string]map[int32]int32)
	for _, t := range md.Topics {
		if t.Err != nil {
			return fmt.Errorf("read metadata of topic %q: %w", t.Topic, t.Err)
		}
		if v := r.byName[t.Topic]; v != nil {
			if v.ID != ([16]byte{}) && t.ID != (kadm.TopicID{}) && kadm.TopicID(v.ID) != t.ID {
				if !r.first {
					return fmt.Errorf("%w: topic %q was recreated during the read", ErrTopicChanged, t.Topic)
				}
				// Recreated since the last run: nothing kept is valid.
				v.Parts = make(map[int32]*keyview.PartView)
				r.resets = append(r.resets, fmt.Sprintf("%s: topic was recreated", t.Topic))
			}
			v.ID = t.ID
		}
		r.leaders[t.Topic] = make(map[int32]int32)
		for p, d := range t.Partitions {
			r.leaders[t.Topic][p] = d.Leader
		}
	}
	return nil
}

// cursors returns a cursor for every partition with records to read,
// resetting the partitions whose log moved.
func (r *topicReader) cursors(views []*keyview.TopicView, ends map[string]map[int32]Bounds) []*cursor {
	var pending []*cursor
	for _, v := range views {
		for p, b := range ends[v.Name] {
			pv := v.Parts[p]
			// Records below a log start that moved are gone, and so are
			// the keys they held: only a read from the new start is exact.
			if pv == nil || b.Start > pv.Start || pv.Next > b.End {
				if pv != nil {
					r.resets = append(r.resets, fmt.Sprintf("%s/%d: log moved from [%d, %d) to [%d, %d)", v.Name, p, pv.Start, pv.Next, b.Start, b.End))
				}
				pv = keyview.NewPartView(b.Start)
				v.Parts[p] = pv
			}
			// What was read before this read may have been handed out:
			// only values written from here on are overwritten in place.
			pv.From = pv.Next
			if pv.Next < b.End {
				pending = append(pending, &cursor{view: v, part: p, pv: pv, end: b.End})
			}
		}
	}
	return pending
}

// fetchRound reads the pending cursors, each leader in a loop of its own
// so that a slow broker never holds the others back, until its partitions
// are read or one of them needs a metadata refresh (retryErr).
func (r *topicReader) fetchRound(ctx context.Context, pending []*cursor) (firstErr, retryErr error) {
	byLeader := make(map[int32][]*cursor)
	for _, c := range pending {
		byLeader[r.leaders[c.view.Name][c.part]] = append(byLeader[r.leaders[c.view.Name][c.part]], c)
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return firstErr != nil
	}
	for leader, cs := range byLeader {
		wg.Add(1)
		go func(leader int32, cs []*cursor) {
			defer wg.Done()
			for len(cs) > 0 && !failed() {
				before := positionSum(cs)
				retry, err := fetchOnce(ctx, r.cl, leader, cs, r.decompressor, r.isolation)
				r.read.Add(positionSum(cs) - before)
				if err != nil || retry != nil {
					mu.Lock()
					if err != nil && firstErr == nil {
						firstErr = err
					}
					if retry != nil {
						retryErr = retry
					}
					mu.Unlock()
					return
				}
				cs = slices.DeleteFunc(cs, func(c *cursor) bool {
					r.notify(c)
					return c.pv.Next >= c.end
				})
			}
		}(leader, cs)
	}
	wg.Wait()
	return firstErr, retryErr
}

var ErrTopicChanged = errors.New("topic changed")

// notify calls onDone for c once, when it is read to its end. Only the
// goroutine reading c calls it.
func (r *topicReader) notify(c *cursor) {
	if r.onDone != nil && !c.notified && c.pv.Next >= c.end {
		c.notified = true
		left := 0.0
		if r.total > 0 {
			left = min(max(1-float64(r.read.Load())/float64(r.total), 0), 1)
		}
		r.onDone(c.view, c.part, c.pv, left)
	}
}

// positionSum is the sum of the positions of cs, which only the caller's
// goroutine moves.
func positionSum(cs []*cursor) int64 {
	var n int64
	for _, c := range cs {
		n += c.pv.Next
	}
	return n
}

// recordPools reuse the kgo.Record slices fetch processing decodes each
// batch into: a read allocates per batch only what the pool lacks, instead
// of a Record for every record read.
var recordPools = []kgo.Pool{new(recordPool)}

// recordPool is a kgo.PoolRecords: sync.Pools of record slices by size
// class (powers of two), so that a slice comes back for batches of about
// the same size.
type recordPool struct{ classes [24]sync.Pool }

// recordClass is the size class of slices of n records: capacity
// 1<<(class+6).
func recordClass(n int) int {
	c := 0
	for 64<<c < n {
		c++
	}
	return c
}

// GetRecords returns a slice of n records.
func (p *recordPool) GetRecords(n int) []kgo.Record {
	c := recordClass(n)
	if c >= len(p.classes) {
		return make([]kgo.Record, n)
	}
	if rs, ok := p.classes[c].Get().(*[]kgo.Record); ok {
		return (*rs)[:n]
	}
	return make([]kgo.Record, n, 64<<c)
}

// PutRecords takes back a slice of zeroed records.
func (p *recordPool) PutRecords(rs []kgo.Record) {
	if c := recordClass(cap(rs)); c < len(p.classes) && 64<<c == cap(rs) {
		p.classes[c].Put(&rs)
	}
}

// fetchOnce sends one Fetch to leader for the cursors and applies what comes
// back. It reports retry when leadership must be refreshed first.
func fetchOnce(ctx context.Context, cl *kgo.Client, leader int32, cs []*cursor, dec kgo.Decompressor, isolation int8) (retry, err error) {
	if leader < 0 {
		return errors.New("partition has no leader"), nil
	}
	f := NewFetch(isolation, 500*time.Millisecond, fetchMaxBytes, partMaxBytes)
	level := kgo.ReadCommitted()
	if isolation == ReadUncommitted {
		level = kgo.ReadUncommitted()
	}
	type key struct {
		topic string
		part  int32
	}
	index := make(map[key]*cursor, len(cs))
	for _, c := range cs {
		index[key{c.view.Name, c.part}] = c
		f.Add(c.view.Name, c.view.ID, c.part, c.pv.Next)
	}
	resp, err := f.Send(ctx, cl, leader)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A broker that went away: refresh leadership and try again.
		return fmt.Errorf("fetch from broker %d: %w", leader, err), nil
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if kerr.IsRetriable(err) {
			return fmt.Errorf("fetch from broker %d: %w", leader, err), nil
		}
		return nil, fmt.Errorf("fetch from broker %d: %w", leader, err)
	}
	var recs []batchRec
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		name := f.TopicOf(rt)
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			c := index[key{name, rp.Partition}]
			if c == nil {
				continue
			}
			var next int64
			var ok bool
			var kept int
			if next, kept, ok, recs = applyDirect(c, rp, dec, recs); ok {
				c.view.Count(kept, len(rp.RecordBatches))
				c.advance(next)
				continue
			}
			fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Offset:         c.pv.Next,
				IsolationLevel: level,
				Topic:          name,
				Partition:      rp.Partition,
				Pools:          recordPools,
			}, rp, dec, nil)
			if fp.Err != nil {
				switch {
				case errors.Is(fp.Err, kerr.OffsetOutOfRange):
					// The log start moved past us (retention or
					// DeleteRecords): nothing below it exists any more.
					if rp.LogStartOffset > c.pv.Next {
						// What was read below it may be gone too: start over.
						*c.pv = *keyview.NewPartView(rp.LogStartOffset)
						continue
					}
					return nil, fmt.Errorf("fetch %s/%d at offset %d: %w", name, rp.Partition, c.pv.Next, fp.Err)
				case kerr.IsRetriable(fp.Err):
					retry = fmt.Errorf("fetch %s/%d: %w", name, rp.Partition, fp.Err)
					continue
				default:
					return nil, fmt.Errorf("fetch %s/%d at offset %d: %w", name, rp.Partition, c.pv.Next, fp.Err)
				}
			}
			c.view.Count(len(fp.Records), len(rp.RecordBatches))
			for _, r := range fp.Records {
				if r.Offset < c.end {
					Apply(c.view, c.pv, r)
				}
				r.Recycle() // apply keeps nothing of r
			}
			c.advance(next)
		}
	}
	return retry, nil
}

// advance moves c past what a fetch applied, up to next.
func (c *cursor) advance(next int64) {
	if next > c.pv.Next {
		c.pv.Next = min(next, c.end)
	}
	if c.view.OnRecord == nil {
		c.pv.MaybeCompact()
	}
}

// Apply applies one committed record to v in log order.
func Apply(v *keyview.TopicView, pv *keyview.PartView, r *kgo.Record) {
	if v.OnRecord != nil {
		lr := keyview.LogRecord{Key: r.Key, Value: r.Value, Offset: r.Offset, Partition: r.Partition, Timestamp: r.Timestamp}
		for _, h := range r.Headers {
			if h.Key == keyview.RestoreHeader {
				lr.Restore = string(h.Value)
			}
		}
		v.OnRecord(lr)
		return
	}
	v.ApplyKV(pv, r.Key, r.Value, r.Offset)
}

// ListBounds returns, for each existing topic, its partitions' log start and
// last stable offset. Missing topics are returned separately. A partition
// that answers a retriable error (NOT_LEADER_FOR_PARTITION while a leader
// is elected, a broker restarting) is asked again, up to 10 times over
// about 5 seconds: kgo retries once on fresh metadata, an election can take
// longer.
func ListBounds(ctx context.Context, adm *kadm.Client, topics []string) (out map[string]map[int32]Bounds, missing []string, err error) {
	err = electionRetry.Do(ctx, kerr.IsRetriable, func() (err error) {
		out, missing, err = listBoundsOnce(ctx, adm, topics)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return out, missing, nil
}

// electionRetry waits out a leader election: about 5 seconds in all, as kgo
// retries once on fresh metadata and an election can take longer.
var electionRetry = retry.Policy{Tries: 10, Step: 100 * time.Millisecond}

// fetchRetry is how long a read keeps fetching through retriable errors
// (leaders moving, brokers restarting) before it gives up: about 20
// seconds in all.
var fetchRetry = retry.Policy{Tries: 21, Step: 100 * time.Millisecond}

// listBoundsOnce is one try of ListBounds.
func listBoundsOnce(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[int32]Bounds, []string, error) {
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("list start offsets of %v: %w", topics, err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("list end offsets of %v: %w", topics, err)
	}
	out := make(map[string]map[int32]Bounds)
	var missing []string
	for _, t := range topics {
		sp, eps := starts[t], ends[t]
		if len(sp) == 0 || len(eps) == 0 {
			missing = append(missing, t)
			continue
		}
		m := make(map[int32]Bounds, len(eps))
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
			m[p] = Bounds{Start: s.Offset, End: e.Offset}
		}
		if m != nil {
			out[t] = m
		}
	}
	sort.Strings(missing)
	return out, missing, nil
}
