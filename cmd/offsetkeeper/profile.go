package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// startProfile writes a CPU profile of the whole process to the file named
// by OFFSETKEEPER_CPU_PROFILE, when set, and a heap profile to the file
// named by OFFSETKEEPER_HEAP_PROFILE, until the returned func is called.
// It is how the profiles in docs/benchmarks.md were taken of the real
// command, process start and exit included.
func startProfile() (stop func(), err error) {
	stopCPU, err := startCPUProfile(os.Getenv("OFFSETKEEPER_CPU_PROFILE"))
	if err != nil {
		return nil, err
	}
	stopHeap, err := startHeapProfile(os.Getenv("OFFSETKEEPER_HEAP_PROFILE"))
	if err != nil {
		stopCPU()
		return nil, err
	}
	return func() { stopHeap(); stopCPU() }, nil
}

func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("OFFSETKEEPER_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("OFFSETKEEPER_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// startHeapProfile keeps the heap profile taken when the live heap was
// largest: the heap is looked at every 20 ms and profiled again whenever
// it grew by a tenth past the largest seen, so the profile's inuse_space
// shows what held the memory at the peak (alloc_space is what the whole
// run allocated). The profile is written when stop is called.
//
// Without a profile to write, the runtime samples no allocations: each
// stack it samples stays in memory for the life of the process, and only
// this profile would read them.
func startHeapProfile(path string) (stop func(), err error) {
	if path == "" {
		runtime.MemProfileRate = 0
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("OFFSETKEEPER_HEAP_PROFILE: %w", err)
	}
	done, finished := make(chan struct{}), make(chan struct{})
	var best bytes.Buffer
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > peak+peak/10 {
				peak = live
				best.Reset()
				_ = pprof.Lookup("heap").WriteTo(&best, 0)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if best.Len() == 0 {
			_ = pprof.Lookup("heap").WriteTo(&best, 0)
		}
		_, werr := f.Write(best.Bytes())
		if err := errors.Join(werr, f.Close()); err != nil {
			fmt.Fprintln(os.Stderr, "offsetkeeper: OFFSETKEEPER_HEAP_PROFILE:", err)
		}
	}, nil
}
