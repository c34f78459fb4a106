package snapshot

// This file is what the journal's tail keeps of every live source key for
// event detection: the last value, found by a 64-bit hash of the key, not
// the key itself. See Tail.source.

import "hash/maphash"

// lastValues is the last value of every live key of one offsets topic
// partition, as the tail needs it to tell a source offset rewritten
// backwards (Rewound) or tombstoned: an index from the key's 64-bit hash to
// the value's bytes in an arena. It holds no key bytes and no pointer per
// key (the collector never scans it): about 20 bytes a key besides the
// value. Two keys whose hashes collide (about one chance in 10^9 for
// 200,000 keys) share a value, which can only make an event be seen or
// missed; the journal's records are the keys and values read, never these.
type lastValues struct {
	seed  maphash.Seed
	index map[uint64]span
	arena arena
	live  int64 // bytes of the values indexed
}

func newLastValues(seed maphash.Seed) *lastValues {
	return &lastValues{seed: seed, index: map[uint64]span{}}
}

// get returns the last value of key; the bytes are valid until the next
// set or remove.
func (lv *lastValues) get(key []byte) ([]byte, bool) {
	s, ok := lv.index[maphash.Bytes(lv.seed, key)]
	if !ok {
		return nil, false
	}
	return lv.arena.bytes(s), true
}

// set makes value the last value of key.
func (lv *lastValues) set(key, value []byte) {
	h := maphash.Bytes(lv.seed, key)
	if old, ok := lv.index[h]; ok {
		lv.live -= int64(old.n)
	}
	lv.index[h] = lv.arena.put(value)
	lv.live += int64(len(value))
	lv.maybeCompact()
}

// remove forgets key (a tombstone).
func (lv *lastValues) remove(key []byte) {
	h := maphash.Bytes(lv.seed, key)
	if old, ok := lv.index[h]; ok {
		lv.live -= int64(old.n)
		delete(lv.index, h)
	}
}

// maybeCompact copies the live values into a new arena once the dead ones
// (values overwritten, keys removed) are more than the live ones and
// compactAbove: under steady rewrites the arena stays within about twice
// the live values, at a cost linear in them once per doubling.
func (lv *lastValues) maybeCompact() {
	if lv.arena.size-lv.live <= max(lv.live, compactAbove) {
		return
	}
	var a arena
	a.reserve(lv.live)
	for h, s := range lv.index {
		lv.index[h] = a.put(lv.arena.bytes(s))
	}
	lv.arena = a
}

// len is the number of keys held.
func (lv *lastValues) len() int { return len(lv.index) }
