package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// BenchmarkStandby measures docs/benchmarks.md's standby figures: the
// daemon keeps a standby in step while 1,000 connectors (bulk file
// sources, plus the demo's) change their offsets every second; the lag
// offsetkeeper_standby_lag_seconds is sampled every 100ms for
// OFFSETKEEPER_BENCH_SECONDS (default 60) once every connector is in
// step; then the primary stops changing and failover runs with the
// standby's Connect (the REST stand-in), timed. Run it with
//
//	go test -run '^$' -bench BenchmarkStandby -benchtime 1x ./cmd/offsetkeeper/
func BenchmarkStandby(b *testing.B) {
	for range b.N {
		benchStandby(b, 1000)
	}
}

func benchStandby(b *testing.B, n int) {
	w := newStandbyWorld(b, n)
	st := "file://" + b.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	churnCtx, stopChurn := context.WithCancel(ctx)
	churned := make(chan error, 1)
	go func() { churned <- connectdemo.Churn(churnCtx, w.acl, w.spec, time.Second) }()
	var derr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "1s", "--standby-interval", "1s", "--listen", addr, "--log-format", "json"}, w.flags()...), &bytes.Buffer{}, &derr)
	}()
	began := time.Now()
	for standbyMetrics(addr)[`offsetkeeper_standby_connectors{state="in_step"}`] < float64(n) {
		if time.Since(began) > 10*time.Minute {
			b.Fatalf("the standby never got in step\n%s", derr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Logf("first sync of %d connectors in step after %s", n, time.Since(began).Round(time.Millisecond))
	// The first sync creates every connector on the standby: the lag is
	// sampled once the daemon keeps up (below 30s), as in steady state.
	for standbyMetrics(addr)["offsetkeeper_standby_lag_seconds"] > 30 {
		time.Sleep(200 * time.Millisecond)
	}
	secs := 60
	if v, err := strconv.Atoi(envOr("OFFSETKEEPER_BENCH_SECONDS", "60")); err == nil && v > 0 {
		secs = v
	}
	atStart := standbyMetrics(addr)
	var lags []float64
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for time.Now().Before(end) {
		lags = append(lags, standbyMetrics(addr)["offsetkeeper_standby_lag_seconds"])
		time.Sleep(100 * time.Millisecond)
	}
	slices.Sort(lags)
	pct := func(p float64) float64 { return lags[int(p*float64(len(lags)-1))] }
	b.ReportMetric(pct(0.5), "p50-lag-s")
	b.ReportMetric(pct(0.99), "p99-lag-s")
	b.ReportMetric(lags[len(lags)-1], "max-lag-s")
	syncs := standbyMetrics(addr)
	b.Logf("lag over %ds with %d connectors changing every second: p50 %.2fs p99 %.2fs max %.2fs; syncs %v",
		secs, n, pct(0.5), pct(0.99), lags[len(lags)-1], syncs)
	// Syncs in the sampled span and their mean time (a sync reads the
	// state and the standby incrementally after the first).
	k := "offsetkeeper_standby_sync_duration_seconds_"
	if dn := syncs[k+"count"] - atStart[k+"count"]; dn > 0 {
		b.ReportMetric(dn*60/float64(secs), "syncs/min")
		b.ReportMetric((syncs[k+"sum"]-atStart[k+"sum"])/dn, "s/sync")
		b.Logf("%.0f syncs in %ds, %.2fs each on average", dn, secs, (syncs[k+"sum"]-atStart[k+"sum"])/dn)
	}

	stopChurn()
	<-churned
	time.Sleep(2 * time.Second) // the last changes reach the journal
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
	b.ReportMetric(wall.Seconds(), "failover-s")
	b.Logf("failover of %d connectors: %s wall (its own duration %.2fs, phases %v, RPO %.2fs), resumed %d, paused %d, counts %s",
		n, wall.Round(time.Millisecond), doc.Seconds, doc.Phases, doc.RPOSeconds, len(doc.Resumed), len(doc.Paused), doc.Counts)
}

func runCLIB(b *testing.B, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
