package snapshot

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
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

// indexed is what indexPart made of one partition.
type indexed struct {
	part lazyPart
	// suspects are the kept keys off their murmur2 partition, as build
	// finds them.
	suspects []string
	unparsed int
	unnamed  int
	// byConnector counts the kept keys per connector.
	byConnector map[string]int
}

// indexPart sorts the live keys of partition p of topic and keeps those of
// the capture's scope (scoped, inScope), as build does, without making a
// SourceOffset of any. It reads pv only, so partitions index in parallel.
func indexPart(topic string, p, nparts int32, pv *partView, scoped bool, inScope func(string) bool) indexed {
	es := make([]keyEntry, 0, len(pv.keys))
	for k, i := range pv.keys {
		es = append(es, keyEntry{key: k, rec: i})
	}
	sortKeyEntries(es, 0)
	out := indexed{byConnector: make(map[string]int)}
	var (
		names   = make(map[string]string)
		nameIdx = make(map[string]uint32)
		last    string
		run     int
	)
	kept := es[:0]
	for _, e := range es {
		kb := stringBytes(e.key)
		e.word = 0
		var (
			name string
			perr error
		)
		if n, raw, ok := connectjson.PlainKey(kb); ok && len(n) > 0 && len(kb) <= 0xffff {
			name = intern(names, n)
			idx, seen := nameIdx[name]
			if !seen {
				idx = uint32(len(out.part.names))
				out.part.names = append(out.part.names, name)
				nameIdx[name] = idx
			}
			start := len(kb) - 1 - len(raw) // raw ends just before the ']'
			e.word = plainEntry(idx, start, start+len(raw))
		} else {
			name, _, perr = parseSourceKey(kb, names)
		}
		if perr != nil {
			if scoped {
				continue
			}
			out.unparsed++
		} else {
			if !inScope(name) {
				continue
			}
			// Keys sort by connector name first, mostly: count runs. A
			// key with an empty name has no connector to count under.
			if name == "" {
				out.unnamed++
			} else {
				if name != last {
					if run > 0 {
						out.byConnector[last] += run
					}
					last, run = name, 0
				}
				run++
			}
		}
		if PartitionFor(kb, nparts) != p {
			out.suspects = append(out.suspects, e.key)
		}
		kept = append(kept, e)
	}
	if run > 0 {
		out.byConnector[last] += run
	}
	prefix := appendString([]byte(`{"topic":`), topic)
	prefix = append(prefix, `,"partition":`...)
	prefix = strconv.AppendInt(prefix, int64(p), 10)
	prefix = append(prefix, `,"offset":`...)
	out.part.topic, out.part.part, out.part.pv, out.part.entries, out.part.prefix = topic, p, pv, kept, prefix
	return out
}

// indexParts runs indexPart over jobs on every CPU and returns the results
// in the order of jobs.
func indexParts(jobs []indexJob, scoped bool, inScope func(string) bool) []indexed {
	out := make([]indexed, len(jobs))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
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
				out[i] = indexPart(j.topic, j.part, j.nparts, j.pv, scoped, inScope)
			}
		}()
	}
	wg.Wait()
	return out
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
	return c.capture(ctx, c.opts.Incremental, true)
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
