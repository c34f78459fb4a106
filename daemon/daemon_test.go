package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kfake"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// waitTimeout bounds every wait in these tests. Waits poll a condition;
// no test asserts how long anything took.
const waitTimeout = 20 * time.Second

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func memStore(t *testing.T) *store.Store {
	t.Helper()
	s := store.NewStore(memblob.OpenBucket(nil))
	t.Cleanup(func() { s.Close() })
	return s
}

func listIDs(t *testing.T, s *store.Store) []string {
	t.Helper()
	infos, err := s.Snapshots().List(context.Background())
	if err != nil {
		t.Fatalf("list snapshots: %v", err)
	}
	var ids []string
	for _, i := range infos {
		ids = append(ids, i.ID)
	}
	return ids
}

// fakeSnapshot is a small, valid snapshot of one source and one sink
// connector; sink maps partitions of topic "orders" to committed offsets.
func fakeSnapshot(sink map[int32]int64) *snapshot.Snapshot {
	s := (&snapshot.Snapshot{
		ClusterID: "test-cluster",
		Connectors: []snapshot.Connector{
			{Name: "src", Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStarted, Tasks: 1},
			{Name: "sink", Type: snapshot.TypeSink, HasConfig: true, TargetState: snapshot.StateStarted, Tasks: 1, Group: "connect-sink"},
		},
		SinkGroups: []snapshot.SinkGroup{{Group: "connect-sink", Connector: "sink", State: "Empty"}},
	}).WithSourceOffsets([]snapshot.SourceOffset{{
		Topic: "connect-offsets", Partition: 3, Offset: 7,
		Key: snapshot.Bytes(`["src",{"file":"a"}]`), Value: snapshot.Bytes(`{"pos":1}`), Connector: "src",
	}})
	for p, o := range sink {
		s.SinkGroups[0].Offsets = append(s.SinkGroups[0].Offsets, snapshot.SinkOffset{Topic: "orders", Partition: p, Offset: o, LeaderEpoch: -1})
	}
	s.Normalize()
	return s
}

// okSnapshot is a Snapshot func that always succeeds.
func okSnapshot(context.Context) (*snapshot.Snapshot, error) {
	return fakeSnapshot(map[int32]int64{0: 10, 1: 20}), nil
}

// running is a Daemon started by start; stop cancels it and checks that Run
// returned nil.
type running struct {
	d      *Daemon
	cancel context.CancelFunc
	done   chan error
	logs   *testkit.SyncBuffer
	once   sync.Once
}

func start(t *testing.T, d *Daemon) *running {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() || testing.Verbose() {
			t.Logf("logs of daemon %p:\n%s", d, r.logs)
		}
	})
	return r
}

func (r *running) stop(t *testing.T) {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("Run did not return after cancel")
		}
	})
}

// metric returns the value of the series name with the given label pairs
// (k1, v1, k2, v2...), or -1 if it does not exist.
func metric(t *testing.T, d *Daemon, name string, labels ...string) float64 {
	t.Helper()
	d.init()
	mfs, err := d.m.reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if labelValue(m, labels[i]) != labels[i+1] {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return -1
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func runs(t *testing.T, d *Daemon, result string) float64 {
	return metric(t, d, "offsetkeeper_runs_total", "result", result)
}

func TestParseSchedule(t *testing.T) {
	from := at("2026-03-10T12:34:56Z")
	for _, tc := range []struct {
		spec string
		next time.Time
		err  bool
	}{
		{spec: "@hourly", next: at("2026-03-10T13:00:00Z")},
		{spec: "@daily", next: at("2026-03-11T00:00:00Z")},
		{spec: "@every 15m", next: at("2026-03-10T12:49:56Z")},
		{spec: "*/5 * * * *", next: at("2026-03-10T12:35:00Z")},
		// No zone: UTC, whatever the machine's zone and the zone of the
		// time asked about.
		{spec: "0 3 * * *", next: at("2026-03-11T03:00:00Z")},
		{spec: "CRON_TZ=Asia/Tokyo 0 3 * * *", next: at("2026-03-10T18:00:00Z")},
		{spec: "CRON_TZ=Asia/Tokyo @daily", next: at("2026-03-10T15:00:00Z")},
		{spec: "* * *", err: true},
		{spec: "0 0 0 * * *", err: true}, // six fields: seconds are not accepted
		{spec: "CRON_TZ=Nowhere/Atlantis 0 3 * * *", err: true},
		{spec: "0 0 30 2 *", err: true}, // February 30th never comes
		{spec: "", err: true},
	} {
		s, err := ParseSchedule(tc.spec)
		if tc.err {
			if err == nil {
				t.Errorf("ParseSchedule(%q): want an error", tc.spec)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", tc.spec, err)
			continue
		}
		tokyo := time.FixedZone("UTC+9", 9*3600)
		for _, f := range []time.Time{from, from.In(tokyo)} {
			if got := s.Next(f); !got.Equal(tc.next) {
				t.Errorf("ParseSchedule(%q).Next(%s) = %s, want %s", tc.spec, f, got.UTC(), tc.next)
			}
		}
	}
}

func TestMovedBackwards(t *testing.T) {
	state := func(cluster string, groups map[string]map[int32]int64) *sinkState {
		s := &snapshot.Snapshot{ClusterID: cluster}
		for g, offs := range groups {
			sg := snapshot.SinkGroup{Group: g, Connector: strings.TrimPrefix(g, "connect-")}
			if g == "orphan" {
				sg.Connector = ""
			}
			for p, o := range offs {
				sg.Offsets = append(sg.Offsets, snapshot.SinkOffset{Topic: "t", Partition: p, Offset: o})
			}
			s.SinkGroups = append(s.SinkGroups, sg)
		}
		return sinkStateOf(s)
	}
	for _, tc := range []struct {
		name      string
		prev, cur *sinkState
		want      map[string]int
	}{
		{
			name: "no baseline",
			cur:  state("c", map[string]map[int32]int64{"connect-a": {0: 5}}),
			want: map[string]int{"a": 0},
		},
		{
			name: "forward and equal",
			prev: state("c", map[string]map[int32]int64{"connect-a": {0: 5, 1: 9}}),
			cur:  state("c", map[string]map[int32]int64{"connect-a": {0: 6, 1: 9, 2: 0}}),
			want: map[string]int{"a": 0},
		},
		{
			name: "decreased and vanished",
			prev: state("c", map[string]map[int32]int64{"connect-a": {0: 5, 1: 9, 2: 3}, "connect-b": {0: 1}}),
			cur:  state("c", map[string]map[int32]int64{"connect-a": {0: 4, 2: 3}, "connect-b": {0: 0}}),
			want: map[string]int{"a": 2, "b": 1},
		},
		{
			name: "whole group vanished is counted under its old connector",
			prev: state("c", map[string]map[int32]int64{"connect-a": {0: 5}, "connect-gone": {0: 1, 1: 1}}),
			cur:  state("c", map[string]map[int32]int64{"connect-a": {0: 5}}),
			want: map[string]int{"a": 0, "gone": 2},
		},
		{
			name: "group without connector is labelled by group",
			prev: state("c", map[string]map[int32]int64{"orphan": {0: 5}}),
			cur:  state("c", map[string]map[int32]int64{"orphan": {0: 1}}),
			want: map[string]int{"orphan": 1},
		},
		{
			name: "another cluster is no baseline",
			prev: state("other", map[string]map[int32]int64{"connect-a": {0: 500}}),
			cur:  state("c", map[string]map[int32]int64{"connect-a": {0: 5}}),
			want: map[string]int{"a": 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := movedBackwards(tc.prev, tc.cur)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("movedBackwards = %v, want %v", got, tc.want)
			}
		})
	}
}

// The acceptance case: @every 1s with --keep-last 3 leaves exactly 3.
func TestDaemonKeepLast(t *testing.T) {
	t.Parallel()
	sto := memStore(t)
	d := &Daemon{
		Config:   Config{Schedule: "@every 1s", Policy: snapshot.Policy{Last: 3}},
		Store:    sto,
		Snapshot: okSnapshot,
	}
	r := start(t, d)
	waitFor(t, "5 successful runs", func() bool { return runs(t, d, ResultSuccess) >= 5 })
	r.stop(t)
	if ids := listIDs(t, sto); len(ids) != 3 {
		t.Fatalf("store holds %d snapshots after keep-last 3: %v", len(ids), ids)
	}
	if del := metric(t, d, "offsetkeeper_retention_deletions_total"); del < 2 {
		t.Errorf("offsetkeeper_retention_deletions_total = %v, want >= 2", del)
	}
	if !strings.Contains(r.logs.String(), "msg=\"snapshot run\" result=success") {
		t.Errorf("no summary line in logs:\n%s", r.logs)
	}
}

func TestDaemonPanicDoesNotStopLaterRuns(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	d := &Daemon{
		Config: Config{Schedule: "@every 1s"},
		Store:  memStore(t),
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			if calls.Add(1) <= 2 {
				panic("capture exploded")
			}
			return okSnapshot(ctx)
		},
	}
	r := start(t, d)
	waitFor(t, "a success after two panics", func() bool { return runs(t, d, ResultSuccess) >= 1 })
	r.stop(t)
	if f := runs(t, d, ResultFailure); f != 2 {
		t.Errorf("failures = %v, want 2 (the two panics)", f)
	}
	logs := r.logs.String()
	if !strings.Contains(logs, "capture exploded") || !strings.Contains(logs, "stack=") {
		t.Errorf("panic not logged with its stack:\n%s", logs)
	}
}

func TestDaemonRunsNeverOverlap(t *testing.T) {
	t.Parallel()
	var inflight, maxInflight atomic.Int32
	release := make(chan struct{})
	var first atomic.Bool
	d := &Daemon{
		Config: Config{Schedule: "@every 1s"},
		Store:  memStore(t),
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				m := maxInflight.Load()
				if n <= m || maxInflight.CompareAndSwap(m, n) {
					break
				}
			}
			if first.CompareAndSwap(false, true) {
				<-release // slow: several ticks pass
			}
			return okSnapshot(ctx)
		},
	}
	r := start(t, d)
	waitFor(t, "2 skipped ticks", func() bool { return runs(t, d, ResultSkipped) >= 2 })
	close(release)
	waitFor(t, "2 successful runs", func() bool { return runs(t, d, ResultSuccess) >= 2 })
	r.stop(t)
	if m := maxInflight.Load(); m != 1 {
		t.Errorf("%d snapshot runs overlapped", m)
	}
	if !strings.Contains(r.logs.String(), "previous run is still going") {
		t.Errorf("skipped tick not logged:\n%s", r.logs)
	}
}

// A Snapshot func that ignores its context and returns a snapshot after
// shutdown aborted it: nothing may be stored, not even a temporary file.
func TestDaemonShutdownAbortLeavesNoObject(t *testing.T) {
	dir := t.TempDir()
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	sto := store.NewStore(bucket)
	t.Cleanup(func() { sto.Close() })
	started := make(chan struct{})
	d := &Daemon{
		Config: Config{Schedule: "@every 1h", ShutdownTimeout: 50 * time.Millisecond},
		Store:  sto,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			close(started)
			<-ctx.Done()
			return fakeSnapshot(map[int32]int64{0: 1}), nil
		},
	}
	r := start(t, d)
	<-started
	r.stop(t)
	var files []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("aborted run left objects: %v", files)
	}
	if s := runs(t, d, ResultSuccess); s != 0 {
		t.Errorf("successes = %v, want 0", s)
	}
	if s := runs(t, d, ResultSkipped); s != 1 {
		t.Errorf("skipped = %v, want 1 (the aborted run)", s)
	}
}

// A snapshot running when shutdown begins may finish within
// ShutdownTimeout, and is stored.
func TestDaemonShutdownLetsRunFinish(t *testing.T) {
	sto := memStore(t)
	release := make(chan struct{})
	started := make(chan struct{})
	d := &Daemon{
		Config: Config{Schedule: "@every 1h", ShutdownTimeout: waitTimeout},
		Store:  sto,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			close(started)
			<-release
			return okSnapshot(ctx)
		},
	}
	r := start(t, d)
	<-started
	r.cancel()
	waitFor(t, "shutdown to begin", func() bool { return strings.Contains(r.logs.String(), "shutting down") })
	close(release)
	r.stop(t)
	if ids := listIDs(t, sto); len(ids) != 1 {
		t.Errorf("store holds %v, want the one snapshot that finished during shutdown", ids)
	}
}

func TestDaemonRunTimeout(t *testing.T) {
	d := &Daemon{
		Config: Config{Schedule: "@every 1h", RunTimeout: 50 * time.Millisecond},
		Store:  memStore(t),
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	r := start(t, d)
	waitFor(t, "the run to time out", func() bool { return runs(t, d, ResultFailure) >= 1 })
	r.stop(t)
	if !strings.Contains(r.logs.String(), "deadline exceeded") {
		t.Errorf("timeout not logged:\n%s", r.logs)
	}
}

// Regression: a run whose leadership term ends while it captures must not
// store what it captured, even if its Snapshot func ignores the context.
func TestDaemonLeadershipLostMidRunStoresNothing(t *testing.T) {
	sto := memStore(t)
	started := make(chan struct{})
	d := &Daemon{
		Config: Config{Schedule: "@every 1h"},
		Store:  sto,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			close(started)
			<-ctx.Done()
			return fakeSnapshot(nil), nil
		},
	}
	r := start(t, d)
	<-started
	d.lead.end(endWait) // what the group's OnPartitionsRevoked does
	waitFor(t, "the run to be abandoned", func() bool { return runs(t, d, ResultSkipped) >= 1 })
	r.stop(t)
	if ids := listIDs(t, sto); len(ids) != 0 {
		t.Errorf("a run that lost the lead stored %v", ids)
	}
	if !strings.Contains(r.logs.String(), "leadership lost") {
		t.Errorf("lost leadership not logged:\n%s", r.logs)
	}
}

// steps feeds a Snapshot func one behaviour per run, so a test knows
// exactly which run is going: while no step is sent the run blocks, and
// ticks meanwhile are skipped.
type steps chan func(ctx context.Context) (*snapshot.Snapshot, error)

func (s steps) snapshot(ctx context.Context) (*snapshot.Snapshot, error) {
	select {
	case f := <-s:
		return f(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func returns(snap *snapshot.Snapshot, err error) func(context.Context) (*snapshot.Snapshot, error) {
	return func(context.Context) (*snapshot.Snapshot, error) { return snap, err }
}

func TestDaemonSinkOffsetsMovedBackwards(t *testing.T) {
	t.Parallel()
	sto := memStore(t)
	// The baseline is read from the store at the first run.
	if _, err := sto.Snapshots().Put(context.Background(), fakeSnapshot(map[int32]int64{0: 100, 1: 50, 2: 7})); err != nil {
		t.Fatal(err)
	}
	st := make(steps)
	d := &Daemon{Config: Config{Schedule: "@every 1s"}, Store: sto, Snapshot: st.snapshot}
	start(t, d)
	backwards := func() float64 { return metric(t, d, "offsetkeeper_sink_offsets_moved_backwards", "connector", "sink") }

	// Partition 0 went back, 1 stayed, 2 vanished, 3 is new.
	st <- returns(fakeSnapshot(map[int32]int64{0: 90, 1: 50, 3: 1}), nil)
	waitFor(t, "the first run", func() bool { return runs(t, d, ResultSuccess) == 1 })
	if got := backwards(); got != 2 {
		t.Errorf("after a reset: moved backwards = %v, want 2", got)
	}
	st <- returns(fakeSnapshot(map[int32]int64{0: 95, 1: 50, 3: 1}), nil)
	waitFor(t, "the second run", func() bool { return runs(t, d, ResultSuccess) == 2 })
	if got := backwards(); got != 0 {
		t.Errorf("after moving forward: moved backwards = %v, want 0", got)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestDaemonHTTP(t *testing.T) {
	t.Parallel()
	cluster := testkit.Kfake(t, kfake.NumBrokers(3))
	st := make(steps)
	d := &Daemon{
		Config:   Config{Schedule: "@every 1s", Listen: "127.0.0.1:0"},
		Store:    memStore(t),
		Snapshot: st.snapshot,
		Kafka:    testkit.Client(t, cluster),
	}
	start(t, d)
	waitFor(t, "the HTTP server", func() bool { return d.Addr() != "" })
	base := "http://" + d.Addr()
	status := func(path string) func() int {
		return func() int { code, _ := get(t, base+path); return code }
	}

	if code, body := get(t, base+"/healthz"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	// The first run is waiting for its step: nothing succeeded yet.
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "none succeeded") {
		t.Errorf("/readyz before the first success = %d %q, want 503", code, body)
	}

	st <- returns(fakeSnapshot(map[int32]int64{0: 10, 1: 20}), nil)
	waitFor(t, "/readyz 200 after a success", func() bool { return status("/readyz")() == http.StatusOK })
	_, body := get(t, base+"/readyz")
	for _, want := range []string{"kafka: ok", "store: ok", "last run: succeeded"} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz body lacks %q:\n%s", want, body)
		}
	}

	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`offsetkeeper_runs_total{result="success"} 1`,
		`offsetkeeper_runs_total{result="failure"} 0`,
		`offsetkeeper_runs_total{result="skipped"}`,
		`offsetkeeper_last_success_timestamp_seconds `,
		`offsetkeeper_run_duration_seconds_bucket{le="0.1"}`,
		`offsetkeeper_snapshot_size_bytes `,
		`offsetkeeper_source_partitions{connector="src"} 1`,
		`offsetkeeper_sink_partitions{connector="sink"} 2`,
		`offsetkeeper_retention_deletions_total 0`,
		`offsetkeeper_sink_offsets_moved_backwards{connector="sink"} 0`,
		`offsetkeeper_leader 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	code, body = get(t, base+"/api/snapshots")
	var infos []snapshot.Info
	if err := json.Unmarshal([]byte(body), &infos); code != http.StatusOK || err != nil || len(infos) != 1 || infos[0].Connectors != 2 {
		t.Errorf("/api/snapshots = %d %v: %s", code, err, body)
	}

	// A failed run makes the daemon unready until the next success.
	st <- returns(nil, errors.New("kafka said no"))
	waitFor(t, "/readyz 503 after a failure", func() bool { return status("/readyz")() == http.StatusServiceUnavailable })
	if _, body := get(t, base+"/readyz"); !strings.Contains(body, "kafka said no") {
		t.Errorf("/readyz does not say why:\n%s", body)
	}
	st <- returns(fakeSnapshot(nil), nil)
	waitFor(t, "/readyz 200 after a new success", func() bool { return status("/readyz")() == http.StatusOK })

	// Kafka gone: not ready, still healthy.
	cluster.Close()
	waitFor(t, "/readyz 503 without Kafka", func() bool { return status("/readyz")() == http.StatusServiceUnavailable })
	if _, body := get(t, base+"/readyz"); !strings.Contains(body, "kafka: unreachable") {
		t.Errorf("/readyz does not name Kafka:\n%s", body)
	}
	if code := status("/healthz")(); code != http.StatusOK {
		t.Errorf("/healthz = %d without Kafka, want 200", code)
	}
}

func TestDaemonRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *Daemon
		want string
	}{
		{"no store", &Daemon{Config: Config{Schedule: "@hourly"}, Snapshot: okSnapshot}, "Store and Snapshot are required"},
		{"bad schedule", &Daemon{Config: Config{Schedule: "every hour"}, Store: memStore(t), Snapshot: okSnapshot}, "parse schedule"},
		{"leader without group", &Daemon{Config: Config{Schedule: "@hourly", Leader: LeaderConfig{Enabled: true}}, Store: memStore(t), Snapshot: okSnapshot}, "join leader election: no group given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Run(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestDaemonListenBusy(t *testing.T) {
	first := &Daemon{Config: Config{Schedule: "@hourly", Listen: "127.0.0.1:0", SkipImmediately: true}, Store: memStore(t), Snapshot: okSnapshot}
	start(t, first)
	waitFor(t, "the first daemon to listen", func() bool { return first.Addr() != "" })
	second := &Daemon{Config: Config{Schedule: "@hourly", Listen: first.Addr()}, Store: memStore(t), Snapshot: okSnapshot}
	if err := second.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Errorf("Run on a busy address = %v, want a listen error", err)
	}
}

// The acceptance case end to end: one long-lived Capturer reading a seeded
// 3-broker kfake Connect cluster every second, keep-last 3, HTTP on.
func TestDaemonCapturesFromKafka(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, cl, exp := testkit.Seeded(t, connectdemo.DefaultSpec())

	sto := memStore(t)
	capt := capture.NewCapturer(cl, capture.Options{Reason: snapshot.ReasonScheduled, ProgramVersion: "test"})
	d := &Daemon{
		Config:   Config{Schedule: "@every 1s", Policy: snapshot.Policy{Last: 3}, Listen: "127.0.0.1:0"},
		Store:    sto,
		Snapshot: capt.Capture,
		Kafka:    cl,
	}
	r := start(t, d)
	waitFor(t, "4 successful runs", func() bool { return runs(t, d, ResultSuccess) >= 4 })
	waitFor(t, "the HTTP server", func() bool { return d.Addr() != "" })
	if code, _ := get(t, "http://"+d.Addr()+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d after successful runs", code)
	}
	_, body := get(t, "http://"+d.Addr()+"/metrics")
	if !strings.Contains(body, "offsetkeeper_source_partitions{connector=") || !strings.Contains(body, "offsetkeeper_sink_partitions{connector=") {
		t.Errorf("/metrics lacks per-connector partition series:\n%s", body)
	}
	r.stop(t)

	infos, err := sto.Snapshots().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 {
		t.Fatalf("store holds %d snapshots after keep-last 3, want 3", len(infos))
	}
	snap, _, err := sto.Snapshots().GetWith(ctx, "latest", nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.ClusterID != connectdemo.DefaultClusterID || snap.Reason != snapshot.ReasonScheduled {
		t.Errorf("latest snapshot: cluster %q, reason %q; want %q, scheduled", snap.ClusterID, snap.Reason, connectdemo.DefaultClusterID)
	}
	for name := range exp.Connectors {
		if _, ok := snap.Connector(name); !ok {
			t.Errorf("latest snapshot lacks connector %q", name)
		}
	}
	if got := metric(t, d, "offsetkeeper_sink_offsets_moved_backwards", "connector", "jdbc-sink"); got > 0 {
		t.Errorf("sink offsets moved backwards on an idle cluster: %v", got)
	}
}

// at parses an RFC 3339 time for test tables.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
