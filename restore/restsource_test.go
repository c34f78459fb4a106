package restore

import (
	"context"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestPlanRESTOfSourceTable: a plan through the Connect REST API of a
// snapshot read for a restore (store.RestoreSink: its source offsets in a
// compact SourceTable, SourceOffsets nil) is the plan of the same snapshot
// read whole, the topics it knows included. planStates listed the topics
// of the snapshot's source offsets from SourceOffsets, which such a
// snapshot does not hold, so the plan of the restore read lacked a topic
// that no connector's config names (nothing a REST plan prints read it;
// the plan's topics were wrong all the same).
func TestPlanRESTOfSourceTable(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	state := func(value string) *snapshot.Snapshot {
		return (&snapshot.Snapshot{Version: snapshot.Version, CreatedAt: at, ClusterID: "c1", Reason: snapshot.ReasonManual,
			Captured: snapshot.CapturedConnectREST, ConnectURL: "http://connect:8083",
			Connectors: []snapshot.Connector{{Name: "src", Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStopped}},
		}).WithSourceOffsets([]snapshot.SourceOffset{
			{Topic: "", Partition: snapshot.NoPartition, Key: snapshot.Bytes(`["src",{"f":"a"}]`), Value: snapshot.Bytes(value), Connector: "src"},
			// A topic no connector's config names (its offsets.storage.topic since unset).
			{Topic: "src-own-offsets", Partition: snapshot.NoPartition, Key: snapshot.Bytes(`["src",{"f":"b"}]`), Value: snapshot.Bytes(value), Connector: "src"},
		})
	}
	st, err := store.OpenStore(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Snapshots().Put(ctx, state(`{"position":1}`))
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	compact, _, err := st.Snapshots().GetWith(ctx, info.ID, store.RestoreSink(store.RestoreRead{}))
	if err != nil {
		t.Fatal(err)
	}
	if !compact.CompactOffsets() || compact.SourceTable().Len() != 2 {
		t.Fatalf("the restore read holds a compact table %v, of %d", compact.CompactOffsets(), compact.SourceTable().Len())
	}
	// Live, the key in src-own-offsets is gone: the restore writes it back.
	live := state(`{"position":2}`)
	live.SetSourceOffsets(live.SourceTable().Collect()[:1])
	pw, errw := PlanREST(whole, live, Options{})
	pc, errc := PlanREST(compact, live, Options{})
	if errw != nil || errc != nil {
		t.Fatalf("plans: %v / %v", errw, errc)
	}
	if w, c := planText(t, pw), planText(t, pc); w != c {
		t.Fatalf("plans differ:\n%s\n---- from the table:\n%s", w, c)
	}
	for _, p := range []*Plan{pw, pc} {
		if _, ok := p.partitions["src-own-offsets"]; !ok {
			t.Fatalf("the plan knows the topics %v, not src-own-offsets", p.partitions)
		}
	}
	if n := pw.Counts(); n.SourceWrites != 2 {
		t.Fatalf("counts %+v, want the 2 source offsets written", n)
	}
}
