package keyview

import (
	"iter"
	"time"
	"unsafe"
)

// This file holds what a read keeps of a compacted topic: per partition,
// the live keys and their last values in an arena, found through a key
// index. It holds no Kafka client: the readers fill the views, and the
// journal's replay builds them from entries.

// Record is the winning write of one key in one partition, as a capture
// reads it: the value's bytes are in the view's arena.
type Record struct {
	Value  []byte
	Offset int64
}

// rec is a record as a view keeps it, without pointers (the collector
// never scans the records of a view): the key and the value are spans of
// the view's arena.
type rec struct {
	offset int64 // of the write that won; -1 for a removed key
	key    Span
	value  Span
}

// Span is where bytes lie in an arena: a chunk and an offset in it.
type Span struct {
	Chunk, Off, N uint32
}

// RecTable holds a view's records in chunks of recChunk records (but the
// first, which grows up to that size from a few), so that it grows
// without copying what it holds: a slice grown by append is copied about
// four times over in all (by a quarter at a time, for large slices) and
// holds up to a quarter more than it needs.
type RecTable struct {
	chunks [][]rec // every chunk but the last holds recChunk records
	n      int
}

const (
	recShift = 11
	recChunk = 1 << recShift // 64 KiB of records (the last one of a table is half empty on average)
)

// at returns record i.
func (t *RecTable) at(i int32) *rec { return &t.chunks[i>>recShift][i&(recChunk-1)] }

// add appends r and returns its number.
func (t *RecTable) add(r rec) int32 {
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
func (t *RecTable) reserve(n int) {
	if len(t.chunks) == 0 && n > 0 {
		t.chunks = append(t.chunks, make([]rec, 0, min(n, recChunk)))
	}
}

// bytes is the memory the table holds.
func (t *RecTable) bytes() int64 {
	var n int64
	for _, c := range t.chunks {
		n += int64(cap(c))
	}
	return n*int64(unsafe.Sizeof(rec{})) + int64(cap(t.chunks))*int64(unsafe.Sizeof([]rec(nil)))
}

// PartView is what has been read of one partition: the live keys and the
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
type PartView struct {
	Start int64 // log start offset when last read
	Next  int64
	// From is where the current read started: values written at or past
	// it were not handed out yet.
	From int64
	// Keys finds the record of every live key in recs.
	Keys KeyIndex
	Recs RecTable
	// dead counts the records of recs no key points to.
	dead  int
	Arena Arena
	// Live is the size of the live keys and values, in bytes.
	Live  int64
	Nulls int // records with a null key, which no task can look up
	// Built is what the last Capture of an incremental Capturer made of
	// this partition, and dirty the keys set or removed since; nil when
	// the next Capture must build the partition from scratch.
	Built any // a *build.BuiltPart of the capture (snapshot/internal/build)
	Dirty map[string]struct{}
	// Index is, instead of built, what the last streamed capture of an
	// incremental Capturer indexed of this partition (see updateIndex).
	Index any // an *indexed of the streamed capture
}

// touch records that key changed since the partition was built. Once more
// than half the keys changed, building from scratch is as cheap: the
// built state is dropped.
func (pv *PartView) touch(key []byte) {
	if pv.Built == nil && pv.Index == nil {
		return
	}
	if len(pv.Dirty) > pv.Keys.n/2 {
		pv.Built, pv.Index, pv.Dirty = nil, nil, nil
		return
	}
	pv.Dirty[string(key)] = struct{}{}
}

func NewPartView(start int64) *PartView {
	return &PartView{Start: start, Next: start, From: start}
}

// Len is the number of live keys.
func (pv *PartView) Len() int { return pv.Keys.n }

// KeyAt returns the key of record i.
func (pv *PartView) KeyAt(i int32) []byte { return pv.Arena.Bytes(pv.Recs.at(i).key) }

// Lookup returns the record number of key.
func (pv *PartView) Lookup(key []byte) (int32, bool) { return pv.Keys.lookup(key, pv.KeyAt) }

// Record returns record i.
func (pv *PartView) Record(i int32) Record {
	r := pv.Recs.at(i)
	return Record{Value: pv.Arena.Bytes(r.value), Offset: r.offset}
}

// All yields every live key, a string over the arena's bytes, and its
// record number, in no particular order.
func (pv *PartView) All() iter.Seq2[string, int32] {
	return func(yield func(string, int32) bool) {
		for c, chunk := range pv.Recs.chunks {
			for j := range chunk {
				if r := &chunk[j]; r.offset >= 0 && !yield(ArenaString(pv.Arena.Bytes(r.key)), int32(c<<recShift+j)) {
					return
				}
			}
		}
	}
}

// Set makes value, written at offset, the live value of key.
func (pv *PartView) Set(key, value []byte, offset int64) {
	pv.touch(key)
	if i, ok := pv.Lookup(key); ok {
		r := pv.Recs.at(i)
		pv.Live += int64(len(value)) - int64(r.value.N)
		if r.offset >= pv.From && len(value) <= int(r.value.N) {
			// Written in this read, so nothing has seen it yet, and it
			// fits: in place. The bytes it leaves free count as dead.
			copy(pv.Arena.Bytes(r.value), value)
			r.value.N = uint32(len(value))
		} else {
			r.value = pv.Arena.Put(value)
		}
		r.offset = offset
		return
	}
	v := pv.Arena.Put(value)
	n := pv.Recs.add(rec{offset: offset, key: pv.Arena.Put(key), value: v})
	pv.Keys.insert(key, n, pv.KeyAt)
	pv.Live += int64(len(key) + len(value))
}

// Remove forgets key (a tombstone).
func (pv *PartView) Remove(key []byte) {
	i, ok := pv.Keys.remove(key, pv.KeyAt)
	if !ok {
		return
	}
	pv.touch(key)
	r := pv.Recs.at(i)
	pv.Live -= int64(r.key.N) + int64(r.value.N)
	// The key's bytes stay: an incremental Capturer's index (a streamed
	// snapshot's lazyPart.entries, keyRef values sorted by key) may still name
	// the record.
	r.offset, r.value = -1, Span{}
	pv.dead++
}

// Footprint is the memory the view holds: its arena, records and index.
func (pv *PartView) Footprint() int64 {
	return pv.Arena.Held() + pv.Recs.bytes() + pv.Keys.bytes()
}

// CompactAbove is the dead arena bytes a partition view tolerates beyond
// its live bytes before it is compacted. It bounds what a daemon under
// steady churn holds in overwritten values: up to this much per partition
// whose live bytes are fewer. Compacting copies the live bytes, at most once
// per this many bytes written, or per doubling of a larger arena.
const CompactAbove = 512 << 10

// MaybeCompact copies the live keys and values into a new arena when more
// than half of the arena (and more than CompactAbove bytes) is dead, and
// drops the dead records. The cost is linear in the live bytes and is paid
// at most once per doubling of the arena. The index keeps its slots; only
// the record numbers in them change.
func (pv *PartView) MaybeCompact() {
	if pv.Arena.Size-pv.Live <= max(pv.Live, CompactAbove) && pv.dead <= max(pv.Recs.n/2, 1024) {
		return
	}
	var a Arena
	a.Reserve(pv.Live)
	to := make([]int32, pv.Recs.n)
	var recs RecTable
	recs.reserve(pv.Keys.n)
	i := 0
	for _, chunk := range pv.Recs.chunks {
		for j := range chunk {
			r := &chunk[j]
			if r.offset >= 0 {
				v := a.Put(pv.Arena.Bytes(r.value))
				to[i] = recs.add(rec{offset: r.offset, key: a.Put(pv.Arena.Bytes(r.key)), value: v})
			}
			i++
		}
	}
	pv.Keys.renumber(to)
	pv.Recs, pv.Arena, pv.dead = recs, a, 0
	// An index holds record numbers, which changed.
	if pv.Index != nil {
		pv.Index, pv.Dirty = nil, nil
	}
}

// Arena hands out copies of byte slices cut from large chunks: one
// allocation per chunk instead of one per key or value. A copy is never
// written again, but for a view's value that nothing saw yet (see
// PartView.Set). It is not safe for concurrent use.
type Arena struct {
	Chunks [][]byte
	cur    int   // the chunk small copies are cut from, when len(chunks) > 0
	next   int   // size of the next chunk
	Size   int64 // bytes handed out so far, live or dead
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

// Put copies b into the arena and returns where it lies.
func (a *Arena) Put(b []byte) Span {
	if len(b) == 0 {
		return Span{}
	}
	a.Size += int64(len(b))
	if len(a.Chunks) == 0 || len(b) > cap(a.Chunks[a.cur])-len(a.Chunks[a.cur]) {
		if len(b) > arenaMaxChunk/4 {
			// A full chunk of its own: when it is the only one, the next
			// small copy finds no room in it and starts a chunk.
			a.Chunks = append(a.Chunks, append(make([]byte, 0, len(b)), b...))
			return Span{Chunk: uint32(len(a.Chunks) - 1), N: uint32(len(b))}
		}
		a.next = min(max(2*a.next, arenaMinChunk), arenaMaxChunk)
		a.Chunks = append(a.Chunks, make([]byte, 0, max(a.next, len(b))))
		a.cur = len(a.Chunks) - 1
	}
	c := a.Chunks[a.cur]
	n := len(c)
	a.Chunks[a.cur] = append(c, b...)
	return Span{Chunk: uint32(a.cur), Off: uint32(n), N: uint32(len(b))}
}

// Bytes returns the bytes of s (an empty non-nil slice for an empty span).
func (a *Arena) Bytes(s Span) []byte {
	if s.N == 0 {
		return empty[:0:0]
	}
	return a.Chunks[s.Chunk][s.Off : s.Off+s.N : s.Off+s.N]
}

// Copy returns a copy of b, non-nil (possibly empty) when b is non-nil.
func (a *Arena) Copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return a.Bytes(a.Put(b))
}

// Reserve makes the next chunk hold n bytes at least (at most
// arenaMaxChunk), for a copy of known size.
func (a *Arena) Reserve(n int64) {
	if len(a.Chunks) == 0 || n > int64(cap(a.Chunks[a.cur])-len(a.Chunks[a.cur])) {
		a.Chunks = append(a.Chunks, make([]byte, 0, min(max(n, arenaMinChunk), arenaMaxChunk)))
		a.cur = len(a.Chunks) - 1
		a.next = cap(a.Chunks[a.cur])
	}
}

// Held is the memory of the arena's chunks.
func (a *Arena) Held() int64 {
	var n int64
	for _, c := range a.Chunks {
		n += int64(cap(c))
	}
	return n + int64(cap(a.Chunks))*int64(unsafe.Sizeof([]byte(nil)))
}

// ArenaString is a string over b without a copy; b must never be written
// again (arena copies never are).
func ArenaString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// StringBytes returns the bytes of a string made by ArenaString, without a
// copy; they must not be written. The empty string gives an empty non-nil
// slice, as []byte("") does.
func StringBytes(s string) []byte {
	if len(s) == 0 {
		return empty[:0:0]
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// TopicView is what has been read of one topic. A Capturer keeps views
// between runs to read only what is new.
type TopicView struct {
	Name  string
	ID    [16]byte // the topic ID read with it (a kadm.TopicID)
	Parts map[int32]*PartView
	// OnRecord, when set, is called for every record in log order instead
	// of maintaining keys (the config topic is a state machine, not a map).
	OnRecord func(r LogRecord)
	// Progress counts what is fetched, once per partition batch; nil
	// counts nothing.
	Progress FetchCounter
}

// RestoreHeader is snapshot.RestoreHeader (this package is below it).
const RestoreHeader = "offsetkeeper-restore"

// LogRecord is one record of a topic in log order, as onRecord sees it.
type LogRecord struct {
	Key, Value []byte
	Offset     int64
	Partition  int32
	Timestamp  time.Time
	// Restore is the value of the record's snapshot.RestoreHeader: the
	// restore of offsetkeeper that wrote it (its undo snapshot ID), ""
	// for a record anyone else wrote.
	Restore string
}

// FetchCounter counts what a read fetches for a view, once per partition
// batch: the records and the size of their batches in bytes.
type FetchCounter interface {
	Add(records, size int)
}

// Count counts a partition batch, when the view has a counter.
func (v *TopicView) Count(records, size int) {
	if v.Progress != nil {
		v.Progress.Add(records, size)
	}
}

func NewTopicView(name string) *TopicView {
	return &TopicView{Name: name, Parts: make(map[int32]*PartView)}
}

// ApplyKV applies one committed record, of key and value (nil for null),
// in log order.
func (v *TopicView) ApplyKV(pv *PartView, key, value []byte, offset int64) {
	if key == nil {
		pv.Nulls++
		return
	}
	if value == nil {
		pv.Remove(key)
		return
	}
	pv.Set(key, value, offset)
}
