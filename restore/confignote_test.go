package restore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestPlanNamesConfigDifferences: a connector re-created with another
// config got "nothing to do" and not a word about its config (issue 40).
// Every plan names the keys that differ; one whose config is the
// snapshot's gets no note.
func TestPlanNamesConfigDifferences(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	cl, _ := newCluster(t, &spec)
	ctx := context.Background()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := connectdemo.ConnJDBC
	opts := restore.Options{Options: capture.Options{Connectors: []string{name}}}
	plan, err := restore.NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range plan.Notes {
		if strings.Contains(n, "another config") {
			t.Fatalf("a config as the snapshot's noted: %s", n)
		}
	}
	c, ok := snap.Connector(name)
	if !ok || c.Config == nil {
		t.Fatalf("no config of %s in the snapshot", name)
	}
	props := map[string]string{}
	for k, v := range c.Config {
		props[k] = v
	}
	props["table.whitelist"] = "shop.other"
	props["poll.interval.ms"] = "1"
	val, _ := json.Marshal(map[string]any{"properties": props})
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-" + name), Value: val}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	plan, err = restore.NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range plan.Notes {
		if strings.Contains(n, "connector "+name+" has another config here than in the snapshot (poll.interval.ms, table.whitelist differ)") {
			found = true
		}
	}
	if !found {
		t.Errorf("the plan does not name the config differences: %q", plan.Notes)
	}
}
