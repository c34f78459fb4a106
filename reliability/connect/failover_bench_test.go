package connect

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// BenchmarkFailoverRealWorker measures docs/benchmarks.md's failover on
// the real Connect 3.8 worker: OFFSETKEEPER_BENCH_CONNECTORS (default
// 1,000) FileStreamSource connectors in the primary's state, the daemon's
// first sync of the standby (each created STOPPED on the worker, its
// offsets written) timed, then `failover --output json` timed with its
// phases, then the time until the worker runs every connector and its
// task, and the lines each delivered checked against the state. Run it
// with
//
//	OFFSETKEEPER_TEST_CONNECT=/work/shared/kafka-connect OFFSETKEEPER_BENCH_CONNECTORS=1000 \
//	  go test -run '^$' -bench BenchmarkFailoverRealWorker -benchtime 1x -timeout 2h ./reliability/connect/
func BenchmarkFailoverRealWorker(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("OFFSETKEEPER_BENCH_CONNECTORS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		benchFailoverReal(b, n)
	}
}

func benchFailoverReal(b *testing.B, n int) {
	fw := newFailoverWorld(b, n, realconnect.Options{})
	first := fw.syncStandby(b)
	b.ReportMetric(first.Seconds(), "first-sync-s")
	b.Logf("first sync: %d connectors created STOPPED on the real worker, offsets written, in %s", n, first.Round(time.Millisecond))

	t0 := time.Now()
	r := run(b, fw.env(), append([]string{"failover", "--output", "json"}, fw.standbyFlags(fw.w.URL)...)...)
	wall := time.Since(t0)
	if r.code != 0 {
		b.Fatalf("failover: %s", r)
	}
	var doc failoverDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		b.Fatalf("failover --output json: %v\n%s", err, r.stdout)
	}
	if len(doc.Resumed) != n {
		b.Fatalf("failover resumed %d connectors, want %d", len(doc.Resumed), n)
	}
	b.ReportMetric(wall.Seconds(), "failover-s")
	b.ReportMetric(doc.Phases["resume"], "resume-s")
	b.Logf("failover of %d connectors: %s wall (its own duration %.2fs, phases %v)", n, wall.Round(time.Millisecond), doc.Seconds, doc.Phases)
	running := fw.waitRunning(b, time.Hour)
	b.ReportMetric(running.Seconds(), "all-running-s")
	b.Logf("the worker ran every connector and task %s after failover returned", running.Round(time.Millisecond))
	fw.checkDelivered(b)
}
