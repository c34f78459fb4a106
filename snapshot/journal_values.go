package snapshot

// This file is what the journal's tail keeps of every live source key for
// event detection: the last value, found by a 64-bit hash of the key, not
// the key itself, and how a new epoch's tail is seeded with them from its
// base snapshot without decoding its SourceOffsets. See Tail.source.

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
)

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

// tailSeed is what a Tail keeps of a state's source offsets: the
// lastValues of every offsets topic partition that has keys, under one
// hash seed. Store.GetForTail decodes a snapshot's source offsets straight
// into one, so that a new journal epoch never holds its base snapshot's
// SourceOffsets (160 bytes a key and a copy of its bytes, 40 MB at 200,000
// keys) beside what the tail keeps.
type tailSeed struct {
	seed maphash.Seed
	last map[string]map[int32]*lastValues
	// taken says a Tail took the lastValues (NewTail).
	taken bool
}

func newTailSeed() *tailSeed {
	return &tailSeed{seed: maphash.MakeSeed(), last: map[string]map[int32]*lastValues{}}
}

// set makes value the last value of key in topic's partition.
func (s *tailSeed) set(topic string, partition int32, key, value []byte) {
	parts := s.last[topic]
	if parts == nil {
		parts = map[int32]*lastValues{}
		s.last[topic] = parts
	}
	lv := parts[partition]
	if lv == nil {
		lv = newLastValues(s.seed)
		parts[partition] = lv
	}
	lv.set(key, value)
}

// seedOf returns what a Tail keeps of state's source offsets: the seed
// GetForTail decoded them into, or one made from them, in their order (a
// key twice in a partition keeps its last value, as the tail's record hook
// would).
func seedOf(state *Snapshot) *tailSeed {
	if state.seed != nil {
		if state.seed.taken {
			panic("snapshot: a snapshot read by Store.GetForTail seeds one Tail only")
		}
		state.seed.taken = true
		return state.seed
	}
	s := newTailSeed()
	t := state.SourceTable()
	for i := range int32(t.Len()) {
		s.set(t.Topic(i), t.Partition(i), t.Key(i), t.Value(i))
	}
	return s
}

// seedSink decodes the source offsets of a document into a tailSeed.
type seedSink struct{ s *tailSeed }

// add copies o's value into the seed, and lets the decoder's arena go once
// it is large: nothing else keeps what it holds.
func (k *seedSink) add(o *SourceOffset, d *offsetDecoder) bool {
	k.s.set(o.Topic, o.Partition, o.Key, o.Value)
	if d.arena.size > 1<<20 {
		d.arena = arena{}
	}
	return true
}

func (k *seedSink) finish(s *Snapshot) { s.SourceOffsets, s.seed = nil, k.s }

// errSeeded is the error of encoding a snapshot read by GetForTail.
var errSeeded = errors.New("snapshot was read for the journal (its source offsets were not kept) and cannot be encoded")

// GetForTail reads the snapshot with ID id for a new journal epoch: its
// source offsets are decoded straight into what NewTail keeps of them (the
// last value of every key, see lastValues), and SourceOffsets stays nil,
// so the epoch's start never holds them. Everything else (topics,
// connectors, sink groups) is Get's. Such a snapshot seeds one Tail (a
// second NewTail over it panics), reports no source keys and cannot be
// encoded. A document the streamed decoder does not take is decoded whole,
// as Get does, and its source offsets are then put into the seed.
func (s *Store) GetForTail(ctx context.Context, id string) (*Snapshot, error) {
	if _, err := ParseID(id); err != nil {
		return nil, fmt.Errorf("read snapshot %q for the journal: %w", id, err)
	}
	snap, _, err := s.getAs(ctx, id, toTailSeed)
	if err != nil {
		return nil, err
	}
	if snap.seed == nil {
		snap.seed, snap.SourceOffsets = seedOf(snap), nil
	}
	return snap, nil
}
