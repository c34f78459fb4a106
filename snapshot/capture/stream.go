package capture

import (
	"bytes"
	"context"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// This file is the streamed capture: a Snapshot whose source offsets are
// not built into SourceOffsets but encoded straight from the partition
// views when the snapshot is encoded. A capture that is only stored (the
// snapshot command, the daemon) then never holds a SourceOffset struct
// (about 160 bytes) per key next to the bytes they point to.

// lazySource is the source offsets of a streamed snapshot: for every
// partition read, its view and its kept keys in key order.
type lazySource struct {
	// capt and gen, for a Capturer that keeps its views for the next
	// Capture, tell whether they are still those this snapshot saw.
	capt *Capturer
	gen  uint64
	// scoped and inScope are the capture's scope, as build.OffsetBuilder has it.
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
	// once (EncodeOnce): Put lets each partition's view go as soon as it
	// is encoded; spent once it began, after which nothing encodes.
	once  bool
	spent atomic.Bool
}

// keyRef is a kept key of a streamed snapshot's partition: the number of
// its record in the view, and plainRef when connectjson.PlainKey accepts
// the key with a non-empty name, so that it is encoded without being
// parsed again. Four bytes a key: the key's bytes are the record's.
type keyRef uint32

const plainRef keyRef = 1 << 31

func refOf(rec int32, plain bool) keyRef {
	if plain {
		return keyRef(rec) | plainRef
	}
	return keyRef(rec)
}

func (k keyRef) rec() int32  { return int32(k &^ plainRef) }
func (k keyRef) plain() bool { return k&plainRef != 0 }

// lazyPart is one partition of a streamed snapshot.
type lazyPart struct {
	topic   string
	part    int32
	pv      *keyview.PartView
	entries []keyRef // kept keys, sorted by key bytes
	// prefix is how each of its source offsets starts in the document:
	// {"topic":...,"partition":...,"offset":
	prefix []byte
	// early marks a partition a one-shot capture compressed as soon as it
	// was read (see overlap.go): frames are its source offsets' zstd
	// frames, from its first key on, and kept counts them; pv and entries
	// are nil. err is what encoding them failed with, for Put to return.
	early  bool
	frames [][]byte
	kept   int
	err    error
}

// keys is the number of source offsets of lp.
func (lp *lazyPart) keys() int {
	if lp.early {
		return lp.kept
	}
	return len(lp.entries)
}

// key returns the key of entry e as a string over the view's arena.
func (lp *lazyPart) key(e keyRef) string { return keyview.ArenaString(lp.pv.KeyAt(e.rec())) }

// stale reports ErrStale when the views of ls changed since the capture,
// and ErrSpent once an EncodeOnce snapshot was stored.
func (ls *lazySource) stale() error {
	if ls.capt != nil && ls.capt.gen.Load() != ls.gen {
		return snapshot.ErrStale
	}
	if ls.spent.Load() {
		return snapshot.ErrSpent
	}
	return nil
}

// Len is the number of source offsets ls encodes.
func (ls *lazySource) Len() int { return ls.keys }

// Unparsed counts the kept keys that have no connector.
func (ls *lazySource) Unparsed() int { return ls.unparsed + ls.unnamed }

// ByConnector counts the kept keys of every connector.
func (ls *lazySource) ByConnector() map[string]int {
	out := make(map[string]int, len(ls.byConnector))
	maps.Copy(out, ls.byConnector)
	return out
}

// EncodeOnce makes ls a one-shot stream when it holds what was read
// itself: a Capturer that keeps its views for the next capture keeps them.
func (ls *lazySource) EncodeOnce() {
	if ls.capt == nil {
		ls.once = true
	}
}

// Spend marks a one-shot ls spent, and reports whether it is one.
func (ls *lazySource) Spend() bool {
	if !ls.once {
		return false
	}
	ls.spent.Store(true)
	return true
}

// Runs cuts the kept keys of ls into runs of at most n, partition by
// partition; a partition compressed early is one run of its frames.
func (ls *lazySource) Runs(n int) ([]snapshot.OffsetRun, error) {
	if err := ls.stale(); err != nil {
		return nil, err
	}
	var runs []snapshot.OffsetRun
	for i := range ls.parts {
		lp := &ls.parts[i]
		if lp.early {
			runs = append(runs, &lazyRun{src: ls, lp: lp})
			continue
		}
		left := new(atomic.Int32)
		for from := 0; from < len(lp.entries); from += n {
			left.Add(1)
			runs = append(runs, &lazyRun{src: ls, lp: lp, from: from, to: min(from+n, len(lp.entries)), left: left})
		}
	}
	return runs, nil
}

// lazyRun is the entries [from, to) of one partition of a stream, or a
// partition compressed early whole. left counts the runs of its partition
// not yet released, so that the last one lets the view go.
type lazyRun struct {
	src      *lazySource
	lp       *lazyPart
	from, to int
	left     *atomic.Int32
}

// Len is the number of source offsets of r.
func (r *lazyRun) Len() int {
	if r.lp.early {
		return r.lp.kept
	}
	return r.to - r.from
}

// Frames returns the frames of a partition compressed early (never nil
// for one), or nil.
func (r *lazyRun) Frames() ([][]byte, error) {
	if !r.lp.early {
		return nil, nil
	}
	if r.lp.frames == nil {
		return [][]byte{}, r.lp.err
	}
	return r.lp.frames, r.lp.err
}

// AppendTo encodes the source offsets of r from the partition's view.
func (r *lazyRun) AppendTo(dst []byte, comma bool, names map[string]string) ([]byte, error) {
	lp := r.lp
	b := build.OffsetBuilder{Scoped: r.src.scoped, InScope: r.src.inScope, Names: names}
	var err error
	for i, en := range lp.entries[r.from:r.to] {
		if i > 0 || comma {
			dst = append(dst, ',')
		}
		key, rec := lp.pv.KeyAt(en.rec()), lp.pv.Record(en.rec())
		if en.plain() && len(rec.Value) > 0 && connectjson.PlainObjectEnd(rec.Value, 0) == len(rec.Value) {
			dst = appendPlain(dst, lp, key, rec)
			continue
		}
		so, _ := b.Make(lp.topic, lp.part, keyview.ArenaString(key), rec)
		if dst, err = so.AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// Release lets go of the frames of a partition compressed early, or of the
// view of a partition once its last run is released.
func (r *lazyRun) Release() {
	if r.lp.early {
		r.lp.frames = nil
		return
	}
	if r.left.Add(-1) == 0 {
		r.lp.pv, r.lp.entries = nil, nil
	}
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
}

// keyClass is what a capture makes of one live key: whether it keeps it
// (its scope), under what connector, and what that costs to encode.
type keyClass struct {
	kept bool
	// name is the connector; empty for an unparsed or unnamed key.
	name     string
	unparsed bool // not [name, {map}]
	unnamed  bool // [name, {map}] with an empty name
	// plain: connectjson.PlainKey accepts the key (see keyRef).
	plain   bool
	suspect bool // off its murmur2 partition
}

// classify is build's view of key, live in partition p of a topic of
// nparts partitions; names interns connector names.
func classify(kb []byte, p, nparts int32, scoped bool, inScope func(string) bool, names map[string]string) keyClass {
	var c keyClass
	var perr error
	if n, _, ok := connectjson.PlainKey(kb); ok && len(n) > 0 {
		c.name, c.plain = snapshot.Intern(names, n), true
	} else {
		c.name, _, perr = snapshot.ParseSourceKey(kb, names)
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
	c.suspect = snapshot.PartitionFor(kb, nparts) != p
	return c
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

// keyScope is a capture's scope as the key indexers see it: scoped when
// the capture is limited to some connectors, inScope telling which.
type keyScope struct {
	scoped  bool
	inScope func(string) bool
}

// indexPart sorts the live keys of partition p of topic and keeps those of
// the capture's scope (scoped, inScope), as build does, without making a
// SourceOffset of any. It reads pv only, so partitions index in parallel.
// The sort works on a scratch of 32 bytes a key of this partition, es
// (reused when large enough; the grown scratch is returned); what is kept
// is 4 bytes a key.
func indexPart(topic string, p, nparts int32, pv *keyview.PartView, sc keyScope, es []build.KeyEntry) (*indexed, []build.KeyEntry) {
	scoped, inScope := sc.scoped, sc.inScope
	es = es[:0]
	for k, i := range pv.All() {
		es = append(es, build.KeyEntry{Key: k, Rec: i})
	}
	build.SortKeyEntries(es, 0)
	ix := &indexed{nparts: nparts, byConnector: make(map[string]int)}
	names := make(map[string]string)
	var (
		last string
		run  int
	)
	kept := make([]keyRef, 0, len(es))
	for _, e := range es {
		c := classify(keyview.StringBytes(e.Key), p, nparts, scoped, inScope, names)
		if !c.kept {
			continue
		}
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
			ix.suspects = append(ix.suspects, e.Key)
		}
		kept = append(kept, refOf(e.Rec, c.plain))
	}
	if run > 0 {
		ix.byConnector[last] += run
	}
	if len(kept) < cap(kept)/2 {
		kept = append([]keyRef(nil), kept...) // a scoped capture keeps few
	}
	prefix := snapshot.AppendString([]byte(`{"topic":`), topic)
	prefix = append(prefix, `,"partition":`...)
	prefix = strconv.AppendInt(prefix, int64(p), 10)
	prefix = append(prefix, `,"offset":`...)
	ix.part = lazyPart{topic: topic, part: p, pv: pv, entries: kept, prefix: prefix}
	return ix, es
}

// updateIndex brings ix, kept by an incremental Capturer for pv, up to
// date with the keys written since (pv.dirty): the result is what
// indexPart would make now, at the cost of the keys written. A key whose
// value changed keeps its entry (its record is updated in place); keys
// added or removed take a merge into new entries, so that a streamed
// snapshot made from the old ones is never changed under it.
func updateIndex(ix *indexed, pv *keyview.PartView, scoped bool, inScope func(string) bool) {
	dirty := make([]string, 0, len(pv.Dirty))
	for k := range pv.Dirty {
		dirty = append(dirty, k)
	}
	slices.Sort(dirty)
	lp := &ix.part
	es := lp.entries
	names := make(map[string]string)
	var (
		out     []keyRef
		changed bool
		i       int // es[:i] is in out
	)
	change := func(j int) {
		if !changed {
			changed = true
			out = make([]keyRef, 0, len(es)+len(dirty))
		}
		out = append(out, es[i:j]...)
		i = j
	}
	for _, k := range dirty {
		// A removed key's record keeps its key bytes (see keyview.PartView.Remove),
		// so es stays sorted by the keys of its records.
		j, found := slices.BinarySearchFunc(es[i:], k, func(e keyRef, k string) int { return strings.Compare(lp.key(e), k) })
		j += i
		rec, live := pv.Lookup(keyview.StringBytes(k))
		switch {
		case found && live && es[j].rec() == rec:
			// Rewritten: its record changed in place.
		case found && live:
			// Removed and written again since: a record of its own.
			change(j)
			out = append(out, refOf(rec, es[j].plain()))
			i++
		case found:
			c := classify(keyview.StringBytes(k), lp.part, ix.nparts, scoped, inScope, names)
			change(j)
			i++ // dropped
			ix.count(c, lp.key(es[j]), -1)
		case live:
			c := classify(keyview.StringBytes(k), lp.part, ix.nparts, scoped, inScope, names)
			if !c.kept {
				continue
			}
			change(j)
			out = append(out, refOf(rec, c.plain))
			ix.count(c, k, 1)
		}
	}
	if changed {
		out = append(out, es[i:]...)
		lp.entries = out
	}
	clear(pv.Dirty)
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
			var scratch []build.KeyEntry
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				pv := j.pv
				if ix, _ := pv.Index.(*indexed); keep && ix != nil && ix.nparts == j.nparts {
					updateIndex(ix, pv, scoped, inScope)
					out[i] = ix
					upd.Add(1)
					continue
				}
				out[i], scratch = indexPart(j.topic, j.part, j.nparts, pv, keyScope{scoped, inScope}, scratch)
				pv.Built, pv.Index, pv.Dirty = nil, nil, nil
				if keep {
					pv.Index, pv.Dirty = out[i], make(map[string]struct{})
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
	pv           *keyview.PartView
}

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
func (c *Capturer) CaptureStreamed(ctx context.Context) (*snapshot.Snapshot, error) {
	return c.capture(ctx, captureMode{keep: c.opts.Incremental, streamed: true})
}

// appendPlain appends the source offset of key, a key marked plainRef,
// of lp as SourceOffset.appendJSON would, for a value that
// connectjson.PlainObjectEnd accepts whole. Both are printable ASCII
// without '\\' then, so as JSON strings only their '"' are escaped, and
// both are already compact JSON objects. The key is ["name",{...}]: the
// name ends at its first '"' after the opening one.
func appendPlain(dst []byte, lp *lazyPart, key []byte, r keyview.Record) []byte {
	nameEnd := 2 + bytes.IndexByte(key[2:], '"')
	dst = append(dst, lp.prefix...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, `,"key":"`...)
	dst = appendQuotes(dst, key)
	dst = append(dst, `","value":"`...)
	dst = appendQuotes(dst, r.Value)
	dst = append(dst, `","connector":"`...)
	dst = append(dst, key[2:nameEnd]...)
	dst = append(dst, `","source_partition":`...)
	dst = append(dst, key[nameEnd+2:len(key)-1]...)
	dst = append(dst, `,"source_offset":`...)
	dst = append(dst, r.Value...)
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
