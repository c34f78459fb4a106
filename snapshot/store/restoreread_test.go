package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestGetWithRestoreSink checks the store's path: the same snapshot as a
// plain GetWith, its source offsets in a table, and the same Info.
func TestGetWithRestoreSink(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t, "mem://")
	snap := fixtureSnapshot()
	snap.ID = ""
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	want, winfo, err := st.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ginfo, err := st.Snapshots().GetWith(ctx, "latest", RestoreSink(RestoreRead{}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.SinkGroups, want.SinkGroups) {
		t.Fatal("GetForRestore's sink groups differ from Get's")
	}
	bare, _, err := st.Snapshots().GetWith(ctx, info.ID, RestoreSink(RestoreRead{NoSinkOffsets: true}))
	if err != nil {
		t.Fatal(err)
	}
	if len(bare.SinkGroups) != len(want.SinkGroups) || len(want.SinkGroups) == 0 {
		t.Fatalf("NoSinkOffsets: %d groups, Get has %d", len(bare.SinkGroups), len(want.SinkGroups))
	}
	for i, g := range bare.SinkGroups {
		w := want.SinkGroups[i]
		w.Offsets = nil
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("NoSinkOffsets: group %+v, want %+v", g, w)
		}
	}
	if !got.CompactOffsets() || !reflect.DeepEqual(tableOffsets(got.SourceTable()), restoreView(want.SourceTable().Collect())) {
		t.Fatal("GetForRestore's table differs from Get's SourceOffsets")
	}
	if !reflect.DeepEqual(ginfo, winfo) {
		t.Fatalf("Info: %+v, Get's %+v", ginfo, winfo)
	}
}

// tableOffsets (as in the snapshot package's tests) is what a SourceTable holds of each source offset, in order.
func tableOffsets(t *snapshot.SourceTable) []snapshot.SourceOffset {
	out := make([]snapshot.SourceOffset, t.Len())
	for i := range int32(t.Len()) {
		out[i] = snapshot.SourceOffset{Topic: t.Topic(i), Partition: t.Partition(i), Key: t.Key(i), Value: t.Value(i), Connector: t.Connector(i)}
	}
	return out
}

// restoreView is what a restore reads of SourceOffsets.
func restoreView(offs []snapshot.SourceOffset) []snapshot.SourceOffset {
	out := make([]snapshot.SourceOffset, len(offs))
	for i, o := range offs {
		out[i] = snapshot.SourceOffset{Topic: o.Topic, Partition: o.Partition, Key: o.Key, Value: o.Value, Connector: o.Connector}
	}
	return out
}
