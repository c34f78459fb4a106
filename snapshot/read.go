package snapshot

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

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
// Most partitions of a fetch are applied from their record batches
// directly (batches.go); kgo.ProcessFetchPartition takes the rest.

// record is the winning write of one key in one partition, as a capture
// reads it: the value's bytes are in the view's arena.
type record struct {
	value  []byte
	offset int64
}

// rec is a record as a view keeps it, without pointers (the collector
// never scans the records of a view): the key and the value are spans of
// the view's arena.
type rec struct {
	offset int64 // of the write that won; -1 for a removed key
	key    span
	value  span
}

// span is where bytes lie in an arena: a chunk and an offset in it.
type span struct {
	chunk, off, n uint32
}

// recTable holds a view's records in chunks of recChunk records (but the
// first, which grows up to that size from a few), so that it grows
// without copying what it holds: a slice grown by append is copied about
// four times over in all (by a quarter at a time, for large slices) and
// holds up to a quarter more than it needs.
type recTable struct {
	chunks [][]rec // every chunk but the last holds recChunk records
	n      int
}

const (
	recShift = 11
	recChunk = 1 << recShift // 64 KiB of records (the last one of a table is half empty on average)
)

// at returns record i.
func (t *recTable) at(i int32) *rec { return &t.chunks[i>>recShift][i&(recChunk-1)] }

// add appends r and returns its number.
func (t *recTable) add(r rec) int32 {
	last := len(t.chunks) - 1
	if last < 0 || len(t.chunks[last]) == recChunk {
		size := recChunk
		if last < 0 {
			size = 16
		}
		t.chunks = append(t.chunks, make([]rec, 0, size))
		last++
	}
	t.chunks[last] = append(t.chunks[last], r)
	t.n++
	return int32(t.n - 1)
}

// reserve makes room for n records in all, for a table being filled with
// a known count.
func (t *recTable) reserve(n int) {
	if len(t.chunks) == 0 && n > 0 {
		t.chunks = append(t.chunks, make([]rec, 0, min(n, recChunk)))
	}
}

// bytes is the memory the table holds.
func (t *recTable) bytes() int64 {
	var n int64
	for _, c := range t.chunks {
		n += int64(cap(c))
	}
	return n*int64(unsafe.Sizeof(rec{})) + int64(cap(t.chunks))*int64(unsafe.Sizeof([]rec(nil)))
}

// partView is what has been read of one partition: the live keys and the
// next offset to read.
//
// Keys and values are copied into an arena, so the view holds a few large
// chunks instead of one allocation per key and never keeps a fetch
// response alive; its records and their index hold no pointers. Bytes
// handed out of the arena (a capture's SourceOffsets, a streamed
// snapshot's entries) are never written again, so snapshots may alias
// them: a value is overwritten in place only by a later write of the same
// key in the same read, before anything saw it (every key of a compacted
// topic not yet compacted is written several times). A partition whose
// arena holds mostly dead bytes (overwritten values, tombstoned keys) is
// compacted into a new arena; snapshots that alias the old one keep it
// alive for as long as they live.
type partView struct {
	start int64 // log start offset when last read
	next  int64
	// from is where the current read started: values written at or past
	// it were not handed out yet.
	from int64
	// keys finds the record of every live key in recs.
	keys keyIndex
	recs recTable
	// dead counts the records of recs no key points to.
	dead  int
	arena arena
	// live is the size of the live keys and values, in bytes.
	live  int64
	nulls int // records with a null key, which no task can look up
	// built is what the last Capture of an incremental Capturer made of
	// this partition, and dirty the keys set or removed since; nil when
	// the next Capture must build the partition from scratch.
	built *builtPart
	dirty map[string]struct{}
	// index is, instead of built, what the last streamed capture of an
	// incremental Capturer indexed of this partition (see updateIndex).
	index *indexed
}

// builtPart is the source offsets a Capture made of one partition, kept by
// an incremental Capturer so that the next Capture redoes only the keys
// written since.
type builtPart struct {
	offsets []SourceOffset // in key order
	// suspects are kept keys found off their murmur2 partition (some may
	// be gone since: duplicateWarnings checks).
	suspects []string
}

// touch records that key changed since the partition was built. Once more
// than half the keys changed, building from scratch is as cheap: the
// built state is dropped.
func (pv *partView) touch(key []byte) {
	if pv.built == nil && pv.index == nil {
		return
	}
	if len(pv.dirty) > pv.keys.n/2 {
		pv.built, pv.index, pv.dirty = nil, nil, nil
		return
	}
	pv.dirty[string(key)] = struct{}{}
}

func newPartView(start int64) *partView {
	return &partView{start: start, next: start, from: start}
}

// len is the number of live keys.
func (pv *partView) len() int { return pv.keys.n }

// keyAt returns the key of record i.
func (pv *partView) keyAt(i int32) []byte { return pv.arena.bytes(pv.recs.at(i).key) }

// lookup returns the record number of key.
func (pv *partView) lookup(key []byte) (int32, bool) { return pv.keys.lookup(key, pv.keyAt) }

// record returns record i.
func (pv *partView) record(i int32) record {
	r := pv.recs.at(i)
	return record{value: pv.arena.bytes(r.value), offset: r.offset}
}

// all yields every live key, a string over the arena's bytes, and its
// record number, in no particular order.
func (pv *partView) all() iter.Seq2[string, int32] {
	return func(yield func(string, int32) bool) {
		for c, chunk := range pv.recs.chunks {
			for j := range chunk {
				if r := &chunk[j]; r.offset >= 0 && !yield(arenaString(pv.arena.bytes(r.key)), int32(c<<recShift+j)) {
					return
				}
			}
		}
	}
}

// set makes value, written at offset, the live value of key.
func (pv *partView) set(key, value []byte, offset int64) {
	pv.touch(key)
	if i, ok := pv.lookup(key); ok {
		r := pv.recs.at(i)
		pv.live += int64(len(value)) - int64(r.value.n)
		if r.offset >= pv.from && len(value) <= int(r.value.n) {
			// Written in this read, so nothing has seen it yet, and it
			// fits: in place. The bytes it leaves free count as dead.
			copy(pv.arena.bytes(r.value), value)
			r.value.n = uint32(len(value))
		} else {
			r.value = pv.arena.put(value)
		}
		r.offset = offset
		return
	}
	v := pv.arena.put(value)
	n := pv.recs.add(rec{offset: offset, key: pv.arena.put(key), value: v})
	pv.keys.insert(key, n, pv.keyAt)
	pv.live += int64(len(key) + len(value))
}

// remove forgets key (a tombstone).
func (pv *partView) remove(key []byte) {
	i, ok := pv.keys.remove(key, pv.keyAt)
	if !ok {
		return
	}
	pv.touch(key)
	r := pv.recs.at(i)
	pv.live -= int64(r.key.n) + int64(r.value.n)
	// The key's bytes stay: an incremental Capturer's index (a streamed
	// snapshot's lazyPart.entries, keyRefs sorted by key) may still name
	// the record.
	r.offset, r.value = -1, span{}
	pv.dead++
}

// footprint is the memory the view holds: its arena, records and index.
func (pv *partView) footprint() int64 {
	return pv.arena.held() + pv.recs.bytes() + pv.keys.bytes()
}

// compactAbove is the dead arena bytes a partition view tolerates beyond
// its live bytes before it is compacted. It bounds what a daemon under
// steady churn holds in overwritten values: up to this much per partition
// whose live bytes are fewer. Compacting copies the live bytes, at most once
// per this many bytes written, or per doubling of a larger arena.
const compactAbove = 512 << 10

// maybeCompact copies the live keys and values into a new arena when more
// than half of the arena (and more than compactAbove bytes) is dead, and
// drops the dead records. The cost is linear in the live bytes and is paid
// at most once per doubling of the arena. The index keeps its slots; only
// the record numbers in them change.
func (pv *partView) maybeCompact() {
	if pv.arena.size-pv.live <= max(pv.live, compactAbove) && pv.dead <= max(pv.recs.n/2, 1024) {
		return
	}
	var a arena
	a.reserve(pv.live)
	to := make([]int32, pv.recs.n)
	var recs recTable
	recs.reserve(pv.keys.n)
	i := 0
	for _, chunk := range pv.recs.chunks {
		for j := range chunk {
			r := &chunk[j]
			if r.offset >= 0 {
				v := a.put(pv.arena.bytes(r.value))
				to[i] = recs.add(rec{offset: r.offset, key: a.put(pv.arena.bytes(r.key)), value: v})
			}
			i++
		}
	}
	pv.keys.renumber(to)
	pv.recs, pv.arena, pv.dead = recs, a, 0
	// An index holds record numbers, which changed.
	if pv.index != nil {
		pv.index, pv.dirty = nil, nil
	}
}

// arena hands out copies of byte slices cut from large chunks: one
// allocation per chunk instead of one per key or value. A copy is never
// written again, but for a view's value that nothing saw yet (see
// partView.set). It is not safe for concurrent use.
type arena struct {
	chunks [][]byte
	cur    int   // the chunk small copies are cut from, when len(chunks) > 0
	next   int   // size of the next chunk
	size   int64 // bytes handed out so far, live or dead
}

// Chunk sizes of an arena: they double from arenaMinChunk to
// arenaMaxChunk, so a small partition wastes little and a large one
// allocates rarely. A slice larger than a quarter of arenaMaxChunk gets
// a chunk of its own. Each partition's last chunk is half empty on
// average: small chunks waste less over many partitions, for allocations
// that stay rare (one per 64 KiB of keys and values).
const (
	arenaMinChunk = 4 << 10
	arenaMaxChunk = 64 << 10
)

// empty is the copy of every empty non-nil slice.
var empty = []byte{}

// put copies b into the arena and returns where it lies.
func (a *arena) put(b []byte) span {
	if len(b) == 0 {
		return span{}
	}
	a.size += int64(len(b))
	if len(a.chunks) == 0 || len(b) > cap(a.chunks[a.cur])-len(a.chunks[a.cur]) {
		if len(b) > arenaMaxChunk/4 {
			// A full chunk of its own: when it is the only one, the next
			// small copy finds no room in it and starts a chunk.
			a.chunks = append(a.chunks, append(make([]byte, 0, len(b)), b...))
			return span{chunk: uint32(len(a.chunks) - 1), n: uint32(len(b))}
		}
		a.next = min(max(2*a.next, arenaMinChunk), arenaMaxChunk)
		a.chunks = append(a.chunks, make([]byte, 0, max(a.next, len(b))))
		a.cur = len(a.chunks) - 1
	}
	c := a.chunks[a.cur]
	n := len(c)
	a.chunks[a.cur] = append(c, b...)
	return span{chunk: uint32(a.cur), off: uint32(n), n: uint32(len(b))}
}

// bytes returns the bytes of s (an empty non-nil slice for an empty span).
func (a *arena) bytes(s span) []byte {
	if s.n == 0 {
		return empty[:0:0]
	}
	return a.chunks[s.chunk][s.off : s.off+s.n : s.off+s.n]
}

// copy returns a copy of b, non-nil (possibly empty) when b is non-nil.
func (a *arena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return a.bytes(a.put(b))
}

// reserve makes the next chunk hold n bytes at least (at most
// arenaMaxChunk), for a copy of known size.
func (a *arena) reserve(n int64) {
	if len(a.chunks) == 0 || n > int64(cap(a.chunks[a.cur])-len(a.chunks[a.cur])) {
		a.chunks = append(a.chunks, make([]byte, 0, min(max(n, arenaMinChunk), arenaMaxChunk)))
		a.cur = len(a.chunks) - 1
		a.next = cap(a.chunks[a.cur])
	}
}

// held is the memory of the arena's chunks.
func (a *arena) held() int64 {
	var n int64
	for _, c := range a.chunks {
		n += int64(cap(c))
	}
	return n + int64(cap(a.chunks))*int64(unsafe.Sizeof([]byte(nil)))
}

// arenaString is a string over b without a copy; b must never be written
// again (arena copies never are).
func arenaString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringBytes returns the bytes of a string made by arenaString, without a
// copy; they must not be written. The empty string gives an empty non-nil
// slice, as []byte("") does.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return empty[:0:0]
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
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
	// progress counts what is fetched, once per partition batch; nil
	// counts nothing.
	progress *TopicProgress
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
	// notified: onDone was called for it (see readTopicsNotify).
	notified bool
}

// bounds is the range a partition must be read over: from its log start
// (used when the view has nothing yet) up to end, exclusive.
type bounds struct {
	start, end int64
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

// readTopics brings every view up to the given ends. leaders maps topic and
// partition to the leader broker; it is refreshed on leadership errors.
// A view whose partition moved under it (log start past its position, or
// end before it) is reset and read from the start, and reported.
func readTopics(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*topicView, ends map[string]map[int32]bounds) (resets []string, err error) {
	return readTopicsNotify(ctx, cl, adm, views, ends, nil)
}

// readTopicsNotify is readTopics, calling onDone, when set, as each
// partition that had records to read reached its end; the partition is not
// read again, nor its view written, in this read. left is the share of the
// read's offsets still to read then (0 to 1). onDone is called from the
// goroutine reading the partition's leader, which waits meanwhile: it must
// return soon. It is called for every such partition of a read that
// succeeds, never twice for one.
func readTopicsNotify(ctx context.Context, cl *kgo.Client, adm *kadm.Client, views []*topicView, ends map[string]map[int32]bounds, onDone func(v *topicView, p int32, pv *partView, left float64)) (resets []string, err error) {
	r := &topicReader{cl: cl, adm: adm, byName: make(map[string]*topicView, len(views)), decompressor: kgo.DefaultDecompressor(), first: true, onDone: onDone}
	r.topicNames = make([]string, 0, len(views))
	for _, v := range views {
		r.topicNames = append(r.topicNames, v.name)
		r.byName[v.name] = v
	}
	if err := r.refresh(ctx); err != nil {
		return r.resets, err
	}
	pending := r.cursors(views, ends)
	for _, c := range pending {
		r.total += c.end - c.pv.next
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
			if attempts > 20 {
				return r.resets, fmt.Errorf("read topics %v: gave up after %d attempts: %w; check broker health", r.topicNames, attempts, retryErr)
			}
			select {
			case <-ctx.Done():
				return r.resets, stopped(ctx.Err())
			case <-time.After(time.Duration(attempts) * 100 * time.Millisecond):
			}
			if err := r.refresh(ctx); err != nil {
				return r.resets, stopped(err)
			}
		}
		next := pending[:0]
		for _, c := range pending {
			if c.pv.next < c.end {
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
	byName       map[string]*topicView
	decompressor kgo.Decompressor
	// leaders maps topic and partition to the leader broker.
	leaders map[string]map[int32]int32
	// first is set until the first refresh is done.
	first  bool
	resets []string
	onDone func(v *topicView, p int32, pv *partView, left float64)
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
			if v.id != (kadm.TopicID{}) && t.ID != (kadm.TopicID{}) && v.id != t.ID {
				if !r.first {
					return fmt.Errorf("%w: topic %q was recreated during the read", errTopicChanged, t.Topic)
				}
				// Recreated since the last run: nothing kept is valid.
				v.parts = make(map[int32]*partView)
				r.resets = append(r.resets, fmt.Sprintf("%s: topic was recreated", t.Topic))
			}
			v.id = t.ID
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
func (r *topicReader) cursors(views []*topicView, ends map[string]map[int32]bounds) []*cursor {
	var pending []*cursor
	for _, v := range views {
		for p, b := range ends[v.name] {
			pv := v.parts[p]
			// Records below a log start that moved are gone, and so are
			// the keys they held: only a read from the new start is exact.
			if pv == nil || b.start > pv.start || pv.next > b.end {
				if pv != nil {
					r.resets = append(r.resets, fmt.Sprintf("%s/%d: log moved from [%d, %d) to [%d, %d)", v.name, p, pv.start, pv.next, b.start, b.end))
				}
				pv = newPartView(b.start)
				v.parts[p] = pv
			}
			// What was read before this read may have been handed out:
			// only values written from here on are overwritten in place.
			pv.from = pv.next
			if pv.next < b.end {
				pending = append(pending, &cursor{view: v, part: p, pv: pv, end: b.end})
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
		byLeader[r.leaders[c.view.name][c.part]] = append(byLeader[r.leaders[c.view.name][c.part]], c)
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
				retry, err := fetchOnce(ctx, r.cl, leader, cs, r.decompressor)
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
					return c.pv.next >= c.end
				})
			}
		}(leader, cs)
	}
	wg.Wait()
	return firstErr, retryErr
}

var errTopicChanged = errors.New("topic changed")

// notify calls onDone for c once, when it is read to its end. Only the
// goroutine reading c calls it.
func (r *topicReader) notify(c *cursor) {
	if r.onDone != nil && !c.notified && c.pv.next >= c.end {
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
		n += c.pv.next
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
	var recs []batchRec
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
			var next int64
			var ok bool
			var kept int
			if next, kept, ok, recs = applyDirect(c, rp, dec, recs); ok {
				c.view.progress.add(kept, len(rp.RecordBatches))
				c.advance(next)
				continue
			}
			fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Offset:         c.pv.next,
				IsolationLevel: kgo.ReadCommitted(),
				Topic:          name,
				Partition:      rp.Partition,
				Pools:          recordPools,
			}, rp, dec, nil)
			if fp.Err != nil {
				switch {
				case errors.Is(fp.Err, kerr.OffsetOutOfRange):
					// The log start moved past us (retention or
					// DeleteRecords): nothing below it exists any more.
					if rp.LogStartOffset > c.pv.next {
						// What was read below it may be gone too: start over.
						*c.pv = *newPartView(rp.LogStartOffset)
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
			c.view.progress.add(len(fp.Records), len(rp.RecordBatches))
			for _, r := range fp.Records {
				if r.Offset < c.end {
					c.view.apply(c.pv, r)
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
	if next > c.pv.next {
		c.pv.next = min(next, c.end)
	}
	if c.view.onRecord == nil {
		c.pv.maybeCompact()
	}
}

// apply applies one committed record in log order.
func (v *topicView) apply(pv *partView, r *kgo.Record) {
	if v.onRecord != nil {
		v.onRecord(r)
		return
	}
	v.applyKV(pv, r.Key, r.Value, r.Offset)
}

// applyKV applies one committed record, of key and value (nil for null),
// in log order.
func (v *topicView) applyKV(pv *partView, key, value []byte, offset int64) {
	if key == nil {
		pv.nulls++
		return
	}
	if value == nil {
		pv.remove(key)
		return
	}
	pv.set(key, value, offset)
}

// listBounds returns, for each existing topic, its partitions' log start and
// last stable offset. Missing topics are returned separately. A partition
// that answers a retriable error (NOT_LEADER_FOR_PARTITION while a leader
// is elected, a broker restarting) is asked again, up to 10 times over
// about 5 seconds: kgo retries once on fresh metadata, an election can take
// longer.
func listBounds(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[int32]bounds, []string, error) {
	for attempt := 1; ; attempt++ {
		out, missing, err := listBoundsOnce(ctx, adm, topics)
		if err == nil || !kerr.IsRetriable(err) || attempt == 10 || ctx.Err() != nil {
			return out, missing, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%w (while retrying: %w)", ctx.Err(), err)
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
}

// listBoundsOnce is one try of listBounds.
func listBoundsOnce(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[int32]bounds, []string, error) {
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
