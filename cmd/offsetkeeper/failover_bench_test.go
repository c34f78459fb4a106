package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// BenchmarkFailover measures docs/benchmarks.md's failover figures on the
// Connect REST stand-in: the primary seeded with the demo's 16 connectors
// plus 1,000 bulk file sources, the daemon's first sync of the standby
// (every connector created STOPPED on the stand-in, every offset written)
// timed, then the daemon stopped and `failover --output json` timed, its
// phases reported. Run it with
//
//	go test -run '^$' -bench BenchmarkFailover -benchtime 1x ./cmd/offsetkeeper/
func BenchmarkFailover(b *testing.B) {
	for range b.N {
		benchFailover(b, 1000)
	}
}

func benchFailover(b *testing.B, extra int) {
	w := newStandbyWorld(b, extra)
	st := "file://" + b.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var derr testkit.SyncBuffer
	exit := make(chan int, 1)
	began := time.Now()
	go func() {
		exit <- run(ctx, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "1s", "--standby-interval", "1s", "--listen", addr, "--log-format", "json"}, w.flags()...), &bytes.Buffer{}, &derr)
	}()
	for standbyMetrics(addr)[`offsetkeeper_standby_connectors{state="in_step"}`] < float64(extra) {
		if time.Since(began) > 15*time.Minute {
			b.Fatalf("the standby never got in step\n%s", derr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	first := time.Since(began)
	creates := 0
	for _, r := range w.connect.Requests() {
		if r == "POST /connectors" {
			creates++
		}
	}
	inStep := standbyMetrics(addr)[`offsetkeeper_standby_connectors{state="in_step"}`]
	b.ReportMetric(first.Seconds(), "first-sync-s")
	b.Logf("first sync: %.0f connectors in step (%d created STOPPED on the stand-in) %s after the daemon started",
		inStep, creates, first.Round(time.Millisecond))
	cancel()
	<-exit

	t0 := time.Now()
	code, out, errs := runCLIB(b, append([]string{"failover", "--store", st, "--output", "json"}, w.flags()...)...)
	wall := time.Since(t0)
	if code != 0 {
		b.Fatalf("failover: %d\n%s\n%s", code, out, errs)
	}
	var doc failoverDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		b.Fatal(err)
	}
	resumes := 0
	for _, r := range w.connect.Requests() {
		if strings.HasSuffix(r, "/resume") || strings.HasSuffix(r, "/pause") {
			resumes++
		}
	}
	b.ReportMetric(wall.Seconds(), "failover-s")
	b.ReportMetric(doc.Phases["resume"], "resume-s")
	b.Logf("failover of %d connectors: %s wall (its own duration %.2fs, phases %v, RPO %.2fs), resumed %d, paused %d, left stopped %d, %d resume/pause requests, counts %s",
		len(doc.Resumed)+len(doc.Paused)+len(doc.LeftStopped), wall.Round(time.Millisecond), doc.Seconds, doc.Phases, doc.RPOSeconds,
		len(doc.Resumed), len(doc.Paused), len(doc.LeftStopped), resumes, doc.Counts)
}
