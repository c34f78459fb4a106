package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// sharedKey is the one source key of the epochs clusterEpoch writes.
var sharedKey = []byte(`["c",{"filename":"f"}]`)

// clusterEpoch stores a journal epoch of cluster id from base: a full
// snapshot holding sharedKey at position 0, then one segment per entry of
// positions, each ending at its moment and writing its position there.
func clusterEpoch(t *testing.T, st *store.Store, id string, base time.Time, positions map[time.Duration]int) {
	t.Helper()
	ctx := context.Background()
	snap := &snapshot.Snapshot{ClusterID: id, CreatedAt: base, Reason: snapshot.ReasonScheduled,
		Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets,
			Partitions: []snapshot.TopicPartition{{Partition: 0, EndOffset: 1}}}},
		Connectors: []snapshot.Connector{{Name: "c", Type: snapshot.TypeSource, HasConfig: true, Tasks: 1,
			Config: map[string]string{"connector.class": "FileStreamSource"}}}}
	snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic, Key: sharedKey, Value: []byte(`{"position":0}`)})
	snap.Normalize()
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Journal().PutEpoch(ctx, &journal.Epoch{ID: info.ID, Reason: journal.EpochFirstRun, StartedAt: base,
		Topics: []journal.EpochTopic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: 1, Worker: true}}}); err != nil {
		t.Fatal(err)
	}
	chain := journal.ChainWriter{Epoch: info.ID, Last: base}
	offset := int64(1)
	for _, d := range []time.Duration{2 * time.Second, 3 * time.Second, 10 * time.Second, 12 * time.Second} {
		p, ok := positions[d]
		if !ok {
			continue
		}
		end := base.Add(d)
		seg := chain.Next([]journal.Entry{{Kind: journal.EntrySource, Topic: snapshot.DefaultOffsetsTopic, Offset: offset,
			Time: end.UnixMilli(), Key: sharedKey, Value: fmt.Appendf(nil, `{"position":%d}`, p)}}, end)
		if _, err := st.Journal().PutSegment(ctx, seg); err != nil {
			t.Fatal(err)
		}
		chain.Wrote(seg)
		offset++
	}
}

// TestStateAtForSharedStore: two clusters' daemons journal into one store
// (a standby's after a failover), their epochs overlapping. StateAt read a
// moment from the newest epoch covering it, whichever cluster's; StateAtFor
// reads the cluster chosen, else the live one's, else the only one whose
// journal covers the moment, and refuses naming both when it cannot tell.
func TestStateAtForSharedStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	clusterEpoch(t, st, "primary", base, map[time.Duration]int{2 * time.Second: 100, 10 * time.Second: 101})
	clusterEpoch(t, st, "standby", base.Add(time.Second), map[time.Duration]int{3 * time.Second: 200, 12 * time.Second: 201})
	both, early := base.Add(5*time.Second), base.Add(500*time.Millisecond)

	for _, tc := range []struct {
		name    string
		at      time.Time
		pick    store.ClusterPick
		cluster string
		want    string
	}{
		{"chosen primary", both, store.ClusterPick{From: "primary"}, "primary", `{"position":100}`},
		{"chosen standby", both, store.ClusterPick{From: "standby", Live: "primary"}, "standby", `{"position":200}`},
		{"live primary", both, store.ClusterPick{Live: "primary"}, "primary", `{"position":100}`},
		{"live standby", both, store.ClusterPick{Live: "standby"}, "standby", `{"position":200}`},
		{"only the primary covers it", early, store.ClusterPick{Live: "new"}, "primary", `{"position":0}`},
	} {
		snap, _, err := st.Journal().StateAtFor(ctx, tc.at, tc.pick)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := ""
		for _, o := range snap.SourceTable().Collect() {
			got = string(o.Value)
		}
		if snap.ClusterID != tc.cluster || got != tc.want {
			t.Errorf("%s: cluster %s, %s; want %s, %s", tc.name, snap.ClusterID, got, tc.cluster, tc.want)
		}
	}

	for _, live := range []string{"", "new"} {
		_, _, err := st.Journal().StateAtFor(ctx, both, store.ClusterPick{Live: live})
		var amb *store.AmbiguousClusterError
		if !errors.As(err, &amb) || !errors.Is(err, store.ErrAmbiguousCluster) || len(amb.Clusters) != 2 ||
			amb.Clusters[0].Cluster != "primary" || amb.Clusters[1].Cluster != "standby" {
			t.Errorf("live %q: %v, want the refusal naming both clusters", live, err)
		}
	}
	if _, _, err := st.Journal().StateAtFor(ctx, both, store.ClusterPick{From: "nope"}); !errors.Is(err, store.ErrNoSuchCluster) {
		t.Errorf("--from-cluster of no snapshot: %v, want ErrNoSuchCluster", err)
	}
	ids, err := st.Snapshots().Clusters(ctx)
	if err != nil || len(ids) != 2 {
		t.Errorf("Clusters: %v, %v; want both", ids, err)
	}
}
