package standby_test

import (
	"context"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// TestLatestStateOverlappingEpochs: after a failover, the new primary's
// daemon journals into the store the old primary's daemon still journals
// into (as the failback runbook has it), so their epochs overlap in time.
// LatestState picked the right cluster's epoch but read the state by
// moment (StateAt), which takes the newest epoch covering it: failover
// then read the standby's own state as "the primary's" (the demo's dry run
// said "the primary's (cluster demo-standby) last state", and would have
// written it back with sink deletions). Now it reads the epoch it picked,
// for each cluster asked for, as the Follower does.
func TestLatestStateOverlappingEpochs(t *testing.T) {
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	w := newJournalWriter(t, base) // cluster "primary"
	w.segment(base.Add(2*time.Second), w.source("a", "x", []byte(`{"position":100}`), base.Add(2*time.Second)))

	// The standby's daemon starts its own epoch while the primary's goes on.
	sb := &snapshot.Snapshot{ClusterID: "standby", CreatedAt: base.Add(5 * time.Second), Reason: snapshot.ReasonScheduled,
		Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets,
			Partitions: []snapshot.TopicPartition{{Partition: 0, EndOffset: 1}}}},
		Connectors: []snapshot.Connector{{Name: "c", Type: snapshot.TypeSource, HasConfig: true, Tasks: 1,
			Config: map[string]string{"connector.class": "FileStreamSource"}}}}
	sb.AppendSourceOffsets(snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic, Key: sourceKey("c", "f"), Value: []byte(`{"position":1}`)})
	sb.Normalize()
	info, err := w.st.Snapshots().Put(ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.st.Journal().PutEpoch(ctx, &journal.Epoch{ID: info.ID, Reason: journal.EpochFirstRun, StartedAt: sb.CreatedAt,
		Topics: []journal.EpochTopic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: 1, Worker: true}}}); err != nil {
		t.Fatal(err)
	}
	chain := journal.ChainWriter{Epoch: info.ID, Last: sb.CreatedAt}
	seg := chain.Next([]journal.Entry{{Kind: journal.EntrySource, Topic: snapshot.DefaultOffsetsTopic, Offset: 1,
		Time: base.Add(6 * time.Second).UnixMilli(), Key: sourceKey("c", "f"), Value: []byte(`{"position":2}`)}}, base.Add(6*time.Second))
	if _, err := w.st.Journal().PutSegment(ctx, seg); err != nil {
		t.Fatal(err)
	}
	// The primary's journal goes on past the standby's epoch's start.
	w.segment(base.Add(8*time.Second), w.source("a", "y", []byte(`{"position":200}`), base.Add(8*time.Second)))

	for _, tc := range []struct {
		cluster string
		at      time.Time
	}{{"primary", base.Add(8 * time.Second)}, {"standby", base.Add(6 * time.Second)}} {
		keep := func(c string) bool { return c == tc.cluster }
		snap, at, err := standby.LatestState(ctx, w.st, keep)
		if err != nil || snap.ClusterID != tc.cluster || !at.Equal(tc.at) {
			t.Fatalf("LatestState of %s: %+v at %v (%v), want cluster %s at %v", tc.cluster, snap, at, err, tc.cluster, tc.at)
		}
		var f standby.Follower
		fsnap, fat, _, err := f.Latest(ctx, w.st, keep)
		if err != nil || fsnap.ClusterID != tc.cluster || !fat.Equal(at) || len(fsnap.SourceTable().Collect()) != len(snap.SourceTable().Collect()) {
			t.Errorf("Follower of %s: %v at %v (%v), LatestState %v at %v", tc.cluster, fsnap.ClusterID, fat, err, snap.ClusterID, at)
		}
	}
	// The primary's state holds its change after the standby's epoch began.
	snap, _, err := standby.LatestState(ctx, w.st, func(c string) bool { return c != "standby" })
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range snap.SourceTable().Collect() {
		found = found || string(o.Key) == string(sourceKey("a", "y")) && string(o.Value) == `{"position":200}`
	}
	if !found {
		t.Errorf("the primary's last state lacks its change at +8s")
	}
}
