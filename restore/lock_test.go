package restore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestRestoreLockTwoProcesses: two restores of one cluster at once, each
// in its own process (the issue saw the second overwrite the first just
// after its commit, then advise rolling back over it). While one runs
// (blocked once its undo snapshot is stored), the other is refused (exit
// 3, nothing written) naming the running restore's ID, host, pid and
// start, and saying what to do; its dry run notes it. Once the first is
// killed with SIGKILL, its lock is stale (its process gone): the next
// restore takes it over, says so, restores, and leaves no lock behind.
func TestRestoreLockTwoProcesses(t *testing.T) {
	ctx := context.Background()
	w := newKillWorld(t)
	child := startChild(t, childSpec{Brokers: w.kc.ListenAddrs(), Store: w.storeURL, Snapshot: w.snap.ID, Point: "undo"})
	pid := child.Process.Pid
	host, _ := os.Hostname()
	intents, err := w.st.Restores().List(ctx)
	if err != nil || len(intents) != 1 {
		t.Fatalf("the running restore's record: %v, %v", intents, err)
	}
	first := intents[0].ID

	var out strings.Builder
	env := restore.Env{Client: w.cl, Store: w.st, Out: &out, Warn: &out}
	req := restore.Request{Snapshot: w.snap, Again: restore.CommandSettings{}.Snapshot(w.snap.ID)}
	rep, err := restore.Run(ctx, env, req)
	var locked *store.LockedError
	if !errors.Is(err, restore.ErrRefused) || !errors.As(err, &locked) || rep.Undo != "" {
		t.Fatalf("second restore while the first runs: %v, report %+v\n%s", err, rep, out.String())
	}
	for _, want := range []string{"another restore is running against this cluster: restore " + first, "on host " + host, fmt.Sprintf("pid %d", pid),
		"started " + intents[0].Started.UTC().Format("2006-01-02T15"), "nothing was written", "wait for it to finish, then run this restore again: offsetkeeper restore " + w.snap.ID} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, err)
		}
	}
	if got := w.judge(t, "refused"); got != "before" {
		t.Fatalf("the refused restore changed the offsets: %s", got)
	}
	dry := req
	dry.DryRun = true
	out.Reset()
	if _, err := restore.Run(ctx, env, dry); err != nil || !strings.Contains(out.String(), "note: another restore is running against this cluster: restore "+first) {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}

	_ = child.Process.Signal(syscall.SIGKILL)
	_ = child.Wait()
	out.Reset()
	rep, err = restore.Run(ctx, env, req)
	if err != nil || rep.Undo == "" {
		t.Fatalf("after the first was killed: %v\n%s", err, out.String())
	}
	if want := fmt.Sprintf("from restore %s (host %s, pid %d, started ", first, host, pid); !strings.Contains(out.String(), "took over the restore lock of cluster") || !strings.Contains(out.String(), want) ||
		!strings.Contains(out.String(), fmt.Sprintf("its process %d on this host is gone", pid)) {
		t.Errorf("output lacks the take-over line (%s):\n%s", want, out.String())
	}
	if got := w.judge(t, "after the take-over"); got != "snapshot" {
		t.Fatalf("restored after the take-over: the worker sees %s", got)
	}
	if l, found, err := w.st.Restores().CurrentLock(ctx, w.snap.ClusterID); err != nil || found {
		t.Errorf("lock left after the restore: %+v %v %v", l, found, err)
	}
}

// TestRestoreLockStore: the lock in the store. Of 8 takers at once
// exactly one holds it; a lock whose heartbeat is older than the lease
// (its host's process cannot be asked) is taken over; --force takes over
// a live one; released, the next taker gets it at once.
func TestRestoreLockStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type result struct {
		h   *store.Held
		err error
	}
	res := make(chan result)
	for i := range 8 {
		go func() {
			h, err := st.Restores().Lock(ctx, store.RestoreLock{ID: fmt.Sprintf("r%d", i), Snapshot: "s", Cluster: "c1"}, false)
			res <- result{h, err}
		}()
	}
	var held *store.Held
	for range 8 {
		r := <-res
		switch {
		case r.err == nil && held != nil:
			t.Fatalf("two holders: %s and %s", held.Lock().ID, r.h.Lock().ID)
		case r.err == nil:
			held = r.h
		case !errors.Is(r.err, store.ErrLocked):
			t.Fatalf("lock: %v", r.err)
		}
	}
	if held == nil {
		t.Fatal("no taker got the lock")
	}
	cur, found, err := st.Restores().CurrentLock(ctx, "c1")
	if err != nil || !found || cur.ID != held.Lock().ID || cur.Stale(cur.Heartbeat) != "" {
		t.Fatalf("current lock %+v %v %v, want %s live", cur, found, err, held.Lock().ID)
	}
	if why := cur.Stale(cur.Heartbeat.Add(store.LockLease + 1)); !strings.Contains(why, "last heartbeat was") {
		t.Errorf("a lock past its lease: stale %q", why)
	}
	forced, err := st.Restores().Lock(ctx, store.RestoreLock{ID: "forced", Snapshot: "s", Cluster: "c1"}, true)
	if err != nil || !strings.Contains(forced.TookOver, "restore "+held.Lock().ID) || !strings.Contains(forced.TookOver, "taken over with --force") {
		t.Fatalf("forced: %+v %v", forced, err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Restores().Lock(ctx, store.RestoreLock{ID: "next", Snapshot: "s", Cluster: "c1"}, false); !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "restore forced") {
		t.Fatalf("while the forced one holds it: %v", err)
	}
	if err := forced.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := st.Restores().Lock(ctx, store.RestoreLock{ID: "next", Snapshot: "s", Cluster: "c1"}, false)
	if err != nil || next.TookOver != "" {
		t.Fatalf("after release: %+v %v", next, err)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
