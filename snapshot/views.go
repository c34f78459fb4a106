package snapshot

import (
	"iter"
	"time"
	"unsafe"
)

// This file holds what a read keeps of a compacted topic: per partition,
// the live keys and their last values in an arena, found through a key
// index. It holds no Kafka client: the readers fill the views, and the
// journal's replay builds them from entries.

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
	built any // a *builtPart of the capture
	dirty map[string]struct{}
	// index is, instead of built, what the last streamed capture of an
	// incremental Capturer indexed of this partition (see updateIndex).
	index any // an *indexed of the streamed capture
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
	id    [16]byte // the topic ID read with it (a kadm.TopicID)
	parts map[int32]*partView
	// onRecord, when set, is called for every record in log order instead
	// of maintaining keys (the config topic is a state machine, not a map).
	onRecord func(r *logRecord)
	// progress counts what is fetched, once per partition batch; nil
	// counts nothing.
	progress fetchCounter
}

// logRecord is one record of a topic in log order, as onRecord sees it.
type logRecord struct {
	Key, Value []byte
	Offset     int64
	Partition  int32
	Timestamp  time.Time
}

// fetchCounter counts what a read fetches for a view, once per partition
// batch: the records and the size of their batches in bytes.
type fetchCounter interface {
	add(records, size int)
}

// count counts a partition batch, when the view has a counter.
func (v *topicView) count(records, size int) {
	if v.progress != nil {
		v.progress.add(records, size)
	}
}

func newTopicView(name string) *topicView {
	return &topicView{name: name, parts: make(map[int32]*partView)}
}

