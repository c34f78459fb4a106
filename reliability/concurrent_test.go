package reliability

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// holdEndTxn holds the commit (EndTxn) of the restore transaction of topic
// until release is called, so that the transaction stays open meanwhile.
// held is closed once a commit is being held.
func holdEndTxn(t *testing.T, c *cluster, topic string) (held <-chan struct{}, release func()) {
	t.Helper()
	heldc, releasec := make(chan struct{}), make(chan struct{})
	var once, relOnce sync.Once
	release = func() { relOnce.Do(func() { close(releasec) }) }
	t.Cleanup(release)
	control(t, c.kc, kmsg.EndTxn, 1, func(req kmsg.Request, f *fired) (kmsg.Response, error, bool) {
		if req.(*kmsg.EndTxnRequest).TransactionalID != restore.TransactionalIDPrefix+topic {
			return nil, nil, false
		}
		f.hit()
		once.Do(func() { close(heldc) })
		c.kc.SleepControl(func() { <-releasec })
		return nil, nil, false
	})
	return heldc, release
}

// TestConcurrentRestoreRefused: a second restore while one is writing is
// refused (exit 3) with a message naming the other restore (its lock in a
// shared store, its transaction from another store), and writes nothing; the first completes, and the second, run again, has
// nothing left to do.
func TestConcurrentRestoreRefused(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshotID()
	c.damage(1)
	binary(t)

	other := filepath.Join(t.TempDir(), "store")
	if err := os.CopyFS(other, os.DirFS(c.store)); err != nil {
		t.Fatal(err)
	}
	held, release := holdEndTxn(t, c, connectdemo.DefaultOffsetsTopic)
	first := make(chan result, 1)
	go func() { first <- runBin(t, c.env(), "restore", id) }()
	select {
	case <-held:
	case r := <-first:
		t.Fatalf("the first restore ended before it committed: %s", r)
	case <-time.After(time.Minute):
		t.Fatal("the first restore never reached its commit")
	}

	stored := checkStore(t, c.openStore())
	// A restore that shares the store meets the first one's lock; one with
	// a store of its own (another host's copy, taken before the first
	// restore) meets its transaction on the offsets topic. Both are
	// refused, and neither writes.
	for _, tc := range []struct {
		name, store, want string
	}{
		{"same store", c.store, "another restore is running against this cluster: restore "},
		{"another store", other, `another restore is running: its transaction "offsetkeeper-restore-connect-offsets" is Ongoing`},
	} {
		second := runBin(t, append(c.env(), "OFFSETKEEPER_STORE="+tc.store), "restore", id)
		if second.code != 3 {
			t.Fatalf("%s: second restore while the first writes: want exit 3, got %s", tc.name, second)
		}
		for _, w := range []string{tc.want, "nothing was written"} {
			if !strings.Contains(flat(second.stderr), w) { // wrapped to 120 columns
				t.Errorf("%s: refusal lacks %q:\n%s", tc.name, w, second.stderr)
			}
		}
		if strings.Contains(second.stdout, "undo snapshot:") {
			t.Errorf("%s: the refused restore stored an undo snapshot:\n%s", tc.name, second.stdout)
		}
	}
	if got := checkStore(t, c.openStore()); len(got) != len(stored) {
		t.Errorf("the refused restore changed the store: %v, was %v", got, stored)
	}

	release()
	r := <-first
	if r.code != 0 || !strings.Contains(r.stdout, "verified:") {
		t.Fatalf("the first restore: %s", r)
	}
	if r := c.bin("restore", id); r.code != 0 || !strings.Contains(r.stdout, "nothing to do") {
		t.Fatalf("the second restore, run again: %s", r)
	}
}

// TestConcurrentRestoresRace: two restores started at the same instant
// may both pass the concurrent-restore check (neither has opened its
// transaction yet); the later one to open its transaction fences the
// other, whose transaction the broker aborts. Whatever the interleaving,
// at least one succeeds, the other ends with exit 0, 3 (refused) or 1
// saying another restore took over and that nothing of it was written,
// and the offsets topics end exactly as the snapshot has them.
func TestConcurrentRestoresRace(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshotID()
	snap, _, err := c.openStore().Snapshots().GetWith(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	binary(t)
	slowBroker(t, c, kmsg.Produce, 20*time.Millisecond)
	for round := range 3 {
		c.damage(round + 1)
		var wg sync.WaitGroup
		rs := make([]result, 2)
		for i := range rs {
			wg.Go(func() { rs[i] = runBin(t, c.env(), "restore", id) })
		}
		wg.Wait()
		ok := 0
		for i, r := range rs {
			switch r.code {
			case 0:
				ok++
			case 3:
				if !strings.Contains(flat(r.stderr), "another restore is running") {
					t.Errorf("round %d restore %d refused for another reason: %s", round, i, r)
				}
			case 1:
				// Regression: the loser printed INVALID_PRODUCER_EPOCH once
				// per record and told the operator to restore its undo
				// snapshot, which would have undone the winner.
				// A loser that committed a topic before it was fenced
				// says what it wrote instead of "nothing".
				want := []string{"another restore took over the offsets topic", "do not restore its undo snapshot"}
				if !strings.Contains(flat(r.stderr), "already written: ") {
					want = append(want, "nothing of this restore was written")
				}
				for _, w := range want {
					if !strings.Contains(flat(r.stderr), w) {
						t.Errorf("round %d restore %d: failure lacks %q: %s", round, i, w, r)
					}
				}
				if strings.Contains(flat(r.stderr), "to roll back") {
					t.Errorf("round %d restore %d: tells the operator to roll back what it did not write: %s", round, i, r)
				}
				t.Logf("round %d restore %d failed: %s", round, i, strings.TrimSpace(r.stderr))
			default:
				t.Errorf("round %d restore %d: %s", round, i, r)
			}
		}
		t.Logf("round %d: exit codes %d and %d", round, rs[0].code, rs[1].code)
		// A rerun (forced past a transaction a fenced restore left open)
		// completes it. A rerun with nothing to write to that topic is not
		// refused for it but warns; forced, it fences it.
		again := c.bin("restore", id)
		if again.code == 3 || strings.Contains(again.stdout, "which this restore does not write: left alone (restore --force fences it)") {
			again = c.bin("restore", id, "--force")
		}
		if again.code != 0 {
			t.Fatalf("round %d rerun: %s", round, again)
		}
		// Regression: a fenced restore can leave its transactional id's
		// transaction Ongoing; a forced rerun with nothing to write used to
		// leave it so, and both restores of the next round were refused.
		// --force fences it, as documented.
		eventually(t, 5*time.Second, fmt.Sprintf("round %d: no restore transaction left open", round), func() bool {
			lt, err := c.adm.ListTransactions(context.Background(), nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort"})
			if err != nil {
				return false
			}
			for _, x := range lt.Sorted() {
				if strings.HasPrefix(x.TxnID, restore.TransactionalIDPrefix) {
					return false
				}
			}
			return true
		})
		live := c.capture()
		for _, topic := range offsetsTopics {
			if d := stateDiff(topicState(live, topic), topicState(snap, topic)); d != "" {
				t.Fatalf("round %d: topic %s differs from the snapshot: %s", round, topic, d)
			}
		}
		if ok == 0 {
			t.Errorf("round %d: neither of two racing restores succeeded", round)
		}
	}
}

// TestRestoreWhileDaemonSnapshots: a daemon snapshotting every second while
// a restore writes stores only snapshots that verify, and each sees every
// offsets topic either as it was before the restore or as restored, never
// half written; the restore completes and verifies.
func TestRestoreWhileDaemonSnapshots(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshotID()
	store := c.openStore()
	target, _, err := store.Snapshots().GetWith(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.damage(1)
	before := c.capture()
	binary(t)

	cl := connectCLIClient(t, c, 20*time.Second)
	capt := capture.NewCapturer(cl, capture.Options{OffsetsTopics: []string{connectdemo.DefaultOffsetsTopic}, Reason: snapshot.ReasonScheduled, Incremental: true})
	var runs atomic.Int64
	d := &daemon.Daemon{
		Config: daemon.Config{Schedule: "@every 1s", RunTimeout: 30 * time.Second},
		Store:  store,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			defer runs.Add(1)
			return capt.Capture(ctx)
		},
		Logger: slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- d.Run(ctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	defer stop()
	eventually(t, 30*time.Second, "the daemon's first snapshot", func() bool { return runs.Load() >= 1 })

	// Hold the restore's first commit across at least one daemon run.
	held, release := holdEndTxn(t, c, connectdemo.DefaultOffsetsTopic)
	done := make(chan result, 1)
	go func() { done <- runBin(t, c.env(), "restore", id) }()
	select {
	case <-held:
	case r := <-done:
		t.Fatalf("the restore ended before it committed: %s", r)
	case <-time.After(time.Minute):
		t.Fatal("the restore never reached its commit")
	}
	during := runs.Load()
	eventually(t, 30*time.Second, "a daemon run while the restore's transaction is open", func() bool { return runs.Load() >= during+2 })
	release()
	r := <-done
	if r.code != 0 || !strings.Contains(r.stdout, "verified:") {
		t.Fatalf("restore while the daemon snapshots: %s", r)
	}
	after := runs.Load()
	eventually(t, 30*time.Second, "a daemon run after the restore", func() bool { return runs.Load() >= after+2 })
	stop()

	ids := checkStore(t, store)
	var sawBefore, sawAfter int
	for _, sid := range ids {
		s, _, err := store.Snapshots().GetWith(context.Background(), sid, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Reason != snapshot.ReasonScheduled {
			continue
		}
		for _, topic := range offsetsTopics {
			got := topicState(s, topic)
			d1, d2 := stateDiff(got, topicState(before, topic)), stateDiff(got, topicState(target, topic))
			switch {
			case d1 == "":
				sawBefore++
			case d2 == "":
				sawAfter++
			default:
				t.Errorf("daemon snapshot %s sees topic %s half restored: vs before: %s; vs restored: %s", sid, topic, d1, d2)
			}
		}
	}
	t.Logf("%d daemon snapshots: %d topic states as before the restore, %d as restored", len(ids), sawBefore, sawAfter)
	if sawBefore == 0 || sawAfter == 0 {
		t.Errorf("the daemon did not snapshot both sides of the restore (before %d, after %d)", sawBefore, sawAfter)
	}
}
