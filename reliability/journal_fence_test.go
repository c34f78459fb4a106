package reliability

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// journalDaemon is a journaling daemon of c on its own Store of dir, as a
// second process would open it, leader election off.
func journalDaemon(t *testing.T, c *cluster, dir string, skip bool) (*daemon.Daemon, *store.Store, *syncLog) {
	t.Helper()
	sto, err := store.OpenStore(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sto.Close() })
	log := &syncLog{}
	capt := capture.NewCapturer(c.cl, capture.Options{Incremental: true})
	d := &daemon.Daemon{
		Config: daemon.Config{Schedule: "@every 1h", SkipImmediately: skip, Journal: daemon.JournalConfig{Interval: 100 * time.Millisecond}},
		Store:  sto,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
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
	return d, sto, log
}

// TestJournalTwoDaemonsFenced: two daemons with leader election off
// journal one epoch of one store (the second starts without a snapshot of
// its own, so it continues the first one's epoch). The store fences them:
// one keeps writing, the other stops with an ERROR naming the epoch, and
// the journal verifies, its chain whole.
func TestJournalTwoDaemonsFenced(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	dir := t.TempDir()
	a, sto, logA := journalDaemon(t, c, dir, false)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() { defer wg.Done(); _ = a.Run(ctx) }()
	covered := func(at time.Time) func() bool {
		return func() bool {
			cov, err := sto.Journal().Coverage(context.Background())
			return err == nil && len(cov) > 0 && cov[len(cov)-1].To.After(at)
		}
	}
	eventually(t, 60*time.Second, "the first daemon's journal", covered(time.Now()))
	b, _, logB := journalDaemon(t, c, dir, true)
	wg.Add(1)
	go func() { defer wg.Done(); _ = b.Run(ctx) }()

	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	stoppedLog := func() string {
		for _, l := range []string{logA.String(), logB.String()} {
			if strings.Contains(l, "journal stopped: another writer writes this epoch") {
				return l
			}
		}
		return ""
	}
	for i := 0; stoppedLog() == ""; i++ {
		if i > 3000 {
			t.Fatalf("neither daemon was fenced:\nA:\n%s\nB:\n%s", logA.String(), logB.String())
		}
		c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: fmt.Appendf(nil, `{"incrementing":%d}`, i)})
		time.Sleep(20 * time.Millisecond) // kept: paces the changes both daemons journal until one is fenced
	}
	l, err := sto.Journal().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	epoch := l.Epochs[len(l.Epochs)-1].ID
	if log := stoppedLog(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "epoch="+epoch) {
		t.Fatalf("the fenced daemon's log does not name epoch %s in an ERROR:\n%s", epoch, log)
	}
	// The other keeps writing.
	at := time.Now()
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: []byte(`{"incrementing":999999}`)})
	eventually(t, 60*time.Second, "the journal after the fence", covered(at))
	cancel()
	wg.Wait()
	checks, err := sto.Journal().Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if ch.Err != nil {
			t.Errorf("verify epoch %s: %v", ch.Epoch, ch.Err)
		}
	}
	l, err = sto.Journal().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Epochs {
		if _, hole := e.Chain(); hole != nil {
			t.Errorf("epoch %s: %v", e.ID, hole)
		}
	}
	cov, _ := sto.Journal().Coverage(context.Background())
	st, _, err := sto.Journal().StateAt(context.Background(), cov[len(cov)-1].To)
	if err != nil {
		t.Fatalf("state now: %v", err)
	}
	for _, o := range st.SourceTable().Collect() {
		if string(o.Key) == string(jdbc) && string(o.Value) != `{"incrementing":999999}` {
			t.Errorf("state now has %s for the JDBC key", o.Value)
		}
	}
}
