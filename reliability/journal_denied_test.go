package reliability

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestJournalSnapshotReadsDenied: a credential that may write snapshots
// but not read them. The journal cannot start its epoch (it reads the
// snapshot just stored back), and asked for another full snapshot at once,
// again and again: 798 full snapshots in 75 s on MinIO, while /readyz said
// ready, every run counted a success and the journal lag read 0. Now it
// backs off, /readyz says why it is not ready, and the metrics the alerts
// watch show it.
func TestJournalSnapshotReadsDenied(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	real := memblob.OpenBucket(nil)
	defer real.Close()
	fb := newFaultBucket(real)
	fb.set(func(b *faultBucket) { b.denyReadPrefix = "snapshots/" })
	sto := store.NewStore(blob.NewBucket(fb))
	deniedStorm(t, c, sto, func() int {
		infos, err := sto.Snapshots().List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(infos)
	})
}

// deniedStorm runs a daemon over c with the store sto, whose snapshot
// reads are denied, and checks that it backs off and says so; stored
// counts the snapshots in the store (through a credential that may read).
func deniedStorm(t *testing.T, c *cluster, sto *store.Store, stored func() int) {
	capt := capture.NewCapturer(c.cl, capture.Options{Incremental: true})
	d := &daemon.Daemon{
		Config: daemon.Config{Schedule: "@every 1h", Listen: "127.0.0.1:0", Journal: daemon.JournalConfig{Interval: 20 * time.Millisecond}},
		Store:  sto,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			return capt.Capture(ctx)
		},
		Tail: &daemon.Tailer{
			New: func(state *snapshot.Snapshot, seed *capture.TailSeed, positions []journal.EpochTopic, observed time.Time) *capture.Tail {
				return capture.NewTail(c.cl, capture.Options{}, state, seed, positions, observed)
			},
			Topics: func(ctx context.Context, snap *snapshot.Snapshot) ([]journal.EpochTopic, error) {
				return capture.EpochTopicsOf(ctx, c.cl, capture.Options{}, snap)
			},
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + d.Addr() + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	metric := func(name string) string {
		_, body := get("/metrics")
		for line := range strings.Lines(body) {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	eventually(t, 30*time.Second, "a failed epoch start", func() bool {
		return d.Addr() != "" && metric("offsetkeeper_journal_epoch_start_failures_total") == "1"
	})
	// The storm took a snapshot every few flushes. Give it 100 flushes to
	// show (a slower machine gives it fewer, never a false failure). Kept:
	// the window of a check that nothing happens, not a wait for an event.
	time.Sleep(100 * 20 * time.Millisecond)
	n := stored()
	// The first run, and the one the journal asked for when it found no
	// epoch (the two may coincide); the next ask waits two minutes.
	if n > 2 {
		t.Errorf("%d snapshots stored while snapshot reads were denied; want at most 2 before the backoff", n)
	}
	if n := metric("offsetkeeper_journal_epoch_start_failures_total"); n != "1" && n != "2" {
		t.Errorf("offsetkeeper_journal_epoch_start_failures_total = %s, want 1 or 2", n)
	}
	if v := metric("offsetkeeper_journal_stopped"); v != "1" {
		t.Errorf("offsetkeeper_journal_stopped = %q, want 1", v)
	}
	if v := metric("offsetkeeper_journal_lag_seconds"); v == "0" || v == "" {
		t.Errorf("offsetkeeper_journal_lag_seconds = %q while no flush ever happened, want the time since the daemon leads", v)
	}
	code, body := get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "journal: not journaling: the epoch could not start") || !strings.Contains(body, "refused the credentials") {
		t.Errorf("/readyz = %d:\n%s\nwant 503 naming the journal and the refused read", code, body)
	}
	t.Logf("%d snapshots; /readyz:\n%s", n, body)
}
