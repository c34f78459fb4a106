package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestJournalSharedStoreOwnEpoch: the failback runbook runs the new
// primary's daemon on the store the old primary's daemon journals into.
// The daemon continued the store's newest journal epoch whatever its
// cluster: on a cluster whose Connect topics reach the other's journal
// positions (here both seeded alike) it went on with the other cluster's
// epoch, recording its own records as the other cluster's state. Now it
// continues only an epoch of its own cluster, and starts its own
// otherwise; the other's journal goes on beside it.
func TestJournalSharedStoreOwnEpoch(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec, kfake.ClusterID("cluster-a"))
	b := newCluster(t, &spec, kfake.ClusterID("cluster-b"))
	b.store = a.store
	a.stopAll()
	b.stopAll()
	logsA := a.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	a.waitJournal(time.Now(), logsA)
	logsB := b.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logsB.String(), "journal epoch started") && !strings.Contains(logsB.String(), "journal continues from the store") {
		if time.Now().After(deadline) {
			t.Fatalf("cluster b's daemon neither started nor continued a journal:\n%s", logsB.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(logsB.String(), "journal continues from the store") {
		t.Fatalf("cluster b's daemon continued a journal epoch of cluster a:\n%s", logsB.String())
	}
	ctx := context.Background()
	s, err := store.OpenStore(ctx, a.store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clusters := map[string]string{}
	for _, i := range infos {
		clusters[i.ID] = i.ClusterID
	}
	seen := map[string]bool{}
	for _, e := range l.Epochs {
		seen[clusters[e.ID]] = true
	}
	if !seen["cluster-a"] || !seen["cluster-b"] {
		t.Errorf("journal epochs of clusters %v, want one of each", seen)
	}
}
