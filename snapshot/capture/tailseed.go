package capture

// This file seeds a new journal epoch's tail with the last values of its
// base snapshot's source offsets (TailSeed), straight from the document a
// store read decodes (SeedSink, a snapshot.OffsetSink), so that the epoch
// never holds the base's SourceOffsets beside what the tail keeps.

import (
	"hash/maphash"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TailSeed is what a Tail keeps of a state's source offsets: the
// lastValues of every offsets topic partition that has keys, under one
// hash seed. It seeds one Tail (NewTail). A store read with a SeedSink
// decodes a snapshot's source offsets straight into one, so that a new
// journal epoch never holds its base snapshot's SourceOffsets (160 bytes
// a key and a copy of its bytes) beside what the tail keeps.
type TailSeed struct {
	Seed maphash.Seed
	Last map[string]map[int32]*lastValues
	// cur is the lastValues set last: a document holds each partition's
	// keys in one run, whose keys are merged once when it ends (see
	// wordIndex.Loading), from a map of one partition's keys at most;
	// keys of partitions interleaved are merged as set merges them.
	cur *lastValues
	// Taken says a Tail took the lastValues (NewTail).
	Taken bool
}

func NewTailSeed() *TailSeed {
	return &TailSeed{Seed: maphash.MakeSeed(), Last: map[string]map[int32]*lastValues{}}
}

// set makes value the last value of key in topic's partition.
func (s *TailSeed) set(topic string, partition int32, key, value []byte) {
	parts := s.Last[topic]
	if parts == nil {
		parts = map[int32]*lastValues{}
		s.Last[topic] = parts
	}
	lv := parts[partition]
	if lv == nil {
		lv = newLastValues(s.Seed)
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
func SeedOf(state *snapshot.Snapshot) *TailSeed {
	s := NewTailSeed()
	t := state.SourceTable()
	for i := range int32(t.Len()) {
		s.set(t.Topic(i), t.Partition(i), t.Key(i), t.Value(i))
	}
	s.merge()
	return s
}

// merge merges the keys every lastValues added into its arrays (see
// wordIndex), once the seed holds them all.
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
func (k *SeedSink) Add(o *snapshot.SourceOffset, d *snapshot.OffsetDecoder) bool {
	k.S.set(o.Topic, o.Partition, o.Key, o.Value)
	d.Recycle()
	return true
}

func (k *SeedSink) Finish(s *snapshot.Snapshot) {
	k.S.merge()
	s.SetSourceOffsets(nil)
	k.Done = true
}

// Decoded finishes a read of s with the sink (store's Snapshots.GetWith
// calls it): a document the streamed decoder did not take was decoded
// whole, and its source offsets then go into the seed, so that S holds
// them and s does not either way.
func (k *SeedSink) Decoded(s *snapshot.Snapshot) {
	if !k.Done {
		k.S = SeedOf(s)
		s.SetSourceOffsets(nil)
		k.Done = true
	}
}
