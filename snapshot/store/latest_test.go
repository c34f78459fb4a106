package store_test

import (
	"context"
	"errors"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// "latest" skips undo snapshots: running "restore latest" right after a
// restore must not roll that restore back.
func TestLatestSkipsUndo(t *testing.T) {
	ctx := context.Background()
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	if _, err := st.Snapshots().Resolve(ctx, "latest"); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	put := func(reason string) string {
		info, err := st.Snapshots().Put(ctx, &snapshot.Snapshot{Reason: reason, ClusterID: "c"})
		if err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	undo0 := put(snapshot.ReasonUndo)
	if _, err := st.Snapshots().Resolve(ctx, "latest"); !errors.Is(err, snapshot.ErrNotFound) {
		t.Fatalf("only undo snapshots: %v", err)
	}
	full := put(snapshot.ReasonScheduled)
	put(snapshot.ReasonUndo)
	got, err := st.Snapshots().Resolve(ctx, "latest")
	if err != nil || got != full {
		t.Fatalf("latest = %q, %v; want %s", got, err, full)
	}
	if got, err := st.Snapshots().Resolve(ctx, undo0); err != nil || got != undo0 {
		t.Fatalf("an undo snapshot by ID: %q, %v", got, err)
	}
}
