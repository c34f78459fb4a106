package capture_test

import (
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// BenchmarkCaptureFullSourceOnlyProgress is BenchmarkCaptureFullSourceOnly
// counting into a Progress, as the CLI and the daemon do: compare the two
// for the overhead of the counters (one add per fetched partition batch).
func BenchmarkCaptureFullSourceOnlyProgress(b *testing.B) {
	opts := sourceOnly(b)
	opts.Progress = new(capture.Progress)
	benchFull(b, opts)
}
