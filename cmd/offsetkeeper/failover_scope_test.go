package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestFailoverConnectorScope: failover --connector X touches X only: its
// offsets written to the standby, its config created there and X resumed;
// every other connector of the state is left as the standby has it (no
// offsets, no config). Regression: the standby's settings (standbyFlags.open)
// built the standby's options afresh and dropped the caller's connector
// scope, so a scoped failover would have written every connector.
func TestFailoverConnectorScope(t *testing.T) {
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	primary, err := capture.Capture(ctx, w.acl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const x = connectdemo.ConnFile
	if c, ok := primary.Connector(x); !ok || c.TargetState != snapshot.StateStarted {
		t.Fatalf("%s on the primary: %+v, want a running connector", x, c)
	}

	// The dry run names the scope's connector only.
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--dry-run", "-c", x, "--output", "json"}, w.flags()...)...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("failover --dry-run --connector %s: exit %d\n%s\n%s", x, code, out, errs)
	}
	if !slices.Equal(doc.Resumed, []string{x}) || len(doc.Paused)+len(doc.LeftStopped) != 0 {
		t.Errorf("dry run: would resume %v, pause %v, leave stopped %v; want %s only", doc.Resumed, doc.Paused, doc.LeftStopped, x)
	}

	code, out, errs = runCLI(t, append([]string{"failover", "--store", st, "--connector", x, "--output", "json"}, w.flags()...)...)
	doc = failoverDocument{}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("failover --connector %s: exit %d\n%s\n%s", x, code, out, errs)
	}
	if !slices.Equal(doc.Resumed, []string{x}) || len(doc.Paused)+len(doc.LeftStopped) != 0 || !doc.Written {
		t.Errorf("failover: resumed %v, paused %v, left stopped %v, written %v; want %s only", doc.Resumed, doc.Paused, doc.LeftStopped, doc.Written, x)
	}
	for _, a := range doc.Configs {
		if a.Connector != x {
			t.Errorf("failover --connector %s acted on the config of %s: %+v", x, a.Connector, a)
		}
	}

	// On the standby: X's offsets and X's config, nothing of the others.
	standbySnap, err := capture.Capture(ctx, w.bcl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var xKeys int
	for _, o := range standbySnap.SourceTable().All() {
		if o.Connector != x {
			t.Errorf("failover --connector %s wrote an offset of %s to the standby: %s", x, o.Connector, o.Key)
			continue
		}
		xKeys++
	}
	if xKeys == 0 {
		t.Errorf("failover --connector %s wrote none of its offsets to the standby", x)
	}
	for _, g := range standbySnap.SinkGroups {
		t.Errorf("failover --connector %s committed offsets of sink group %s (%s) on the standby", x, g.Group, g.Connector)
	}
	live, err := w.rc.Connectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range live {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(names, []string{x}) {
		t.Errorf("connectors on the standby's Connect: %s, want %s only", strings.Join(names, ", "), x)
	}
	if s, err := w.rc.Status(ctx, x); err != nil || s.Connector.State != connectrest.StateRunning {
		t.Errorf("%s on the standby: %+v %v, want RUNNING", x, s, err)
	}
}
