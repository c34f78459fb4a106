package daemon

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestDaemonKeepsPinnedAndManual: a daemon with --keep-last 2 never
// removes a pinned snapshot nor a young manual one, lets neither take a
// keep-last slot, and logs the rule that keeps each.
func TestDaemonKeepsPinnedAndManual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memStore(t)
	old, err := store.Put(ctx, &snapshot.Snapshot{ClusterID: "test-cluster", Reason: snapshot.ReasonScheduled, CreatedAt: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Pin(ctx, old.ID, "INC-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	manual, err := store.Put(ctx, &snapshot.Snapshot{ClusterID: "test-cluster", Reason: snapshot.ReasonManual, CreatedAt: time.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{
		Config:   Config{Schedule: "@every 1s", Policy: snapshot.Policy{Last: 2, ManualWithin: snapshot.DefaultManualWithin}},
		Store:    store,
		Snapshot: okSnapshot,
	}
	r := start(t, d)
	waitFor(t, "5 successful runs", func() bool { return runs(t, d, ResultSuccess) >= 5 })
	r.stop(t)
	ids := listIDs(t, store)
	if !slices.Contains(ids, old.ID) || !slices.Contains(ids, manual.ID) || len(ids) != 4 {
		t.Fatalf("store holds %v; want the pinned %s, the manual %s and the 2 newest scheduled", ids, old.ID, manual.ID)
	}
	logs := r.logs.String()
	for _, want := range []string{
		`msg="snapshot kept by retention" snapshot_id=` + old.ID + ` kind=full reason=scheduled`,
		`why="pinned (INC-1)"`,
		`msg="snapshot kept by retention" snapshot_id=` + manual.ID,
		`why="manual within 30d"`,
		`why="no rule keeps it"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}
