package keyview

import (
	"bytes"
	"hash/maphash"
)

// KeyIndex finds a partition view's records by key: open addressing with
// linear probing over 8-byte slots, each holding 32 bits of the key's hash
// and the record's number plus one (0 is an empty slot). It holds no
// pointers, so the garbage collector never scans it, and costs 8 to 16
// bytes a key instead of the ~50 of a map[string]int32 (a string header
// per key, the map's buckets and their slack). The keys themselves are in
// the view's arena; a lookup compares a candidate's bytes only when its
// 32 hash bits match.
type KeyIndex struct {
	slots []uint64
	n     int // keys held
}

// seed is the hash seed of every KeyIndex of the process.
var seed = maphash.MakeSeed()

func hashKey(key []byte) uint32 {
	h := maphash.Bytes(seed, key)
	return uint32(h) ^ uint32(h>>32)
}

func slotOf(h uint32, rec int32) uint64 { return uint64(h)<<32 | uint64(uint32(rec)+1) }
func slotHash(s uint64) uint32          { return uint32(s >> 32) }
func slotRec(s uint64) int32            { return int32(uint32(s) - 1) }

// find returns the slot of key, or the empty slot where it would go.
// keyOf gives the key bytes of a record.
func (ix *KeyIndex) find(key []byte, h uint32, keyOf func(int32) []byte) (int, bool) {
	mask := len(ix.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := ix.slots[i]
		if s == 0 {
			return i, false
		}
		if slotHash(s) == h && bytes.Equal(keyOf(slotRec(s)), key) {
			return i, true
		}
	}
}

// lookup returns the record of key.
func (ix *KeyIndex) lookup(key []byte, keyOf func(int32) []byte) (int32, bool) {
	if ix.n == 0 {
		return 0, false
	}
	i, ok := ix.find(key, hashKey(key), keyOf)
	if !ok {
		return 0, false
	}
	return slotRec(ix.slots[i]), true
}

// insert adds key, which is not in the index, as record rec.
func (ix *KeyIndex) insert(key []byte, rec int32, keyOf func(int32) []byte) {
	if (ix.n+1)*4 > len(ix.slots)*3 {
		ix.grow()
	}
	h := hashKey(key)
	i, _ := ix.find(key, h, keyOf)
	ix.slots[i] = slotOf(h, rec)
	ix.n++
}

// grow doubles the slots (16 at first), placing every key again from the
// hash bits its slot keeps: no key is read.
func (ix *KeyIndex) grow() {
	old := ix.slots
	ix.slots = make([]uint64, max(16, 2*len(old)))
	mask := len(ix.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := int(slotHash(s)) & mask
		for ix.slots[i] != 0 {
			i = (i + 1) & mask
		}
		ix.slots[i] = s
	}
}

// remove takes key out of the index and returns its record. The slots
// after it move back (backward shift deletion), so no tombstone is left
// and lookups never slow down under churn.
func (ix *KeyIndex) remove(key []byte, keyOf func(int32) []byte) (int32, bool) {
	if ix.n == 0 {
		return 0, false
	}
	i, ok := ix.find(key, hashKey(key), keyOf)
	if !ok {
		return 0, false
	}
	rec := slotRec(ix.slots[i])
	mask := len(ix.slots) - 1
	for j := (i + 1) & mask; ix.slots[j] != 0; j = (j + 1) & mask {
		home := int(slotHash(ix.slots[j])) & mask
		// The slot at j may move to i unless its home lies in (i, j],
		// cyclically.
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = 0
	ix.n--
	return rec, true
}

// renumber rewrites every record number through to (new numbers after a
// compaction of the records), and fits the slots to the keys left (a
// partition whose keys were mostly removed gives its slots back). The
// keys are placed again from the hash bits their slots keep: none is read.
func (ix *KeyIndex) renumber(to []int32) {
	size := 0
	if ix.n > 0 {
		size = 16
		for size*3 < ix.n*4 {
			size *= 2
		}
	}
	old := ix.slots
	if size != len(old) {
		ix.slots = make([]uint64, size)
	}
	mask := size - 1
	for i, s := range old {
		if s == 0 {
			continue
		}
		s = slotOf(slotHash(s), to[slotRec(s)])
		if size == len(old) {
			old[i] = s
			continue
		}
		j := int(slotHash(s)) & mask
		for ix.slots[j] != 0 {
			j = (j + 1) & mask
		}
		ix.slots[j] = s
	}
}

// bytes is the memory the index holds.
func (ix *KeyIndex) bytes() int64 { return int64(len(ix.slots)) * 8 }
