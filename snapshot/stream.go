package snapshot

import (
	"context"
	"errors"
)

// This file is the streamed capture: a Snapshot whose source offsets are
// not built into SourceOffsets but encoded straight from the partition
// views when the snapshot is encoded. A capture that is only stored (the
// snapshot command, the daemon) then never holds 200,000 SourceOffset
// structs (about 160 bytes each) next to the bytes they point to; see
// docs/benchmarks.md.

// ErrStale is returned when a streamed snapshot (CaptureStreamed) is
// encoded after its incremental Capturer captured again: the partition
// views it reads from have moved on.
var ErrStale = errors.New("streamed snapshot is stale: its Capturer captured again; encode (Put) a streamed snapshot before the next Capture")

// lazySource is the source offsets of a streamed snapshot: for every
// partition read, its view and its kept keys in key order.
type lazySource struct {
	// capt and gen, for a Capturer that keeps its views for the next
	// Capture, tell whether they are still those this snapshot saw.
	capt *Capturer
	gen  uint64
	// scoped and inScope are the capture's scope, as offsetBuilder has it.
	scoped  bool
	inScope func(string) bool
	parts   []lazyPart
	// keys counts the kept keys, unparsed those that are not [name, {map}],
	// byConnector the others per connector.
	keys, unparsed int
	byConnector    map[string]int
}

// lazyPart is one partition of a streamed snapshot.
type lazyPart struct {
	topic   string
	part    int32
	pv      *partView
	entries []keyEntry // kept keys, sorted by key bytes
}

// stale reports ErrStale when the views of ls changed since the capture.
func (ls *lazySource) stale() error {
	if ls.capt != nil && ls.capt.gen.Load() != ls.gen {
		return ErrStale
	}
	return nil
}

// index sorts the live keys of partition p of topic, keeps those of the
// capture's scope and counts them into ls; it returns the kept keys that
// are off their murmur2 partition, as build does.
func (ls *lazySource) index(b *offsetBuilder, topic string, p, nparts int32, pv *partView) []string {
	es := make([]keyEntry, 0, len(pv.keys))
	for k, i := range pv.keys {
		es = append(es, keyEntry{key: k, rec: i})
	}
	sortKeyEntries(es, 0)
	var (
		suspects []string
		last     string
		run      int
	)
	kept := es[:0]
	for _, e := range es {
		kb := stringBytes(e.key)
		name, _, perr := parseSourceKey(kb, b.names)
		if perr != nil {
			if b.scoped {
				continue
			}
			ls.unparsed++
		} else {
			if !b.inScope(name) {
				continue
			}
			b.register(name)
			// Keys sort by connector name first, mostly: count runs.
			if name != last {
				if run > 0 {
					ls.byConnector[last] += run
				}
				last, run = name, 0
			}
			run++
		}
		if PartitionFor(kb, nparts) != p {
			suspects = append(suspects, e.key)
		}
		kept = append(kept, e)
	}
	if run > 0 {
		ls.byConnector[last] += run
	}
	ls.keys += len(kept)
	ls.parts = append(ls.parts, lazyPart{topic: topic, part: p, pv: pv, entries: kept})
	return suspects
}

// SourceKeys is the number of source offsets: len(SourceOffsets), or for a
// streamed snapshot (CaptureStreamed) the number it will encode.
func (s *Snapshot) SourceKeys() int {
	if s.lazy != nil {
		return s.lazy.keys
	}
	return len(s.SourceOffsets)
}

// SourceKeysByConnector counts the source offsets of every connector
// (keys that are not [name, {map}] are not counted); it works on streamed
// snapshots too.
func (s *Snapshot) SourceKeysByConnector() map[string]int {
	if s.lazy != nil {
		out := make(map[string]int, len(s.lazy.byConnector))
		for k, v := range s.lazy.byConnector {
			out[k] = v
		}
		return out
	}
	out := make(map[string]int)
	for _, o := range s.SourceOffsets {
		if o.Connector != "" {
			out[o.Connector]++
		}
	}
	return out
}

// Streamed reports whether s is a streamed snapshot, whose SourceOffsets
// are not held in memory (see Capturer.CaptureStreamed).
func (s *Snapshot) Streamed() bool { return s.lazy != nil }

// CaptureStreamed is Capture for a snapshot that is going to be stored and
// not looked at: its source offsets are not built into SourceOffsets
// (which stays nil) but encoded straight from what the Capturer read when
// the snapshot is encoded (Store.Put, Encode). The document is byte for
// byte the one Capture's snapshot encodes to, and SourceKeys, Unparsed and
// SourceKeysByConnector count as they would; everything else is filled in
// as Capture fills it.
//
// A streamed snapshot of an incremental Capturer reads the Capturer's own
// state: encode it before the Capturer's next Capture, after which
// encoding it fails with ErrStale. One of a Capturer that is not
// incremental holds what was read itself and can be encoded at any time.
func (c *Capturer) CaptureStreamed(ctx context.Context) (*Snapshot, error) {
	return c.capture(ctx, c.opts.Incremental, true)
}
