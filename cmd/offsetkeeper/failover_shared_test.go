package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestFailoverDiffSharedJournal: the diff failover prints (diff --at
// <state_at> --live --brokers <standby>) read the moment from the newest
// journal covering it; with the standby's own daemon journaling into the
// same store (a failback's old primary, or a standby that runs a daemon),
// that was the standby's own state, and the diff compared the standby
// with itself instead of with the primary's state the failover applied.
// Now the printed diff names the primary's journal (--from-cluster) and,
// run as printed, compares the primary's state, translation and all.
func TestFailoverDiffSharedJournal(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := "file://" + t.TempDir()
	ctx := context.Background()
	// The standby's own daemon journals it into the store the primary's does.
	sctx, stopS := context.WithCancel(ctx)
	sExit := make(chan int, 1)
	go func() {
		sExit <- run(sctx, []string{"daemon", "--brokers", w.standby, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--listen", "", "--leader-election=false"}, &bytes.Buffer{}, &testkit.SyncBuffer{})
	}()
	t.Cleanup(func() { stopS(); <-sExit })
	// The primary's daemon keeps the standby in step, then stops (a disaster).
	addr := freeAddr(t)
	pctx, stopP := context.WithCancel(ctx)
	var logs testkit.SyncBuffer
	pExit := make(chan int, 1)
	go func() {
		pExit <- run(pctx, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", addr, "--leader-election=false"}, w.flags()...), &bytes.Buffer{}, &logs)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for m := standbyMetrics(addr); m[`offsetkeeper_standby_connectors{state="out_of_step"}`] > 0 || m[`offsetkeeper_standby_connectors{state="in_step"}`] == 0; m = standbyMetrics(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("the standby never got in step\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitClusters(t, st, "primary", "standby")
	stopP()
	<-pExit

	code, out, errs := runCLI(t, append([]string{"failover", "--store", st}, w.flags()...)...)
	if code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", code, out, errs)
	}
	diff := pasted(out, "offsetkeeper diff")
	if !strings.Contains(diff, "--from-cluster primary") {
		t.Fatalf("failover's diff names no journal: %q\n%s", diff, out)
	}
	// The standby's journal covers the primary's last moment too.
	s, err := store.OpenStore(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := shellArgs(t, diff)
	for i, a := range at {
		if a == "--at" {
			m, _ := time.Parse(time.RFC3339Nano, at[i+1])
			if snap, _, err := s.Journal().StateAtFor(ctx, m, store.ClusterPick{Live: "standby"}); err != nil || snap.ClusterID != "standby" {
				t.Fatalf("the standby's journal does not cover the failover's moment (%v, %v): the test proves nothing", snap, err)
			}
		}
	}
	code, dout, derrs := runCLI(t, shellArgs(t, diff)...)
	if code != 0 || !strings.Contains(flat(dout), `is from cluster "primary", live (cluster standby)`) ||
		!strings.Contains(flat(dout), "nothing else differs") {
		t.Errorf("%s: exit %d, want the primary's state against the standby, translated\n%s%s", diff, code, dout, derrs)
	}
}

// waitClusters waits until the journal in store st covers now for each
// of clusters (an epoch of its own, flushed lately): each daemon journals.
func waitClusters(t *testing.T, st string, clusters ...string) {
	t.Helper()
	ctx := context.Background()
	s, err := store.OpenStore(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := 0
		for _, c := range clusters {
			snap, info, err := s.Journal().StateAtFor(ctx, time.Now(), store.ClusterPick{From: c})
			if err == nil && !info.Fallback && snap.ClusterID == c {
				n++
			}
		}
		if n == len(clusters) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the journals of %v do not cover now after 60s", clusters)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
