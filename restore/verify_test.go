package restore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestVerifySeesWritesSinceThePlan: Verify reads the offsets topics through
// the plan's Capturer, which fetches only what was written after NewPlan's
// read. What anyone else wrote in that time (here: a key changed and a key
// tombstoned behind the restore's back, after Apply) must show up exactly
// as a full read would show it, and a second Verify, which has nothing
// kept to start from, reads everything and agrees.
func TestVerifySeesWritesSinceThePlan(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	cl, _ := newCluster(t, &spec)
	ctx := context.Background()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The source connector with the most keys, all in the worker topic.
	name := ""
	var keys []snapshot.SourceOffset
	for _, c := range snap.Connectors {
		ks := snap.SourceOffsetsOf(c.Name)
		if c.Type != snapshot.TypeSource || c.OffsetsTopic != "" || len(ks) <= len(keys) {
			continue
		}
		if !slices.ContainsFunc(ks, func(o snapshot.SourceOffset) bool { return o.Topic != snapshot.DefaultOffsetsTopic }) {
			name, keys = c.Name, ks
		}
	}
	if len(keys) < 3 {
		t.Fatalf("want a connector with 3 keys, the most is %d (%s)", len(keys), name)
	}
	write := func(k snapshot.SourceOffset, value []byte) {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: k.Topic, Key: k.Key, Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	write(keys[0], []byte(`{"damaged":1}`))

	opts := restore.Options{Options: capture.Options{Connectors: []string{name}}, SourceOnly: true}
	plan, err := restore.NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Counts(); c.Writes() != 1 || c.SourceWrites != 1 {
		t.Fatalf("plan %+v, want one source write", c)
	}
	if _, err := restore.Apply(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	write(keys[1], []byte(`{"behind":2}`))
	write(keys[2], nil)

	v, err := restore.Verify(ctx, cl, plan)
	if !errors.Is(err, restore.ErrVerifyFailed) {
		t.Fatalf("Verify: %v, want ErrVerifyFailed", err)
	}
	got := strings.Join(v.Differences, "\n")
	if len(v.Differences) != 2 || !strings.Contains(got, `value {"behind":2} here`) || !strings.Contains(got, "missing here") {
		t.Errorf("differences:\n%s\nwant the changed key and the tombstoned one", got)
	}
	full, err := restore.NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(full.Differences(), "\n"); got != want {
		t.Errorf("Verify's differences:\n%s\na fresh plan's:\n%s", got, want)
	}

	// Put them back; Verify of the plan Verify made reads from scratch.
	if _, err := restore.Apply(ctx, cl, v.Plan); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Verify(ctx, cl, v.Plan); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Verify(ctx, cl, plan); err != nil {
		t.Fatalf("second Verify of the first plan: %v", err)
	}
}
