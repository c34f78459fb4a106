package restore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestOtherWriters is issue 40's two restores at once: the restore whose
// write was overwritten just after its commit failed verification and
// advised restoring its undo snapshot, which would have wiped out the
// other restore. A restore knows its own records by their header: after
// its commit, no other record means no one else wrote; another restore's
// record (its header) or a record without the header (a task, a tool) is
// named, and the caller then advises diff, not the roll back.
func TestOtherWriters(t *testing.T) {
	ctx := context.Background()
	_, cl := testkit.Cluster(t)
	spec := connectdemo.DefaultSpec()
	exp, err := connectdemo.Seed(ctx, cl, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Stop()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := snap.SourceOffsetsOf(connectdemo.ConnJDBC)
	if len(keys) < 2 {
		t.Fatalf("want 2 keys of %s, got %d", connectdemo.ConnJDBC, len(keys))
	}
	write := func(k snapshot.SourceOffset, value []byte, headers ...kgo.RecordHeader) {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: k.Topic, Key: k.Key, Value: value, Headers: headers}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	write(keys[0], []byte(`{"damaged":1}`))
	plan, err := NewPlan(ctx, cl, snap, Options{Options: capture.Options{Connectors: []string{connectdemo.ConnJDBC}}, SourceOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	plan.restoreID = "20261207T000000.000000Z-aaaaaa"
	res, err := Apply(ctx, cl, plan)
	if err != nil {
		t.Fatal(err)
	}
	if got := otherWriters(ctx, cl, res, plan.restoreID); len(got) != 0 {
		t.Fatalf("right after its own commit: %v, want no other writer", got)
	}
	// Another restore writes a key of the same partition after it.
	same := slices.IndexFunc(keys[1:], func(k snapshot.SourceOffset) bool { return k.Partition == keys[0].Partition })
	other := keys[0]
	if same >= 0 {
		other = keys[1+same]
	}
	write(other, []byte(`{"other":2}`), kgo.RecordHeader{Key: snapshot.RestoreHeader, Value: []byte("20261207T000001.000000Z-bbbbbb")})
	if got := otherWriters(ctx, cl, res, plan.restoreID); !slices.Equal(got, []string{"restore 20261207T000001.000000Z-bbbbbb"}) {
		t.Fatalf("after another restore wrote: %v", got)
	}
	write(other, []byte(`{"task":3}`))
	got := otherWriters(ctx, cl, res, plan.restoreID)
	if len(got) == 0 || !strings.Contains(strings.Join(got, ";"), "restore 20261207T000001.000000Z-bbbbbb") {
		t.Fatalf("after a task wrote too: %v", got)
	}
}
