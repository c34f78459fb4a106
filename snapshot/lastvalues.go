package snapshot

// This file is what the journal's tail keeps of every live source key for
// event detection: the last value, found by a 64-bit hash of the key, not
// the key itself, and how a new epoch's tail is seeded with them from its
// base snapshot without decoding its SourceOffsets. See Tail.source.

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// LastValues is the last value of every live key of one offsets topic
// partition, as the tail needs it to tell a source offset rewritten
// backwards (Rewound) or tombstoned: an index from the key's 64-bit hash to
// the value. It holds no key bytes and no pointer per key (the collector
// never scans it). A value of the simplest form, a single counter
// {"name":N} with N an integer below 2^48 (no spaces, no sign, no leading
// zero: the bytes are rebuilt exactly from the name and N), is held in its
// index word, its name numbered; any other value lies in an arena, its
// length first. The index is a WordIndex: 16 bytes a key, and nothing
// else for {"position":N} (a map[uint64]span takes several times that, and
// the value more in an arena). Two keys whose
// hashes collide (about one chance in 10^9 for 200,000 keys) share a
// value, which can only make an event be seen or missed; the journal's
// records are the keys and values read, never these.
type LastValues struct {
	Seed  maphash.Seed
	Index WordIndex // key hash -> an inline value or where it lies in arena
	Arena keyview.Arena
	Live  int64 // bytes of the values in arena, their lengths included
	// names are the field names of the inline values, numbered by no.
	names   []string
	no      map[string]uint16
	Scratch []byte // the last value get rebuilt, or set copied
}

// A value word of LastValues.Index: inline (the top bit set) holds the
// name's number and N; otherwise the arena chunk and offset of the value,
// whose length is an uvarint before it.
const (
	InlineBit   = 1 << 63
	inlineShift = 48
	inlineMax   = 1<<inlineShift - 1
	maxNames    = 1<<(63-inlineShift) - 1
)

func NewLastValues(seed maphash.Seed) *LastValues {
	return &LastValues{Seed: seed}
}

// Get returns the last value of key; the bytes are valid until the next
// Get, set or remove.
func (lv *LastValues) Get(key []byte) ([]byte, bool) {
	w, ok := lv.Index.Get(maphash.Bytes(lv.Seed, key))
	if !ok {
		return nil, false
	}
	if w&InlineBit != 0 {
		b := append(lv.Scratch[:0], `{"`...)
		b = append(b, lv.names[(w&^InlineBit)>>inlineShift]...)
		b = append(b, `":`...)
		b = strconv.AppendUint(b, w&inlineMax, 10)
		lv.Scratch = append(b, '}')
		return lv.Scratch, true
	}
	return lv.stored(w), true
}

// stored returns the value an arena word refers to (non-nil).
func (lv *LastValues) stored(w uint64) []byte {
	c := lv.Arena.Chunks[w>>32]
	off := uint32(w)
	n, k := binary.Uvarint(c[off:])
	return c[off+uint32(k) : off+uint32(k)+uint32(n) : off+uint32(k)+uint32(n)]
}

// storedLen is the arena bytes of the value an arena word refers to.
func (lv *LastValues) storedLen(w uint64) int64 {
	if w&InlineBit != 0 {
		return 0
	}
	n := len(lv.stored(w))
	return int64(n + uvarintLen(uint64(n)))
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// Set makes value the last value of key.
func (lv *LastValues) Set(key, value []byte) {
	h := maphash.Bytes(lv.Seed, key)
	w, inline := lv.inline(value)
	if !inline {
		w = lv.put(value)
		lv.Live += lv.storedLen(w)
	}
	if old, ok := lv.Index.Set(h, w); ok {
		lv.Live -= lv.storedLen(old)
	}
	lv.maybeCompact()
}

// put copies value, its length first, into the arena, and returns its word.
func (lv *LastValues) put(value []byte) uint64 {
	lv.Scratch = append(binary.AppendUvarint(lv.Scratch[:0], uint64(len(value))), value...)
	s := lv.Arena.Put(lv.Scratch)
	if cap(lv.Scratch) > 4<<10 {
		lv.Scratch = nil // a large value's copy is not kept
	}
	return uint64(s.Chunk)<<32 | uint64(s.Off)
}

// inline returns the index word of value when it is {"name":N} as get
// rebuilds it, with N at most inlineMax.
func (lv *LastValues) inline(v []byte) (uint64, bool) {
	if len(v) < len(`{"":0}`) || v[0] != '{' || v[1] != '"' || v[len(v)-1] != '}' {
		return 0, false
	}
	end := 2
	for end < len(v) && v[end] != '"' {
		if c := v[end]; c < 0x20 || c > 0x7e || c == '\\' {
			return 0, false
		}
		end++
	}
	digits := v[min(end+2, len(v)-1) : len(v)-1]
	if end+2 >= len(v) || v[end+1] != ':' || len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + uint64(c-'0')
	}
	if n > inlineMax {
		return 0, false
	}
	name := v[2:end]
	k, ok := lv.no[string(name)]
	if !ok {
		if len(lv.names) >= maxNames {
			return 0, false
		}
		if lv.no == nil {
			lv.no = map[string]uint16{}
		}
		k = uint16(len(lv.names))
		lv.names = append(lv.names, string(name))
		lv.no[string(name)] = k
	}
	return InlineBit | uint64(k)<<inlineShift | n, true
}

// Remove forgets key (a tombstone).
func (lv *LastValues) Remove(key []byte) {
	h := maphash.Bytes(lv.Seed, key)
	if old, ok := lv.Index.Get(h); ok {
		lv.Live -= lv.storedLen(old)
		lv.Index.Remove(h)
		lv.maybeCompact()
	}
}

// maybeCompact copies the live values into a new arena once the dead ones
// (values overwritten, keys removed) are more than the live ones and
// keyview.CompactAbove: under steady rewrites the arena stays within about twice
// the live values, at a cost linear in them once per doubling.
func (lv *LastValues) maybeCompact() {
	if lv.Arena.Size-lv.Live <= max(lv.Live, keyview.CompactAbove) {
		return
	}
	var a keyview.Arena
	a.Reserve(lv.Live)
	lv.Index.Update(func(w uint64) uint64 {
		if w&InlineBit != 0 {
			return w
		}
		n := lv.storedLen(w)
		c := lv.Arena.Chunks[w>>32]
		s := a.Put(c[uint32(w) : uint32(w)+uint32(n)])
		return uint64(s.Chunk)<<32 | uint64(s.Off)
	})
	lv.Arena = a
}

// Len is the number of keys held.
func (lv *LastValues) Len() int { return lv.Index.Len() }

// WordIndex maps 64-bit key hashes to 64-bit words without a pointer: two
// sorted arrays, 16 bytes a key, searched by bisection, and a map of the
// keys added since they were merged into the arrays, at most an eighth of
// them (or MergeAbove). A key is in one of the two: set finds it in the
// arrays first, and a removed key stays in them, goneWord, until the next
// merge.
type WordIndex struct {
	Hs, Ws []uint64
	Gone   int // entries of hs removed
	More   map[uint64]uint64
	// Loading defers merging to the caller (a seed merges each
	// partition's keys once: see TailSeed).
	Loading bool
}

// goneWord marks a removed key in WordIndex.Ws; no value word is all ones
// (a name's number is below maxNames).
const goneWord = ^uint64(0)

// MergeAbove is the fewest keys a WordIndex adds before merging them.
const MergeAbove = 1024

func (x *WordIndex) Get(h uint64) (uint64, bool) {
	if w, ok := x.More[h]; ok {
		return w, true
	}
	if i, ok := slices.BinarySearch(x.Hs, h); ok && x.Ws[i] != goneWord {
		return x.Ws[i], true
	}
	return 0, false
}

// Set makes w the word of h, and returns the word it replaces.
func (x *WordIndex) Set(h, w uint64) (uint64, bool) {
	if i, ok := slices.BinarySearch(x.Hs, h); ok {
		old := x.Ws[i]
		x.Ws[i] = w
		if old == goneWord {
			x.Gone--
			return 0, false
		}
		return old, true
	}
	if x.More == nil {
		x.More = map[uint64]uint64{}
	}
	old, ok := x.More[h]
	x.More[h] = w
	if !x.Loading && len(x.More) > max(MergeAbove, len(x.Hs)/8) {
		x.Merge()
	}
	return old, ok
}

func (x *WordIndex) Remove(h uint64) {
	if _, ok := x.More[h]; ok {
		delete(x.More, h)
		return
	}
	if i, ok := slices.BinarySearch(x.Hs, h); ok && x.Ws[i] != goneWord {
		x.Ws[i] = goneWord
		x.Gone++
		if x.Gone > max(MergeAbove, len(x.Hs)/2) {
			x.Merge()
		}
	}
}

func (x *WordIndex) Len() int { return len(x.Hs) - x.Gone + len(x.More) }

// Update replaces every word w by f(w).
func (x *WordIndex) Update(f func(uint64) uint64) {
	for i, w := range x.Ws {
		if w != goneWord {
			x.Ws[i] = f(w)
		}
	}
	for h, w := range x.More {
		x.More[h] = f(w)
	}
}

// loaded ends loading: the keys set are merged when set would have
// merged them.
func (x *WordIndex) loaded() {
	x.Loading = false
	if len(x.More) > max(MergeAbove, len(x.Hs)/8) {
		x.Merge()
	}
}

// Merge makes the arrays hold every key, the removed ones left out.
func (x *WordIndex) Merge() {
	if len(x.More) == 0 && x.Gone == 0 {
		return
	}
	add := make([]uint64, 0, len(x.More))
	for h := range x.More {
		add = append(add, h)
	}
	slices.Sort(add)
	n := x.Len()
	hs, ws := make([]uint64, 0, n), make([]uint64, 0, n)
	i, j := 0, 0
	for i < len(x.Hs) || j < len(add) {
		if j == len(add) || (i < len(x.Hs) && x.Hs[i] < add[j]) {
			if x.Ws[i] != goneWord {
				hs, ws = append(hs, x.Hs[i]), append(ws, x.Ws[i])
			}
			i++
			continue
		}
		hs, ws = append(hs, add[j]), append(ws, x.More[add[j]])
		j++
	}
	x.Hs, x.Ws, x.Gone, x.More = hs, ws, 0, nil
}

// TailSeed is what a Tail keeps of a state's source offsets: the
// LastValues of every offsets topic partition that has keys, under one
// hash seed. It seeds one Tail (NewTail). A store read with a SeedSink
// decodes a snapshot's source offsets straight into one, so that a new
// journal epoch never holds its base snapshot's SourceOffsets (160 bytes
// a key and a copy of its bytes) beside what the tail keeps.
type TailSeed struct {
	Seed maphash.Seed
	Last map[string]map[int32]*LastValues
	// cur is the LastValues set last: a document holds each partition's
	// keys in one run, whose keys are merged once when it ends (see
	// WordIndex.Loading), from a map of one partition's keys at most;
	// keys of partitions interleaved are merged as set merges them.
	cur *LastValues
	// Taken says a Tail took the LastValues (NewTail).
	Taken bool
}

func NewTailSeed() *TailSeed {
	return &TailSeed{Seed: maphash.MakeSeed(), Last: map[string]map[int32]*LastValues{}}
}

// set makes value the last value of key in topic's partition.
func (s *TailSeed) set(topic string, partition int32, key, value []byte) {
	parts := s.Last[topic]
	if parts == nil {
		parts = map[int32]*LastValues{}
		s.Last[topic] = parts
	}
	lv := parts[partition]
	if lv == nil {
		lv = NewLastValues(s.Seed)
		parts[partition] = lv
	}
	if lv != s.cur {
		if s.cur != nil {
			s.cur.Index.loaded()
		}
		lv.Index.Loading, s.cur = true, lv
	}
	lv.Set(key, value)
}

// SeedOf returns what a Tail keeps of state's source offsets, made from
// them in their order (a key twice in a partition keeps its last value, as
// the tail's record hook would).
func SeedOf(state *Snapshot) *TailSeed {
	s := NewTailSeed()
	t := state.SourceTable()
	for i := range int32(t.Len()) {
		s.set(t.Topic(i), t.Partition(i), t.Key(i), t.Value(i))
	}
	s.merge()
	return s
}

// merge merges the keys every LastValues added into its arrays (see
// WordIndex), once the seed holds them all.
func (s *TailSeed) merge() {
	for _, parts := range s.Last {
		for _, lv := range parts {
			lv.Index.Loading = false
			lv.Index.Merge()
		}
	}
	s.cur = nil
}

// SeedSink decodes the source offsets of a document into a TailSeed; done
// once the streamed decoder took the whole document.
type SeedSink struct {
	S    *TailSeed
	Done bool
}

// Add copies o's value into the seed, and lets the decoder's arena go once
// it is large: nothing else keeps what it holds.
func (k *SeedSink) Add(o *SourceOffset, d *OffsetDecoder) bool {
	k.S.set(o.Topic, o.Partition, o.Key, o.Value)
	if d.arena.Size > 1<<20 {
		d.arena = keyview.Arena{}
	}
	return true
}

func (k *SeedSink) Finish(s *Snapshot) {
	k.S.merge()
	s.SourceOffsets, k.Done = nil, true
}

// Decoded finishes a read of s with the sink (store's Snapshots.GetWith
// calls it): a document the streamed decoder did not take was decoded
// whole, and its source offsets then go into the seed, so that S holds
// them and s does not either way.
func (k *SeedSink) Decoded(s *Snapshot) {
	if !k.Done {
		k.S = SeedOf(s)
		s.SourceOffsets, k.Done = nil, true
	}
}
