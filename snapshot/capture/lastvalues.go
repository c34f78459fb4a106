package capture

// This file is what the journal's tail keeps of every live source key for
// event detection: the last value, found by a 64-bit hash of the key, not
// the key itself (lastValues, over a wordIndex). tailseed.go seeds a new
// epoch's tail with them from its base snapshot. See Tail.source.

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strconv"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// lastValues is the last value of every live key of one offsets topic
// partition, as the tail needs it to tell a source offset rewritten
// backwards (Rewound) or tombstoned: an index from the key's 64-bit hash to
// the value. It holds no key bytes and no pointer per key (the collector
// never scans it). A value of the simplest form, a single counter
// {"name":N} with N an integer below 2^48 (no spaces, no sign, no leading
// zero: the bytes are rebuilt exactly from the name and N), is held in its
// index word, its name numbered; any other value lies in an arena, its
// length first. The index is a wordIndex: 16 bytes a key, and nothing
// else for {"position":N} (a map[uint64]span takes several times that, and
// the value more in an arena). Two keys whose
// hashes collide (about one chance in 10^9 for 200,000 keys) share a
// value, which can only make an event be seen or missed; the journal's
// records are the keys and values read, never these.
type lastValues struct {
	Seed  maphash.Seed
	Index wordIndex // key hash -> an inline value or where it lies in arena
	Arena keyview.Arena
	Live  int64 // bytes of the values in arena, their lengths included
	// names are the field names of the inline values, numbered by no.
	names   []string
	no      map[string]uint16
	Scratch []byte // the last value get rebuilt, or set copied
}

// A value word of lastValues.Index: inline (the top bit set) holds the
// name's number and N; otherwise the arena chunk and offset of the value,
// whose length is an uvarint before it.
const (
	inlineBit   = 1 << 63
	inlineShift = 48
	inlineMax   = 1<<inlineShift - 1
	maxNames    = 1<<(63-inlineShift) - 1
)

func newLastValues(seed maphash.Seed) *lastValues {
	return &lastValues{Seed: seed}
}

// Get returns the last value of key; the bytes are valid until the next
// Get, set or remove.
func (lv *lastValues) Get(key []byte) ([]byte, bool) {
	w, ok := lv.Index.Get(maphash.Bytes(lv.Seed, key))
	if !ok {
		return nil, false
	}
	if w&inlineBit != 0 {
		b := append(lv.Scratch[:0], `{"`...)
		b = append(b, lv.names[(w&^inlineBit)>>inlineShift]...)
		b = append(b, `":`...)
		b = strconv.AppendUint(b, w&inlineMax, 10)
		lv.Scratch = append(b, '}')
		return lv.Scratch, true
	}
	return lv.stored(w), true
}

// stored returns the value an arena word refers to (non-nil).
func (lv *lastValues) stored(w uint64) []byte {
	c := lv.Arena.Chunks[w>>32]
	off := uint32(w)
	n, k := binary.Uvarint(c[off:])
	return c[off+uint32(k) : off+uint32(k)+uint32(n) : off+uint32(k)+uint32(n)]
}

// storedLen is the arena bytes of the value an arena word refers to.
func (lv *lastValues) storedLen(w uint64) int64 {
	if w&inlineBit != 0 {
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
func (lv *lastValues) Set(key, value []byte) {
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
func (lv *lastValues) put(value []byte) uint64 {
	lv.Scratch = append(binary.AppendUvarint(lv.Scratch[:0], uint64(len(value))), value...)
	s := lv.Arena.Put(lv.Scratch)
	if cap(lv.Scratch) > 4<<10 {
		lv.Scratch = nil // a large value's copy is not kept
	}
	return uint64(s.Chunk)<<32 | uint64(s.Off)
}

// inline returns the index word of value when it is {"name":N} as get
// rebuilds it, with N at most inlineMax.
func (lv *lastValues) inline(v []byte) (uint64, bool) {
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
	return inlineBit | uint64(k)<<inlineShift | n, true
}

// Remove forgets key (a tombstone).
func (lv *lastValues) Remove(key []byte) {
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
func (lv *lastValues) maybeCompact() {
	if lv.Arena.Size-lv.Live <= max(lv.Live, keyview.CompactAbove) {
		return
	}
	var a keyview.Arena
	a.Reserve(lv.Live)
	lv.Index.Update(func(w uint64) uint64 {
		if w&inlineBit != 0 {
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
func (lv *lastValues) Len() int { return lv.Index.Len() }

// wordIndex maps 64-bit key hashes to 64-bit words without a pointer: two
// sorted arrays, 16 bytes a key, searched by bisection, and a map of the
// keys added since they were merged into the arrays, at most an eighth of
// them (or mergeAbove). A key is in one of the two: set finds it in the
// arrays first, and a removed key stays in them, goneWord, until the next
// merge.
type wordIndex struct {
	Hs, Ws []uint64
	Gone   int // entries of hs removed
	More   map[uint64]uint64
	// Loading defers merging to the caller (a seed merges each
	// partition's keys once: see TailSeed).
	Loading bool
}

// goneWord marks a removed key in wordIndex.Ws; no value word is all ones
// (a name's number is below maxNames).
const goneWord = ^uint64(0)

// mergeAbove is the fewest keys a wordIndex adds before merging them.
const mergeAbove = 1024

func (x *wordIndex) Get(h uint64) (uint64, bool) {
	if w, ok := x.More[h]; ok {
		return w, true
	}
	if i, ok := slices.BinarySearch(x.Hs, h); ok && x.Ws[i] != goneWord {
		return x.Ws[i], true
	}
	return 0, false
}

// Set makes w the word of h, and returns the word it replaces.
func (x *wordIndex) Set(h, w uint64) (uint64, bool) {
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
	if !x.Loading && len(x.More) > max(mergeAbove, len(x.Hs)/8) {
		x.Merge()
	}
	return old, ok
}

func (x *wordIndex) Remove(h uint64) {
	if _, ok := x.More[h]; ok {
		delete(x.More, h)
		return
	}
	if i, ok := slices.BinarySearch(x.Hs, h); ok && x.Ws[i] != goneWord {
		x.Ws[i] = goneWord
		x.Gone++
		if x.Gone > max(mergeAbove, len(x.Hs)/2) {
			x.Merge()
		}
	}
}

func (x *wordIndex) Len() int { return len(x.Hs) - x.Gone + len(x.More) }

// Update replaces every word w by f(w).
func (x *wordIndex) Update(f func(uint64) uint64) {
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
func (x *wordIndex) loaded() {
	x.Loading = false
	if len(x.More) > max(mergeAbove, len(x.Hs)/8) {
		x.Merge()
	}
}

// Merge makes the arrays hold every key, the removed ones left out.
func (x *wordIndex) Merge() {
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
