package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole process to the file named
// by OFFSETKEEPER_CPU_PROFILE, when set, until the returned func is
// called. It is how the profiles in docs/benchmarks.md were taken of the
// real command, process start and exit included.
func startProfile() (stop func(), err error) {
	path := os.Getenv("OFFSETKEEPER_CPU_PROFILE")
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
