// Package memlimit keeps the garbage collector's headroom bounded: unless
// GOMEMLIMIT is set, the process's soft memory limit follows the heap found
// live at each collection plus an eighth of it and 16 MiB, instead
// of leaving the heap to grow to twice its live size (GOGC=100) before the
// next collection. A capture holding N bytes of keys and values otherwise
// collects at 2N, and the pod needs that much for nothing.
//
// The large structures of a capture (arenas, record tables, key indexes)
// hold no pointers, so a collection marks them without scanning them and
// collecting more often costs little. The snapshot command, the daemon and
// restore start it. Restore did not while its heap was mostly pointers
// (every SourceOffset and a 136-byte SourceChange per key): frequent
// collections of a heap of pointers cost far more CPU than GOGC=100. Its
// snapshot is now a table of 28-byte records, its plan 16-byte records,
// without pointers, and its verify reads a few partitions at a time.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Headroom is the least the heap may grow by past its live size (and the
// runtime's own memory) before the next collection; the headroom is
// Headroom plus an eighth of the live heap. A larger share of a large heap
// is memory held for garbage where the collections it saves cost little
// (the heap is mostly pointer-free: marking it is cheap whatever its size,
// and what the collector scans, the sink groups and the fetches in
// flight, does not grow with the keys); a larger floor is a large part of
// a small heap again.
const Headroom = 16 << 20

// names are the runtime metrics a limit is computed from.
var names = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

var (
	started sync.Once
	on      atomic.Bool  // Start started
	floor   atomic.Int64 // the headroom's floor Start started with
)

// Start follows the live heap with the soft memory limit from now on, unless
// GOMEMLIMIT is set (then the user's limit stands). It reports whether it
// started.
func Start() bool { return StartWith(Headroom) }

// StartWith is Start with a headroom floor of its own instead of Headroom:
// a smaller one trades CPU (collections closer together) for memory. Only
// the first call of Start or StartWith sets it.
func StartWith(headroom int64) bool {
	if os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	started.Do(func() {
		floor.Store(headroom)
		on.Store(true)
		s := make([]metrics.Sample, len(names))
		for i, n := range names {
			s[i].Name = n
		}
		debug.SetMemoryLimit(Limit(s))
		arm(s)
	})
	return true
}

// Release collects now and returns every free page to the operating
// system. A daemon calls it between runs: what it keeps from one run to
// the next (an incremental capture's views) is live, while the headroom
// and whatever the run built only to store its snapshot (compressed
// frames, encode buffers) would otherwise stay resident until the next
// run reuses them. It costs one collection per run. The binary's pages
// the run mapped go too (ReleaseCode).
func Release() {
	debug.FreeOSMemory()
	ReleaseCode()
}

// Trim is Release when Start started the adaptive limit, and nothing
// otherwise: with GOMEMLIMIT set the user chose CPU over memory. A
// daemon's journal calls it after each flush: a flush reads every sink
// group's offsets (a few megabytes decoded each time for many groups),
// and its garbage otherwise stayed resident up to the headroom until the
// next run's Release. It keeps the binary's pages: a flush every second
// maps most of them again.
func Trim() {
	if on.Load() {
		debug.FreeOSMemory()
	}
}

// arm calls update after the next collection: a finalizer runs on an
// object that only a collection frees, and re-arms itself.
func arm(s []metrics.Sample) {
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		debug.SetMemoryLimit(Limit(s))
		arm(s)
	})
}

// Limit reads the runtime's metrics into s and returns the limit they
// call for: the live heap, the runtime's memory that is not heap (stacks,
// metadata), and the headroom (the floor Start or StartWith set, Headroom
// before either).
func Limit(s []metrics.Sample) int64 {
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		u := s[i].Value.Uint64()
		if u > math.MaxInt64/4 {
			return math.MaxInt64 / 4
		}
		return int64(u)
	}
	live, total := v(0), v(1)
	heap := v(2) + v(3) + v(4) + v(5)
	other := max(total-heap, 0)
	h := floor.Load()
	if h == 0 {
		h = Headroom
	}
	return live + other + h + live/8
}
