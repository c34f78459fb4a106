package snapshot

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
)

// This file is the streamed capture: a Snapshot whose source offsets are
// not built into SourceOffsets but encoded straight from the partition
// views when the snapshot is encoded. A capture that is only stored (the
// snapshot command, the daemon) then never holds 200,000 SourceOffset
// structs (about 160 bytes each) next to the bytes they point to; see
// docs/benchmarks.md.

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
	// unnamed counts keys [name, {map}] with an empty name, which like
	// unparsed keys have no connector.
	unnamed int
}

// A keyEntry of a streamed snapshot whose key connectjson.PlainKey accepts
// holds, once sorted, in its word: plainBit, the index of its connector
// name in lazyPart.names, and where in the key the partition object
// starts and ends. Such keys are encoded without being parsed again.
const plainBit = 1 << 63

func plainEntry(name uint32, start, end int) uint64 {
	return plainBit | uint64(name)<<32 | uint64(start)<<16 | uint64(end)
}

// lazyPart is one partition of a streamed snapshot.
type lazyPart struct {
	topic   string
	part    int32
	pv      *partView
	entries []keyEntry // kept keys, sorted by key bytes
	// prefix is how each of its source offsets starts in the document:
	// {"topic":...,"partition":...,"offset":
	prefix []byte
	// names are the connector names of its plain keys, by the index their
	// keyEntry holds (see plainEntry).
	names []string
}

// stale reports ErrStale when the views of ls changed since the capture.
func (ls *lazySource) stale() error {
	if ls.capt != nil && ls.capt.gen.Load() != ls.gen {
		return ErrStale
	}
	return nil
}

// indexed is what indexPart made of one partition. An incremental
// Capturer keeps it in the partition's view and updateIndex brings it up
// to date with the keys written since, instead of sorting them all again.
type indexed struct {
	part   lazyPart
	nparts int32 // the topic's partitions when indexed
	// suspects are the kept keys off their murmur2 partition, as build
	// finds them.
	suspects []string
	unparsed int
	unnamed  int
	// byConnector counts the kept keys per connector.
	byConnector map[string]int
	// nameIdx indexes part.names, made when updateIndex first needs it.
	nameIdx map[string]uint32
}

// keyClass is what a capture makes of one live key: whether it keeps it
// (its scope), under what connector, and what that costs to encode.
type keyClass struct {
	kept bool
	// name is the connector; empty for an unparsed or unnamed key.
	name     string
	unparsed bool // not [name, {map}]
	unnamed  bool // [name, {map}] with an empty name
	// plain keys (connectjson.PlainKey) have their partition object at
	// key[start:end].
	plain      bool
	start, end int
	suspect    bool // off its murmur2 partition
}

// classify is build's view of key, live in partition p of a topic of
// nparts partitions; names interns connector names.
func classify(kb []byte, p, nparts int32, scoped bool, inScope func(string) bool, names map[string]string) keyClass {
	var c keyClass
	var perr error
	if n, raw, ok := connectjson.PlainKey(kb); ok && len(n) > 0 && len(kb) <= 0xffff {
		c.name, c.plain = intern(names, n), true
		c.start = len(kb) - 1 - len(raw) // raw ends just before the ']'
		c.end = c.start + len(raw)
	} else {
		c.name, _, perr = parseSourceKey(kb, names)
	}
	switch {
	case perr != nil:
		if scoped {
			return keyClass{}
		}
		c.unparsed, c.name = true, ""
	case !inScope(c.name):
		return keyClass{}
	case c.name == "":
		c.unnamed = true
	}
	c.kept = true
	c.suspect = PartitionFor(kb, nparts) != p
	return c
}

// word is the keyEntry word of a kept key of class c (see plainEntry).
func (ix *indexed) word(c keyClass) uint64 {
	if !c.plain {
		return 0
	}
	if ix.nameIdx == nil {
		ix.nameIdx = make(map[string]uint32, len(ix.part.names))
		for i, n := range ix.part.names {
			ix.nameIdx[n] = uint32(i)
		}
	}
	idx, ok := ix.nameIdx[c.name]
	if !ok {
		idx = uint32(len(ix.part.names))
		ix.part.names = append(ix.part.names, c.name)
		ix.nameIdx[c.name] = idx
	}
	return plainEntry(idx, c.start, c.end)
}

// count adds (n = 1) or takes away (n = -1) a kept key of class c.
func (ix *indexed) count(c keyClass, key string, n int) {
	switch {
	case c.unparsed:
		ix.unparsed += n
	case c.unnamed:
		ix.unnamed += n
	default:
		if ix.byConnector[c.name] += n; ix.byConnector[c.name] == 0 {
			delete(ix.byConnector, c.name)
		}
	}
	if !c.suspect {
		return
	}
	if n > 0 {
		ix.suspects = append(ix.suspects, key)
	} else if i := slices.Index(ix.suspects, key); i >= 0 {
		ix.suspects = slices.Delete(ix.suspects, i, i+1)
	}
}

// indexPart sorts the live keys of partition p of topic and keeps those of
// the capture's scope (scoped, inScope), as build does, without making a
// SourceOffset of any. It reads pv only, so partitions index in parallel.
func indexPart(topic string, p, nparts int32, pv *partView, scoped bool, inScope func(string) bool) *indexed {
	es := make([]keyEntry, 0, pv.len())
	for k, i := range pv.all() {
		es = append(es, keyEntry{key: k, rec: i})
	}
	sortKeyEntries(es, 0)
	ix := &indexed{nparts: nparts, byConnector: make(map[string]int)}
	names := make(map[string]string)
	var (
		last string
		run  int
	)
	kept := es[:0]
	for _, e := range es {
		c := classify(stringBytes(e.key), p, nparts, scoped, inScope, names)
		if !c.kept {
			continue
		}
		e.word = ix.word(c)
		switch {
		case c.unparsed:
			ix.unparsed++
		case c.unnamed:
			ix.unnamed++
		case c.name != last:
			// Keys sort by connector name first, mostly: count runs.
			if run > 0 {
				ix.byConnector[last] += run
			}
			last, run = c.name, 1
		default:
			run++
		}
		if c.suspect {
			ix.suspects = append(ix.suspects, e.key)
		}
		kept = append(kept, e)
	}
	if run > 0 {
		ix.byConnector[last] += run
	}
	prefix := appendString([]byte(`{"topic":`), topic)
	prefix = append(prefix, `,"partition":`...)
	prefix = strconv.AppendInt(prefix, int64(p), 10)
	prefix = append(prefix, `,"offset":`...)
	ix.part = lazyPart{topic: topic, part: p, pv: pv, entries: kept, prefix: prefix, names: ix.part.names}
	return ix
}

// updateIndex brings ix, kept by an incremental Capturer for pv, up to
// date with the keys written since (pv.dirty): the result is what
// indexPart would make now, at the cost of the keys written. A key whose
// value changed keeps its entry (its record is updated in place); keys
// added or removed take a merge into new entries, so that a streamed
// snapshot made from the old ones is never changed under it.
func updateIndex(ix *indexed, pv *partView, scoped bool, inScope func(string) bool) {
	dirty := make([]string, 0, len(pv.dirty))
	for k := range pv.dirty {
		dirty = append(dirty, k)
	}
	slices.Sort(dirty)
	es := ix.part.entries
	names := make(map[string]string)
	var (
		out     []keyEntry
		changed bool
		i       int // es[:i] is in out
	)
	change := func(j int) {
		if !changed {
			changed = true
			out = make([]keyEntry, 0, len(es)+len(dirty))
		}
		out = append(out, es[i:j]...)
		i = j
	}
	for _, k := range dirty {
		j, found := slices.BinarySearchFunc(es[i:], k, func(e keyEntry, k string) int { return strings.Compare(e.key, k) })
		j += i
		rec, live := pv.lookup(stringBytes(k))
		switch {
		case found && live && es[j].rec == rec:
			// Rewritten: its record changed in place.
		case found && live:
			// Removed and written again since: a record of its own.
			change(j)
			e := es[j]
			e.rec = rec
			out = append(out, e)
			i++
		case found:
			c := classify(stringBytes(k), ix.part.part, ix.nparts, scoped, inScope, names)
			change(j)
			i++ // dropped
			ix.count(c, es[j].key, -1)
		case live:
			c := classify(stringBytes(k), ix.part.part, ix.nparts, scoped, inScope, names)
			if !c.kept {
				continue
			}
			change(j)
			out = append(out, keyEntry{key: k, rec: rec, word: ix.word(c)})
			ix.count(c, k, 1)
		}
	}
	if changed {
		out = append(out, es[i:]...)
		ix.part.entries = out
	}
	clear(pv.dirty)
}

// indexParts runs indexPart (or updateIndex, for a partition whose view
// keeps an index) over jobs on every CPU and returns the results in the
// order of jobs. With keep, every view keeps its index for the next
// capture; without, none does.
func indexParts(jobs []indexJob, scoped bool, inScope func(string) bool, keep bool) (_ []*indexed, updated int) {
	out := make([]*indexed, len(jobs))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		upd  atomic.Int64
	)
	for range min(max(1, runtime.GOMAXPROCS(0)), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				pv := j.pv
				if ix := pv.index; keep && ix != nil && ix.nparts == j.nparts {
					updateIndex(ix, pv, scoped, inScope)
					out[i] = ix
					upd.Add(1)
					continue
				}
				out[i] = indexPart(j.topic, j.part, j.nparts, pv, scoped, inScope)
				pv.built, pv.index, pv.dirty = nil, nil, nil
				if keep {
					pv.index, pv.dirty = out[i], make(map[string]struct{})
				}
			}
		}()
	}
	wg.Wait()
	return out, int(upd.Load())
}

// indexJob is one partition for indexParts.
type indexJob struct {
	topic        string
	part, nparts int32
	pv           *partView
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
	return c.capture(ctx, captureMode{keep: c.opts.Incremental, streamed: true})
}

// appendPlain appends the source offset of entry en of lp as
// SourceOffset.appendJSON would, for a key plainEntry marked and a value
// that connectjson.PlainObjectEnd accepts whole. Both are printable ASCII
// without '\\' then, so as JSON strings only their '"' are escaped, and
// both are already compact JSON objects.
func appendPlain(dst []byte, lp *lazyPart, en keyEntry, r record) []byte {
	key := stringBytes(en.key)
	start, end := int(en.word>>16&0xffff), int(en.word&0xffff)
	dst = append(dst, lp.prefix...)
	dst = strconv.AppendInt(dst, r.offset, 10)
	dst = append(dst, `,"key":"`...)
	dst = appendQuotes(dst, key)
	dst = append(dst, `","value":"`...)
	dst = appendQuotes(dst, r.value)
	dst = append(dst, `","connector":"`...)
	dst = append(dst, lp.names[uint32(en.word>>32)&^(1<<31)]...)
	dst = append(dst, `","source_partition":`...)
	dst = append(dst, key[start:end]...)
	dst = append(dst, `,"source_offset":`...)
	dst = append(dst, r.value...)
	return append(dst, '}')
}

// appendQuotes appends s with every '"' escaped: appendString for bytes
// that are printable ASCII without '\\', minus the enclosing quotes.
func appendQuotes(dst, s []byte) []byte {
	for {
		i := bytes.IndexByte(s, '"')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, '\\', '"')
		s = s[i+1:]
	}
}
