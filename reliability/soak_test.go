package reliability

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

var soakFlag = flag.Bool("soak", false, "run TestSoak for several minutes (also OFFSETKEEPER_SOAK=1; OFFSETKEEPER_SOAK_DURATION sets how long)")

// soakDuration is how long TestSoak runs: a few seconds by default, five
// minutes with -soak or OFFSETKEEPER_SOAK=1, or OFFSETKEEPER_SOAK_DURATION.
func soakDuration(t *testing.T) time.Duration {
	if s := os.Getenv("OFFSETKEEPER_SOAK_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("OFFSETKEEPER_SOAK_DURATION: %v", err)
		}
		return d
	}
	switch {
	case *soakFlag || os.Getenv("OFFSETKEEPER_SOAK") == "1":
		return 5 * time.Minute
	case testing.Short():
		return 5 * time.Second
	}
	return 10 * time.Second
}

// usage is what /proc says about a process at one moment.
type usage struct {
	at         time.Duration
	rssKiB     int64
	fds        int
	heapInuse  int64 // from the daemon's /metrics
	goroutines int64
}

func (u usage) String() string {
	return fmt.Sprintf("at %s: RSS %d MiB, heap in use %d MiB, %d open fds, %d goroutines",
		u.at.Round(time.Second), u.rssKiB>>10, u.heapInuse>>20, u.fds, u.goroutines)
}

// procUsage reads the RSS and open file descriptors of pid from /proc.
func procUsage(pid int) (rssKiB int64, fds int, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rssKiB, err = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, 0, err
			}
		}
	}
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, 0, err
	}
	return rssKiB, len(entries), nil
}

// metrics scrapes the daemon's /metrics into sample name (with labels) ->
// value.
func metrics(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// TestSoak runs the daemon binary, snapshotting every second with
// retention, while Churn rewrites offsets and group commits all the time,
// and checks that every snapshot it stores verifies, no run fails, and its
// memory, file descriptors and goroutines stay flat. It runs for a few
// seconds by default; see soakDuration for the long run.
func TestSoak(t *testing.T) {
	t.Parallel() // mostly waits; it measures the daemon's process, not this one
	dur := soakDuration(t)
	t.Logf("soak for %s (set -soak or OFFSETKEEPER_SOAK=1 for 5 minutes, OFFSETKEEPER_SOAK_DURATION to choose)", dur)
	spec := connectdemo.DefaultSpec()
	spec.ExtraFileConnectors, spec.FilesPerConnector, spec.Seed = 100, 2, 7
	c := newCluster(t, &spec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	churned := make(chan error, 1)
	go func() { churned <- connectdemo.Churn(ctx, c.cl, spec, 100*time.Millisecond) }()

	cmd := exec.Command(binary(t), "daemon", "--schedule", "@every 1s", "--listen", "127.0.0.1:0",
		"--keep-last", "20", "--log-format", "json", "--shutdown-timeout", "10s")
	cmd.Env = cleanEnv(c.env()...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	// The daemon's log: its address, and every ERROR line.
	var (
		logMu  sync.Mutex
		errs   []string
		addr   string
		addrRe = regexp.MustCompile(`"msg":"serving http".*"addr":"([^"]+)"`)
	)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			if m := addrRe.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
			if strings.Contains(line, `"level":"ERROR"`) {
				errs = append(errs, line)
			}
			logMu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	eventually(t, 30*time.Second, "the daemon's HTTP address in its log", func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		return addr != ""
	})

	store := c.openStore()
	verified := map[string]bool{}
	var verifyErrs []error
	verifyNew := func() {
		infos, err := store.Snapshots().List(context.Background())
		if err != nil {
			verifyErrs = append(verifyErrs, fmt.Errorf("list: %w", err))
			return
		}
		for _, i := range infos {
			if verified[i.ID] {
				continue
			}
			if _, err := store.Snapshots().Verify(context.Background(), i.ID); err != nil {
				if errors.Is(err, snapshot.ErrNotFound) {
					continue // removed by retention meanwhile
				}
				verifyErrs = append(verifyErrs, fmt.Errorf("verify %s: %w", i.ID, err))
				continue
			}
			verified[i.ID] = true
		}
	}
	// sample takes the least of 5 readings 100ms apart: the heap between
	// collections is noise, its floor is what grows with a leak.
	sample := func(began time.Time) usage {
		t.Helper()
		u := usage{at: time.Since(began), heapInuse: 1 << 62, rssKiB: 1 << 62, fds: 1 << 30, goroutines: 1 << 30}
		for i := range 5 {
			if i > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			m, err := metrics(addr)
			if err != nil {
				t.Fatalf("scrape /metrics: %v", err)
			}
			rss, fds, err := procUsage(pid)
			if err != nil {
				t.Fatalf("read /proc: %v", err)
			}
			u.rssKiB, u.fds = min(u.rssKiB, rss), min(u.fds, fds)
			u.heapInuse = min(u.heapInuse, int64(m["go_memstats_heap_inuse_bytes"]))
			u.goroutines = min(u.goroutines, int64(m["go_goroutines"]))
		}
		return u
	}
	runs := func(result string) float64 {
		m, err := metrics(addr)
		if err != nil {
			t.Fatalf("scrape /metrics: %v", err)
		}
		return m[`offsetkeeper_runs_total{result="`+result+`"}`]
	}

	// Warm up: a few runs, so that caches, pools and connections exist.
	eventually(t, time.Minute, "3 successful runs", func() bool { return runs("success") >= 3 })
	began := time.Now()
	samples := []usage{sample(began)}
	for next := 1; next <= 4; {
		time.Sleep(time.Second) // kept: the soak's pace, the daemon runs meanwhile
		verifyNew()
		if time.Since(began) >= time.Duration(next)*dur/4 {
			samples = append(samples, sample(began))
			next++
		}
	}
	success, failure := runs("success"), runs("failure")

	// A clean stop.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		killed = true
		if err != nil {
			t.Errorf("daemon exit after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("daemon did not stop within a minute of SIGTERM")
	}
	<-logDone
	cancel()
	if err := <-churned; err != nil {
		t.Errorf("churn: %v", err)
	}
	verifyNew()
	checkStore(t, store)

	for _, s := range samples {
		t.Log(s)
	}
	t.Logf("%v successful runs, %v failed, %d snapshots verified", success, failure, len(verified))
	if failure > 0 {
		t.Errorf("%v runs failed", failure)
	}
	if len(verified) < 3 {
		t.Errorf("only %d snapshots verified", len(verified))
	}
	for _, err := range verifyErrs {
		t.Error(err)
	}
	logMu.Lock()
	for _, l := range errs {
		t.Errorf("daemon logged an error: %s", l)
	}
	logMu.Unlock()

	// Flat: the last sample within generous bounds of the first. Memory
	// may breathe with the GC; a leak grows without bound. The daemon's
	// incremental capture keeps overwritten values in each partition's
	// arena until they exceed the live ones and 512 KiB (snapshot's
	// keyview.CompactAbove), so its memory may rise by that much per offsets
	// partition before it levels off: a long soak sees that plateau.
	var allowance int64
	for _, topic := range c.exp.OffsetsTopics {
		allowance += int64(c.exp.Partitions[topic]) * 512 << 10
	}
	first, last := samples[0], samples[len(samples)-1]
	if last.heapInuse > 2*first.heapInuse+32<<20+allowance {
		t.Errorf("heap in use grew from %d to %d MiB", first.heapInuse>>20, last.heapInuse>>20)
	}
	if last.rssKiB > 2*first.rssKiB+64<<10+allowance>>10 {
		t.Errorf("RSS grew from %d to %d MiB", first.rssKiB>>10, last.rssKiB>>10)
	}
	if last.fds > first.fds+10 {
		t.Errorf("open file descriptors grew from %d to %d", first.fds, last.fds)
	}
	if last.goroutines > first.goroutines+20 {
		t.Errorf("goroutines grew from %d to %d", first.goroutines, last.goroutines)
	}
}
