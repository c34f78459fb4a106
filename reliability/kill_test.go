package reliability

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// killSeed makes the kill points reproducible; OFFSETKEEPER_KILL_SEED
// overrides it to explore others.
func killSeed(t *testing.T) uint64 {
	seed := uint64(20261130)
	if s := os.Getenv("OFFSETKEEPER_KILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("OFFSETKEEPER_KILL_SEED: %v", err)
		}
	}
	t.Logf("kill seed %d (set OFFSETKEEPER_KILL_SEED to change)", seed)
	return seed
}

// killAfter starts the binary and sends it SIGKILL after d (unless it is
// done by then). It reports whether the kill landed.
func killAfter(t *testing.T, env []string, d time.Duration, args ...string) (killed bool, r result) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = cleanEnv(env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(d):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatal("process did not die after SIGKILL")
		}
	}
	r = result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true, r
		}
		r.code = ee.ExitCode()
	}
	return false, r
}

// held counts the requests a slowBroker is holding back.
type held struct{ n atomic.Int64 }

// slowBroker delays every request of key by d before the broker handles
// it, so that a kill at a random time lands inside the step that key
// serves more often than not. The returned count says how many requests
// are being delayed at the moment: see settle.
func slowBroker(t *testing.T, c *cluster, key kmsg.Key, d time.Duration) *held {
	h := new(held)
	control(t, c.kc, key, -1, func(kmsg.Request, *fired) (kmsg.Response, error, bool) {
		h.n.Add(1)
		defer h.n.Add(-1)
		// Slept here, in the run loop, not with SleepControl: kfake's
		// queue of slept requests races (bsleep.enqueue updates a
		// waiting request's channels under its lock, waitQueue reads them
		// without it), and the race detector fails the test one run in
		// a few. The broker serves nothing else meanwhile, which only
		// makes each step slower.
		time.Sleep(d)
		return nil, nil, false
	})
	return h
}

// settle waits until no slowBroker holds a request back. A request the
// killed process sent before it died is still handled after its delay
// (the dead process's requests are still queued at the broker), so without this
// the test judged the topics while the dead restore's EndTxn(commit) was
// about to land. kfake then committed it between the capture's
// ListOffsets to one broker and to the next, and the capture saw the
// partitions led by one broker restored and the others not. A request
// whose delay ended is handled before the broker reads any other (kfake's
// run loop waits for the control function to return), so once the count
// is zero the dead process's transaction is what it will stay: committed,
// aborted or open until its timeout.
func settle(t *testing.T, hs ...*held) {
	t.Helper()
	eventually(t, time.Minute, "the killed process's delayed requests handled", func() bool {
		for _, h := range hs {
			if h.n.Load() != 0 {
				return false
			}
		}
		return true
	})
}

// TestKillSnapshot: a snapshot killed with SIGKILL at a random point
// leaves the store with nothing new listed or one whole snapshot that
// verifies, and never a damaged object; a snapshot taken afterwards works.
func TestKillSnapshot(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	spec.ExtraFileConnectors, spec.FilesPerConnector = 150, 4 // a read that takes a while
	c := newCluster(t, &spec)
	slowBroker(t, c, kmsg.Fetch, 40*time.Millisecond)
	store := c.openStore()
	binary(t) // built before the clock starts

	// How long a whole run takes, to spread the kills over it.
	began := time.Now()
	c.snapshotID()
	full := time.Since(began)
	t.Logf("a whole snapshot run takes %s", full)
	want := checkStore(t, store)

	rng := rand.New(rand.NewPCG(killSeed(t), 1))
	iterations := 6
	if testing.Short() {
		iterations = 3
	}
	kills := 0
	for i := range iterations {
		d := time.Duration(rng.Int64N(int64(full + full/4)))
		killed, r := killAfter(t, c.env(), d, "snapshot")
		ids := checkStore(t, store) // every listed snapshot verifies
		switch {
		case killed:
			kills++
			if len(ids) != len(want) && len(ids) != len(want)+1 {
				t.Fatalf("kill %d after %s: store lists %d snapshots, had %d", i, d, len(ids), len(want))
			}
		case r.code != 0:
			t.Fatalf("run %d was not killed but failed: %s", i, r)
		default:
			if len(ids) != len(want)+1 {
				t.Fatalf("run %d finished but the store lists %d snapshots, had %d", i, len(ids), len(want))
			}
		}
		want = ids
		// Nothing but snapshots and their sidecars (attributes, the
		// claim that makes IfNotExist exclusive across processes) under
		// snapshots/, except temporary files a killed write leaves (never
		// listed).
		entries, err := os.ReadDir(filepath.Join(c.store, "snapshots"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range entries {
			n := e.Name()
			if !strings.HasSuffix(n, ".snap") && !strings.HasSuffix(n, ".snap.attrs") && !strings.HasSuffix(n, ".snap.excl") && !strings.HasSuffix(n, ".tmp") {
				t.Errorf("unexpected file %s in the store", n)
			}
		}
	}
	t.Logf("%d of %d runs killed part way", kills, iterations)
	if kills == 0 {
		t.Error("no run was killed part way: the test proves nothing")
	}
	// The binary still works, and verify agrees.
	c.snapshotID()
	if r := c.bin("verify"); r.code != 0 {
		t.Fatalf("verify after the kills: %s", r)
	}
}

// TestKillRestore: a restore killed with SIGKILL at a random point leaves
// each offsets topic, read with read_committed, exactly as it was before or
// exactly as the snapshot has it (one transaction per topic); running the
// restore again completes it. A kill inside a transaction leaves it open,
// so the next run is refused (another restore's transaction is open) until
// the broker aborts it; --force fences it at once.
func TestKillRestore(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshotID()
	snap, _, err := c.openStore().Snapshots().GetWith(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Slow transactions down so kills land inside them often.
	slowed := []*held{
		slowBroker(t, c, kmsg.Produce, 30*time.Millisecond),
		slowBroker(t, c, kmsg.EndTxn, 60*time.Millisecond),
	}

	c.damage(0)
	binary(t)
	began := time.Now()
	c.mustBin(0, "restore", id)
	full := time.Since(began)
	t.Logf("a whole restore run takes %s", full)

	rng := rand.New(rand.NewPCG(killSeed(t), 2))
	iterations := 5
	if testing.Short() {
		iterations = 3
	}
	var kills, writing, inTxn int
	for i := range iterations {
		c.damage(i + 1)
		before := c.capture()
		d := time.Duration(rng.Int64N(int64(full)))
		killed, r := killAfter(t, c.env(), d, "restore", id)
		if !killed {
			if r.code != 0 {
				t.Fatalf("run %d was not killed but failed: %s", i, r)
			}
		} else {
			kills++
			if strings.Contains(r.stdout, "undo snapshot:") {
				writing++ // killed after the undo snapshot, while writing
			}
		}
		settle(t, slowed...)

		// Each offsets topic is all or nothing.
		after := c.capture()
		for _, topic := range offsetsTopics {
			got := topicState(after, topic)
			if d1, d2 := stateDiff(got, topicState(before, topic)), stateDiff(got, topicState(snap, topic)); d1 != "" && d2 != "" {
				t.Fatalf("kill %d after %s: topic %s is neither as before (%s) nor as the snapshot (%s)", i, d, topic, d1, d2)
			}
		}
		checkStore(t, c.openStore())

		// Running it again completes it.
		again := c.bin("restore", id)
		if again.code == 3 {
			inTxn++
			for _, w := range []string{"another restore is running", restore.TransactionalIDPrefix, "nothing was written"} {
				if !strings.Contains(again.stderr, w) {
					t.Errorf("refusal after a kill lacks %q:\n%s", w, again.stderr)
				}
			}
			again = c.bin("restore", id, "--force")
		}
		if again.code != 0 || !(strings.Contains(again.stdout, "verified:") || strings.Contains(again.stdout, "nothing to do")) {
			t.Fatalf("rerun after kill %d: %s", i, again)
		}
		restored := c.capture()
		for _, topic := range offsetsTopics {
			if d := stateDiff(topicState(restored, topic), topicState(snap, topic)); d != "" {
				t.Fatalf("after the rerun, topic %s differs from the snapshot: %s", topic, d)
			}
		}
	}
	t.Logf("%d of %d runs killed part way, %d of them while writing, %d left a transaction open", kills, iterations, writing, inTxn)
	if kills == 0 {
		t.Error("no run was killed part way: the test proves nothing")
	}

	// The random kills may miss a transaction; this one cannot: it lands
	// while the broker holds the restore's first transactional Produce.
	c.damage(iterations + 1)
	before := c.capture()
	txnID := restore.TransactionalIDPrefix + connectdemo.DefaultOffsetsTopic // topics are written in name order
	r, open := killDuringProduce(t, c, txnID, "restore", id)
	if !strings.Contains(r.stdout, "undo snapshot:") {
		t.Errorf("killed inside the transaction, but no undo snapshot was taken first:\n%s", r)
	}
	if !open {
		t.Fatalf("transaction %q is not open after a kill inside it", txnID)
	}
	settle(t, slowed...)
	mid := c.capture()
	for _, topic := range offsetsTopics {
		if d := stateDiff(topicState(mid, topic), topicState(before, topic)); d != "" {
			t.Errorf("topic %s, with the dead restore's transaction open, is not as before: %s", topic, d)
		}
	}
	again := c.bin("restore", id)
	if again.code == 3 {
		for _, w := range []string{"another restore is running", restore.TransactionalIDPrefix, "nothing was written"} {
			if !strings.Contains(again.stderr, w) {
				t.Errorf("refusal after a kill inside a transaction lacks %q:\n%s", w, again.stderr)
			}
		}
		again = c.bin("restore", id, "--force")
	} else {
		// Only once the broker has aborted it (transaction timeout).
		t.Logf("the rerun was not refused (exit %d): the broker had aborted the transaction", again.code)
	}
	if again.code != 0 || !strings.Contains(again.stdout, "verified:") {
		t.Fatalf("rerun after the kill inside a transaction: %s", again)
	}
	restored := c.capture()
	for _, topic := range offsetsTopics {
		if d := stateDiff(topicState(restored, topic), topicState(snap, topic)); d != "" {
			t.Fatalf("after the rerun, topic %s differs from the snapshot: %s", topic, d)
		}
	}
	if r := c.bin("verify"); r.code != 0 {
		t.Fatalf("verify after the kills: %s", r)
	}
}

// killDuringProduce runs the binary and kills it with SIGKILL while the
// broker holds its first Produce in transaction txnID, then releases the
// request. It reports whether the transaction was open right after the
// kill.
func killDuringProduce(t *testing.T, c *cluster, txnID string, args ...string) (r result, open bool) {
	t.Helper()
	producing, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	control(t, c.kc, kmsg.Produce, -1, func(req kmsg.Request, _ *fired) (kmsg.Response, error, bool) {
		p := req.(*kmsg.ProduceRequest)
		if p.TransactionID == nil || *p.TransactionID != txnID || !once.CompareAndSwap(false, true) {
			return nil, nil, false
		}
		close(producing)
		c.kc.SleepControl(func() { <-release })
		return nil, nil, false
	})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = cleanEnv(c.env()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-producing:
	case err := <-done:
		t.Fatalf("%s ended before producing in %s (%v):\nstdout:\n%s\nstderr:\n%s", args[0], txnID, err, out.String(), errb.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	// The held Produce goes on once its sender is dead. With transactions
	// of version 2 (KIP-890) a Produce adds its partitions to the
	// transaction itself, so the transaction may be Ongoing only once that
	// Produce is handled: wait for it (bounded) rather than look once.
	released = true
	close(release)
	for deadline := time.Now().Add(15 * time.Second); !open && time.Now().Before(deadline); {
		lt, err := c.adm.ListTransactions(context.Background(), nil, []string{"Ongoing"})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range lt.Sorted() {
			open = open || x.TxnID == txnID
		}
		if !open {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return result{code: -1, stdout: out.String(), stderr: errb.String()}, open
}

// TestKillRestoreDuringCommit: a restore killed while the broker holds
// its EndTxn(commit) still has that commit land after it died. Regression:
// TestKillRestore judged the topics right after the kill, while such a
// commit was still on its way, and failed about one run in three on a
// loaded machine with "neither as before nor as the snapshot": kfake
// committed the dead restore's transaction between the capture's
// ListOffsets to one broker and to the next, so the capture saw the
// partitions of one broker restored and those of the others not. The
// restore was whole (one transaction per topic); the judging was not.
// Here the commit is held until the process is dead: read_committed
// readers see the topic as it was while the transaction is open, and
// exactly as the snapshot has it once the commit has landed.
func TestKillRestoreDuringCommit(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshotID()
	snap, _, err := c.openStore().Snapshots().GetWith(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	binary(t)
	c.damage(1)
	before := c.capture()
	first := connectdemo.DefaultOffsetsTopic // the restore writes topics in name order
	txnID := restore.TransactionalIDPrefix + first

	// Hold the first commit of a restore transaction until released.
	h := new(held)
	committing, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	control(t, c.kc, kmsg.EndTxn, -1, func(req kmsg.Request, _ *fired) (kmsg.Response, error, bool) {
		end := req.(*kmsg.EndTxnRequest)
		if !end.Commit || end.TransactionalID != txnID || !once.CompareAndSwap(false, true) {
			return nil, nil, false
		}
		h.n.Add(1)
		defer h.n.Add(-1)
		close(committing)
		c.kc.SleepControl(func() { <-release })
		return nil, nil, false
	})

	cmd := exec.Command(binary(t), "restore", id)
	cmd.Env = cleanEnv(c.env()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-committing:
	case err := <-done:
		t.Fatalf("the restore ended before committing (%v):\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done

	// Dead, its commit not yet handled: the transaction is open, so
	// read_committed readers see both topics as they were.
	open := func() bool {
		lt, err := c.adm.ListTransactions(context.Background(), nil, []string{"Ongoing"})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range lt.Sorted() {
			if x.TxnID == txnID {
				return true
			}
		}
		return false
	}
	if !open() {
		t.Fatalf("transaction %q is not open while its commit is held", txnID)
	}
	mid := c.capture()
	for _, topic := range offsetsTopics {
		if d := stateDiff(topicState(mid, topic), topicState(before, topic)); d != "" {
			t.Errorf("topic %s, while the dead restore's commit is held, is not as before: %s", topic, d)
		}
	}

	// The commit lands after the death: the first topic is whole, the
	// other (never written) as it was.
	close(release)
	settle(t, h)
	if open() {
		t.Fatalf("transaction %q is still open after its commit was handled", txnID)
	}
	after := c.capture()
	if d := stateDiff(topicState(after, first), topicState(snap, first)); d != "" {
		t.Errorf("topic %s, after the dead restore's commit landed, is not as the snapshot: %s", first, d)
	}
	if d := stateDiff(topicState(after, connectdemo.EOSOffsetsTopic), topicState(before, connectdemo.EOSOffsetsTopic)); d != "" {
		t.Errorf("topic %s, never written, is not as before: %s", connectdemo.EOSOffsetsTopic, d)
	}

	// Nothing is left open, so a rerun is not refused and completes it.
	again := c.mustBin(0, "restore", id)
	if !strings.Contains(again.stdout, "verified:") {
		t.Fatalf("rerun: %s", again)
	}
	final := c.capture()
	for _, topic := range offsetsTopics {
		if d := stateDiff(topicState(final, topic), topicState(snap, topic)); d != "" {
			t.Errorf("after the rerun, topic %s differs from the snapshot: %s", topic, d)
		}
	}
}
