package restore_test

// Benchmarks of a restore, phase by phase, as bench/run.sh measures the
// restore command: every source key of a snapshot into a fresh, empty,
// compacted offsets topic (25 partitions), --source-only. They run against
// an in-process kfake cluster seeded by connectdemo, small by default; the
// sizes come from the environment, as for the benchmarks of package
// snapshot:
//
//	OFFSETKEEPER_BENCH_RECORDS  offsets topic records (default 20000; keys are half)
//	OFFSETKEEPER_BENCH_BROKERS  use this already seeded cluster instead
//	                            (bench/cluster; profiles then show offsetkeeper alone)
//
// For a profile of the restore at the size:
//
//	go run ./bench/cluster --records 400000 &
//	OFFSETKEEPER_BENCH_BROKERS=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 \
//	  go test -run '^$' -bench '^BenchmarkRestore$' -benchtime 5x -cpuprofile cpu.prof ./restore/

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

var (
	benchOnce    sync.Once
	benchBrokers []string
	benchErr     error
)

// benchCluster returns the brokers of the cluster the benchmarks use: the
// one OFFSETKEEPER_BENCH_BROKERS names, or an in-process kfake seeded once
// per test binary.
func benchCluster(b *testing.B) []string {
	b.Helper()
	if v := os.Getenv("OFFSETKEEPER_BENCH_BROKERS"); v != "" {
		return strings.Split(v, ",")
	}
	records := 20_000
	if v := os.Getenv("OFFSETKEEPER_BENCH_RECORDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("OFFSETKEEPER_BENCH_RECORDS=%q: want a count", v)
		}
		records = n
	}
	benchOnce.Do(func() {
		var c *kfake.Cluster
		if c, benchErr = connectdemo.NewCluster(); benchErr != nil {
			return
		}
		// Kept for the whole test binary: seeding is the slow part.
		var cl *kgo.Client
		if cl, benchErr = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...)); benchErr != nil {
			return
		}
		defer cl.Close()
		keys := records / 2
		conns := 100
		for keys%conns != 0 {
			conns--
		}
		spec := connectdemo.Spec{ExtraFileConnectors: conns, FilesPerConnector: keys / conns, HistoryPerKey: 1, BulkStopped: true, Seed: 1}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if _, benchErr = connectdemo.Seed(ctx, cl, spec); benchErr == nil {
			benchBrokers = c.ListenAddrs()
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBrokers
}

// BenchmarkRestore is a whole restore of every source key into an empty
// offsets topic: NewPlan, Check, Apply and Verify, each reported on its own
// (plan-s, check-s, apply-s, verify-s per op). Storing the undo snapshot
// (of an empty topic) and printing the plan are left out.
func BenchmarkRestore(b *testing.B) {
	brokers := benchCluster(b)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var phases [4]time.Duration
	n, writes := 0, 0
	for b.Loop() {
		b.StopTimer()
		topic := fmt.Sprintf("bench-restore-%d-%d", time.Now().UnixNano(), n)
		if _, err := adm.CreateTopic(ctx, 25, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topic); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		began := time.Now()
		plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{Options: capture.Options{OffsetsTopics: []string{topic}}, SourceOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		phases[0] += time.Since(began)
		began = time.Now()
		if err := plan.Check(ctx, cl); err != nil {
			b.Fatal(err)
		}
		phases[1] += time.Since(began)
		began = time.Now()
		res, err := restore.Apply(ctx, cl, plan)
		if err != nil {
			b.Fatal(err)
		}
		phases[2] += time.Since(began)
		began = time.Now()
		if _, err := restore.Verify(ctx, cl, plan); err != nil {
			b.Fatal(err)
		}
		phases[3] += time.Since(began)
		writes = res.SourceWrites
		n++
	}
	for i, name := range []string{"plan-s", "check-s", "apply-s", "verify-s"} {
		b.ReportMetric(phases[i].Seconds()/float64(n), name)
	}
	b.ReportMetric(float64(writes), "records")
}
