package reliability

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestJournalStoreFaults: segment writes that fail, or commit but report
// an error (a lost acknowledgement), lose nothing and break nothing: the
// next flush writes what the failed one held, in the same epoch, and the
// chain stays whole.
func TestJournalStoreFaults(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	real := memblob.OpenBucket(nil)
	defer real.Close()
	fb := newFaultBucket(real)
	sto := store.NewStore(blob.NewBucket(fb))
	capt := capture.NewCapturer(c.cl, capture.Options{Incremental: true})
	d := &daemon.Daemon{
		Config: daemon.Config{Schedule: "@every 1h", Journal: daemon.JournalConfig{Interval: 200 * time.Millisecond}},
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

	covered := func(at time.Time) func() bool {
		return func() bool {
			cov, err := sto.Journal().Coverage(context.Background())
			return err == nil && len(cov) > 0 && cov[len(cov)-1].To.After(at)
		}
	}
	eventually(t, 30*time.Second, "a first segment", covered(time.Now()))
	l, err := sto.Journal().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	epochs := len(l.Epochs)

	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	for i, fault := range []func(b *faultBucket){
		func(b *faultBucket) { b.failClose = true },
		func(b *faultBucket) { b.lostAck = true },
	} {
		fb.set(fault)
		value := []byte(`{"incrementing":` + string(rune('5'+i)) + `00}`)
		change := &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: value}
		c.produce(change)
		// The moment the producer stamped the change (Kafka keeps its
		// millisecond, at or before it): the state at it holds the change.
		at := change.Timestamp
		// Three commits refused after the change was written: the flushes
		// after the first of them polled the change, and failed.
		failed := fb.closeFaults.Load()
		eventually(t, 30*time.Second, "three failed commits", func() bool { return fb.closeFaults.Load() >= failed+3 })
		if i == 0 && covered(at)() {
			t.Fatal("segments were stored while every write failed")
		}
		fb.reset()
		eventually(t, 30*time.Second, "the journal after the fault", covered(at))
		st, _, err := sto.Journal().StateAt(context.Background(), at)
		if err != nil {
			t.Fatalf("fault %d: %v", i, err)
		}
		got := ""
		for _, o := range st.SourceTable().Collect() {
			if string(o.Key) == string(jdbc) {
				got = string(o.Value)
			}
		}
		if got != string(value) {
			t.Fatalf("fault %d: the state after the failed writes has %s, want %s", i, got, value)
		}
	}
	checks, err := sto.Journal().Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if ch.Err != nil {
			t.Errorf("epoch %s: %v", ch.Epoch, ch.Err)
		}
	}
	if len(checks) != epochs {
		t.Errorf("the faults started %d new epochs", len(checks)-epochs)
	}
}
