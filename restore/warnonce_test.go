package restore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestPlanWarnsOnceForManyPartitions: sink offsets beyond the end of 16
// empty partitions (a disaster recovery into a new cluster) are one
// warning with the count and the first three, not sixteen; one partition
// keeps its own line.
func TestPlanWarnsOnceForManyPartitions(t *testing.T) {
	cl, snap := small(t, "compact")
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 16, -1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	snap.Connectors = []snapshot.Connector{{Name: "s", Type: snapshot.TypeSink, Group: "connect-s", Tasks: -1}}
	snap.SetSourceOffsets(nil)
	var offs []snapshot.SinkOffset
	for p := range int32(16) {
		offs = append(offs, snapshot.SinkOffset{Topic: "orders", Partition: p, Offset: 40, LeaderEpoch: -1})
	}
	snap.SinkGroups = []snapshot.SinkGroup{{Group: "connect-s", Connector: "s", Offsets: offs}}
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var beyond []string
	for _, w := range plan.Warnings {
		if strings.Contains(w, "beyond") {
			beyond = append(beyond, w)
		}
	}
	if len(beyond) != 1 {
		t.Fatalf("%d warnings about offsets beyond the end, want 1:\n%s", len(beyond), strings.Join(beyond, "\n"))
	}
	for _, want := range []string{"16 sink offsets are beyond their partition's end offset", "offset 40 for orders/0 ", "orders/2 ", "and 13 more", "auto.offset.reset"} {
		if !strings.Contains(beyond[0], want) {
			t.Errorf("warning lacks %q: %s", want, beyond[0])
		}
	}
	if strings.Contains(beyond[0], "orders/3 ") {
		t.Errorf("warning lists more than the first three: %s", beyond[0])
	}
}
