package standby_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestLatestStateAndFence: in a store shared by the daemons of two
// clusters, LatestState picks the newest state of the cluster asked for
// (none: snapshot.ErrNotFound); a fence stored for one cluster fences that
// one only, and removing it lifts it.
func TestLatestStateAndFence(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Add(-time.Minute)
	for i, c := range []string{"a", "b", "a", "b"} {
		snap := &snapshot.Snapshot{ClusterID: c, CreatedAt: now.Add(time.Duration(i) * time.Second),
			Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, 1)}}}
		if _, err := st.Snapshots().Put(ctx, snap); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		keep    func(string) bool
		cluster string
		at      time.Time
	}{
		{nil, "b", now.Add(3 * time.Second)},
		{func(c string) bool { return c == "a" }, "a", now.Add(2 * time.Second)},
		{func(c string) bool { return c != "b" }, "a", now.Add(2 * time.Second)},
	} {
		snap, at, err := standby.LatestState(ctx, st, tc.keep)
		if err != nil || snap.ClusterID != tc.cluster || !at.Equal(tc.at) {
			t.Errorf("LatestState: cluster %v at %v (%v), want %s at %v", snap, at, err, tc.cluster, tc.at)
		}
	}
	if _, _, err := standby.LatestState(ctx, st, func(c string) bool { return c == "c" }); !errors.Is(err, snapshot.ErrNotFound) {
		t.Errorf("LatestState of a cluster the store does not hold: %v, want ErrNotFound", err)
	}

	if err := standby.CheckFence(ctx, st, "a"); err != nil {
		t.Fatalf("CheckFence with no fence: %v", err)
	}
	if err := standby.PutFence(ctx, st, standby.Fence{Primary: "a", Standby: "b", At: now, StateAt: now, By: "failover"}); err != nil {
		t.Fatal(err)
	}
	var fe *standby.FencedError
	if err := standby.CheckFence(ctx, st, "a"); !errors.Is(err, standby.ErrFenced) || !errors.As(err, &fe) || fe.Fence.Standby != "b" {
		t.Fatalf("CheckFence of the fenced primary: %v", err)
	}
	if err := standby.CheckFence(ctx, st, "b"); err != nil {
		t.Fatalf("CheckFence of the other cluster: %v", err)
	}
	if err := st.Fences().Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := standby.CheckFence(ctx, st, "a"); err != nil {
		t.Fatalf("CheckFence after the fence was lifted: %v", err)
	}
}
