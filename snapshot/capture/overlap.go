package capture

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/frames"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// This file is the overlapped capture of CaptureStreamedOnce: each offsets
// partition is indexed, encoded and compressed into the zstd frames Put
// stores, as soon as its read reached its end, while the other partitions
// are still read; then its view goes. A fetch fills partitions in request
// order, so the partitions of a large topic are read one group after
// another, many of them well before the read ends: their work overlaps the rest of the read, and the peak, which was at the
// end of the read with every view held, holds their frames instead. A
// partition read with less than a tenth of the read left, or of less than
// 2 MiB, goes the way of CaptureStreamed's: indexed after the read,
// compressed by Put.
//
// The document is the one CaptureStreamed's snapshot encodes to, byte for
// byte: a partition's frames hold exactly the pieces Put would encode for
// it, without the comma that separates it from the partition before, which
// Put writes in a frame of its own (a few bytes). Only the frame
// boundaries differ: such a partition's frames never hold another's keys,
// nor the document's head.

// earlyMinKeys is the fewest kept keys a partition needs to be compressed
// on its own as soon as it is read: a few keys compress better in a frame
// shared with the partitions around them, as Put makes it, and hold little
// memory until then.
const earlyMinKeys = snapshot.PieceKeys / 4

// earlyMinLeft is the share of the read that must be left to read for a
// partition that reached its end to be compressed at once (see partDone).
const earlyMinLeft = 0.1

// earlyMinBytes is the fewest live bytes (keys and values) a partition
// needs to be compressed as soon as it is read: a job holds 5 MiB of
// scratch and encoder while it runs, and letting go of smaller views
// early does not pay for it: with small partitions early jobs raise the
// peak RSS, with large ones they lower it.
const earlyMinBytes = 2 << 20

// earlyKnobs are newOverlap's settings, which tests change.
type earlyKnobs struct {
	z        snapshot.PieceSizes
	minKeys  int
	minLeft  float64
	minBytes int64
}

// overlap is the work a one-shot streamed capture does on the offsets
// partitions as their reads end.
type overlap struct {
	scoped  bool
	inScope func(string) bool
	nparts  map[string]int32 // partitions of each offsets topic
	// z cuts a partition into pieces (frames), minKeys is the fewest
	// kept keys a partition compressed early has (earlyMinKeys).
	z       snapshot.PieceSizes
	minKeys int
	// minLeft is the share of the read that must be left for a partition
	// read to its end to be compressed early (earlyMinLeft), minBytes its
	// fewest live bytes (earlyMinBytes).
	minLeft  float64
	minBytes int64
	seed     maphash.Seed
	// scratch holds one jobScratch per job that may run at once (one a
	// CPU): a job takes one to run and gives it back. One job at a time
	// while the read goes on held more memory, not less: views went later.
	scratch chan *jobScratch
	wg      sync.WaitGroup
	mu      sync.Mutex
	parts   map[*keyview.PartView]*earlyPart
}

// earlyPart is what overlap made of one partition.
type earlyPart struct {
	ix *indexed
	// freed: the view's keys and values are gone, ix.part holds frames,
	// and hashes are the maphash of every kept key, for build.DuplicateWarnings
	// (sorted on first use).
	freed  bool
	hashes []uint64
	sorted bool
	// suspects is ix.suspects as a set, made on first use.
	suspects map[string]struct{}
}

func newOverlap(scoped bool, inScope func(string) bool, nparts map[string]int32, k earlyKnobs) *overlap {
	o := &overlap{
		scoped: scoped, inScope: inScope, nparts: nparts,
		z: k.z.OrDefault(), minKeys: k.minKeys, minLeft: k.minLeft, minBytes: k.minBytes,
		seed: maphash.MakeSeed(), parts: make(map[*keyview.PartView]*earlyPart),
	}
	o.scratch = make(chan *jobScratch, max(1, runtime.GOMAXPROCS(0)))
	for range cap(o.scratch) {
		o.scratch <- new(jobScratch)
	}
	return o
}

// jobScratch is what a job reuses from the one before: the sort's
// entries, the encoded piece (2.5 MB for a piece of 8,192 keys) and the
// zstd encoder (its tables are a few MiB; frames.Encoder's sync.Pool loses
// them to the collections between jobs).
type jobScratch struct {
	es  []build.KeyEntry
	buf []byte
	zw  *zstd.Encoder
}

// partDone is kread.ReadTopicsNotify's onDone: partition p of v was read to
// its end, with a share left of the read still to read. It starts the
// partition's job and returns at once, unless less than o.minLeft of the
// read is left (nothing is left to overlap) or the partition holds fewer
// than o.minBytes: then the partition is indexed after the read and
// compressed by Put, its view let go as Put goes, as CaptureStreamed's.
func (o *overlap) partDone(v *keyview.TopicView, p int32, pv *keyview.PartView, left float64) {
	if o == nil || v.OnRecord != nil || left < o.minLeft || pv.Live < o.minBytes {
		return
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		sc := <-o.scratch
		defer func() { o.scratch <- sc }()
		ep := o.run(v.Name, p, pv, sc)
		o.mu.Lock()
		o.parts[pv] = ep
		o.mu.Unlock()
	}()
}

// wait waits for every job started; after it, parts is complete, and the
// jobs' zstd encoders are Put's.
func (o *overlap) wait() {
	if o == nil {
		return
	}
	o.wg.Wait()
	for range cap(o.scratch) {
		sc := <-o.scratch
		if sc.zw != nil {
			frames.Release(sc.zw)
		}
		o.scratch <- new(jobScratch)
	}
}

// indexed returns what a job made of pv, or nil.
func (o *overlap) indexed(pv *keyview.PartView) *indexed {
	if o == nil || o.parts[pv] == nil {
		return nil
	}
	return o.parts[pv].ix
}

// run indexes partition p of topic and, when it keeps enough keys,
// compresses its source offsets and lets its keys and values go.
func (o *overlap) run(topic string, p int32, pv *keyview.PartView, sc *jobScratch) *earlyPart {
	var ix *indexed
	ix, sc.es = indexPart(topic, p, o.nparts[topic], pv, keyScope{o.scoped, o.inScope}, sc.es)
	ep := &earlyPart{ix: ix}
	lp := &ix.part
	if len(lp.entries) < o.minKeys {
		return ep
	}
	lp.frames, lp.err = o.compress(lp, sc)
	lp.early, lp.kept = true, len(lp.entries)
	ep.hashes = make([]uint64, len(lp.entries))
	for i, e := range lp.entries {
		ep.hashes[i] = maphash.Bytes(o.seed, pv.KeyAt(e.rec()))
	}
	// The suspects are strings over the arena that goes now.
	for i, k := range ix.suspects {
		ix.suspects[i] = strings.Clone(k)
	}
	lp.pv, lp.entries = nil, nil
	pv.Keys, pv.Recs, pv.Arena = keyview.KeyIndex{}, keyview.RecTable{}, keyview.Arena{}
	ep.freed = true
	return ep
}

// compress encodes the source offsets of lp in pieces of o.z.keys and
// compresses each into a frame, as compressPieces would.
func (o *overlap) compress(lp *lazyPart, sc *jobScratch) ([][]byte, error) {
	if sc.zw == nil {
		zw, err := frames.Encoder()
		if err != nil {
			return nil, err
		}
		sc.zw = zw
	}
	zw := sc.zw
	var err error
	src := &lazySource{scoped: o.scoped, inScope: o.inScope}
	names := make(map[string]string)
	var frames [][]byte
	for from := 0; from < len(lp.entries); from += o.z.Keys {
		r := lazyRun{src: src, lp: lp, from: from, to: min(from+o.z.Keys, len(lp.entries))}
		if sc.buf, err = r.AppendTo(sc.buf[:0], from > 0, names); err != nil {
			return nil, fmt.Errorf("encode %s/%d: %w", lp.topic, lp.part, err)
		}
		frames = append(frames, zw.EncodeAll(sc.buf, make([]byte, 0, len(sc.buf)/8+64)))
	}
	return frames, nil
}

// has reports whether key, kept and off its murmur2 partition somewhere,
// is live in partition p of a topic of nparts partitions, whose view ep
// let go. A kept key in a partition that is not its murmur2 partition is
// one of that partition's suspects, exactly; in its murmur2 partition it
// is looked up by its hash (a false match, a warning of a duplicate that
// is not, takes two keys of 64-bit hashes equal).
func (o *overlap) has(ep *earlyPart, key string, p, nparts int32) bool {
	if ep.suspects == nil {
		ep.suspects = make(map[string]struct{}, len(ep.ix.suspects))
		for _, k := range ep.ix.suspects {
			ep.suspects[k] = struct{}{}
		}
	}
	if _, ok := ep.suspects[key]; ok {
		return true
	}
	if snapshot.PartitionFor(keyview.StringBytes(key), nparts) != p {
		return false
	}
	if !ep.sorted {
		slices.Sort(ep.hashes)
		ep.sorted = true
	}
	_, ok := slices.BinarySearch(ep.hashes, maphash.String(o.seed, key))
	return ok
}

// liveIn reports whether key is live in partition p (view pv) of v.
func (o *overlap) liveIn(v *keyview.TopicView, p int32, pv *keyview.PartView, key string) bool {
	if o != nil {
		if ep := o.parts[pv]; ep != nil && ep.freed {
			return o.has(ep, key, p, o.nparts[v.Name])
		}
	}
	_, ok := pv.Lookup(keyview.StringBytes(key))
	return ok
}
