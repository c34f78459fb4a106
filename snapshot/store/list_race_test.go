package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// List of a file store succeeds while another process deletes snapshots
// (a daemon's retention while an operator runs list): fileblob reads the
// directory, then stats each file, and a file deleted in between made the
// whole listing fail with NotFound.
func TestListWhileDeleting(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenStore(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for i := 0; i < 400; i++ {
		snap := (&snapshot.Snapshot{Reason: snapshot.ReasonScheduled, SinkGroups: []snapshot.SinkGroup{}, Connectors: []snapshot.Connector{}}).WithSourceOffsets([]snapshot.SourceOffset{})
		info, err := st.Snapshots().Put(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, id := range ids {
			if err := st.Snapshots().Delete(ctx, id); err != nil {
				t.Error(err)
				return
			}
			// Kept: it paces the deletes so that listings run between
			// them (the race is a delete inside a listing); it waits for
			// nothing.
			time.Sleep(50 * time.Microsecond)
		}
	}()
	lists := 0
	for done := false; !done; lists++ {
		infos, err := st.Snapshots().List(ctx)
		if err != nil {
			t.Errorf("list %d while snapshots are deleted: %v", lists, err)
			break
		}
		done = len(infos) == 0
	}
	wg.Wait()
	t.Logf("%d listings", lists)
}
