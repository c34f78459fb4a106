package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestOpsMetrics: build info, the store's snapshot count and newest age, and
// the last snapshot's warnings.
func TestOpsMetrics(t *testing.T) {
	t.Parallel()
	store := memStore(t)
	warned := func(context.Context) (*snapshot.Snapshot, error) {
		s := fakeSnapshot(map[int32]int64{0: 10})
		s.Warnings = []string{"key in the wrong partition", "another"}
		return s, nil
	}
	d := &Daemon{Config: Config{Schedule: "@every 1s"}, Store: store, Snapshot: warned,
		Build: BuildInfo{Version: "v1.2.3", Revision: "abc123"}}
	if got := metric(t, d, "offsetkeeper_build_info", "version", "v1.2.3", "revision", "abc123", "goversion", runtime.Version()); got != 1 {
		t.Errorf("offsetkeeper_build_info = %v, want 1", got)
	}
	start(t, d)
	waitFor(t, "two snapshots", func() bool { return len(listIDs(t, store)) >= 2 })
	waitFor(t, "the warnings gauge", func() bool { return metric(t, d, "offsetkeeper_snapshot_warnings") == 2 })
	d.ops.store.mu.Lock()
	d.ops.store.at = time.Time{} // the build info scrape listed the empty store
	d.ops.store.mu.Unlock()
	n := metric(t, d, "offsetkeeper_store_snapshots")
	if n < 2 {
		t.Errorf("offsetkeeper_store_snapshots = %v, want at least 2", n)
	}
	if age := metric(t, d, "offsetkeeper_store_newest_snapshot_age_seconds"); age < 0 || age > 3600 {
		t.Errorf("offsetkeeper_store_newest_snapshot_age_seconds = %v", age)
	}
	if e := metric(t, d, "offsetkeeper_store_list_errors"); e != 0 {
		t.Errorf("offsetkeeper_store_list_errors = %v, want 0", e)
	}
}

func TestStoreGaugesEmptyAndFailing(t *testing.T) {
	d := &Daemon{Store: memStore(t)}
	if n := metric(t, d, "offsetkeeper_store_snapshots"); n != 0 {
		t.Errorf("empty store: offsetkeeper_store_snapshots = %v, want 0", n)
	}
	if age := metric(t, d, "offsetkeeper_store_newest_snapshot_age_seconds"); age != -1 {
		t.Errorf("empty store: the age series exists (%v)", age)
	}
	d.ops.store.list = func(context.Context) ([]snapshot.Info, error) { return nil, context.DeadlineExceeded }
	d.ops.store.at = time.Time{}
	if e := metric(t, d, "offsetkeeper_store_list_errors"); e != 1 {
		t.Errorf("failing store: offsetkeeper_store_list_errors = %v, want 1", e)
	}
	if n := metric(t, d, "offsetkeeper_store_snapshots"); n != -1 {
		t.Errorf("failing store: offsetkeeper_store_snapshots = %v, want absent", n)
	}
}

// TestLivez: /livez answers 200 while the daemon schedules, and 503 naming
// the reason when the tick due is long past or a run outlives its timeouts.
func TestLivez(t *testing.T) {
	t.Parallel()
	d := &Daemon{Config: Config{Schedule: "@every 1s", Listen: "127.0.0.1:0"}, Store: memStore(t), Snapshot: okSnapshot}
	start(t, d)
	waitFor(t, "the HTTP server", func() bool { return d.Addr() != "" })
	if code, body := get(t, "http://"+d.Addr()+"/livez"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/livez of a running daemon = %d %q", code, body)
	}
	code, body := get(t, "http://"+d.Addr()+"/")
	for _, link := range []string{`href="/healthz"`, `href="/livez"`, `href="/readyz"`, `href="/metrics"`, `href="/api/snapshots"`} {
		if code != http.StatusOK || !strings.Contains(body, link) {
			t.Errorf("/ = %d, lacks %s:\n%s", code, link, body)
		}
	}
	if code, _ := get(t, "http://"+d.Addr()+"/nonexistent"); code != http.StatusNotFound {
		t.Errorf("/nonexistent = %d, want 404", code)
	}

	for _, tt := range []struct {
		name string
		set  func(d *Daemon)
		want string
	}{
		{"wedged scheduler", func(d *Daemon) { d.live.scheduled(time.Now().Add(-LivenessGrace - time.Minute)) }, "scheduler"},
		{"hung run", func(d *Daemon) {
			d.live.running(time.Now().Add(-DefaultRunTimeout - DefaultShutdownTimeout - LivenessGrace - time.Minute))
		}, "run: started"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &Daemon{Store: memStore(t)}
			h := w.Handler()
			tt.set(w)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/livez", nil))
			if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("/livez = %d %q, want 503 naming %q", rec.Code, rec.Body.String(), tt.want)
			}
		})
	}
}
