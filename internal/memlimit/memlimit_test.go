package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func samples() []metrics.Sample {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	return s
}

// TestLimitFollowsTheLiveHeap: the limit is the live heap, the runtime's
// other memory and at least Headroom, and it moves after a collection when
// the live heap grew.
func TestLimitFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(math.MaxInt64)
	if !Start() {
		t.Fatal("Start did not start without GOMEMLIMIT")
	}
	runtime.GC()
	before := debug.SetMemoryLimit(-1)
	if before == math.MaxInt64 || before < Headroom {
		t.Fatalf("limit %d after Start", before)
	}
	hold := make([][]byte, 0, 64)
	for range 64 {
		hold = append(hold, make([]byte, 1<<20)) // 64 MiB live
	}
	var after int64
	for range 50 { // the finalizer runs after the collection, on its own goroutine
		runtime.GC()
		if after = debug.SetMemoryLimit(-1); after >= before+48<<20 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if after < before+48<<20 {
		t.Errorf("limit %d after 64 MiB more live, was %d", after, before)
	}
	runtime.KeepAlive(hold)
	if l := Limit(samples()); l < 64<<20+Headroom {
		t.Errorf("Limit = %d with 64 MiB live", l)
	}
}

// TestUserLimitStands: with GOMEMLIMIT set, Start leaves the limit alone.
func TestUserLimitStands(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	if Start() {
		t.Fatal("Start started with GOMEMLIMIT set")
	}
}

// TestTrim: Trim collects and returns memory only when Start started the
// adaptive limit (with GOMEMLIMIT set the user chose CPU over memory).
func TestTrim(t *testing.T) {
	was := on.Load()
	defer on.Store(was)
	numGC := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumGC
	}
	on.Store(false)
	before := numGC()
	Trim()
	if n := numGC(); n != before {
		t.Errorf("Trim without Start collected (%d -> %d)", before, n)
	}
	on.Store(true)
	before = numGC()
	Trim()
	if n := numGC(); n == before {
		t.Error("Trim after Start did not collect")
	}
}

// TestStartWithFloor: the headroom floor StartWith sets is the one Limit
// adds (the drill's is half of Headroom).
func TestStartWithFloor(t *testing.T) {
	defer floor.Store(floor.Load())
	s := samples()
	floor.Store(Headroom)
	full := Limit(s)
	floor.Store(8 << 20)
	lean := Limit(s)
	if d := full - lean; d < 7<<20 || d > 9<<20 {
		t.Errorf("Limit with an 8 MiB floor is %d, with Headroom %d: %d apart, want 8 MiB", lean, full, d)
	}
}
