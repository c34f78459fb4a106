package restore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestRun: one call refuses a restore the safety checks refuse (writing
// nothing, no undo snapshot), and once the topic is fixed, runs it whole:
// undo snapshot stored, one record applied, verified; a second run finds
// nothing to do.
func TestRun(t *testing.T) {
	cl, snap := small(t, "compact,delete")
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out, warn bytes.Buffer
	env := restore.Env{Client: cl, Store: st, Out: &out, Warn: &warn}

	rep, err := restore.Run(ctx, env, restore.Request{Snapshot: snap})
	var refused *restore.RefusedError
	if !errors.Is(err, restore.ErrRefused) || !errors.As(err, &refused) {
		t.Fatalf("Run on a compact,delete topic: %v, want a refusal", err)
	}
	if len(rep.Refusals) != 1 || rep.Refusals[0].Check != restore.CheckCleanupPolicy || rep.Undo != "" || rep.Applied != nil {
		t.Fatalf("refused report %+v", rep)
	}
	if infos, err := st.Snapshots().List(ctx); err != nil || len(infos) != 0 {
		t.Fatalf("store after a refusal: %v, %v; want empty", infos, err)
	}

	// --dry-run --force: the warnings name the refusal, nothing is written.
	out.Reset()
	if _, err := restore.Run(ctx, env, restore.Request{Snapshot: snap, DryRun: true, Force: true}); err != nil {
		t.Fatalf("dry run under force: %v", err)
	}
	if !strings.Contains(warn.String(), "without --force this restore would be refused") || !strings.Contains(out.String(), "dry run: nothing written") {
		t.Errorf("dry run under force: out %q, warn %q", out.String(), warn.String())
	}

	adm := kadm.NewClient(cl)
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, snapshot.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	rep, err = restore.Run(ctx, env, restore.Request{Snapshot: snap})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if rep.Undo == "" || rep.Applied == nil || rep.Applied.SourceWrites != 1 || rep.Verified == nil || rep.Verified.Connectors != 1 || len(rep.Refusals) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if _, _, err := st.Snapshots().GetWith(ctx, rep.Undo, nil); err != nil {
		t.Errorf("undo snapshot %s: %v", rep.Undo, err)
	}
	for _, want := range []string{"undo snapshot: " + rep.Undo + "\n", "applied: 1 source write and 0 tombstones in 1 topic", "verified: 1 connector matches the snapshot\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	rep, err = restore.Run(ctx, env, restore.Request{Snapshot: snap})
	if err != nil || rep.Undo != "" || !strings.Contains(out.String(), "nothing to do: ") {
		t.Errorf("second Run: %v, report %+v, output %q", err, rep, out.String())
	}
}

// TestRunRequest: requests Run cannot carry out fail before reading the
// cluster.
func TestRunRequest(t *testing.T) {
	ctx := context.Background()
	for name, req := range map[string]restore.Request{
		"no snapshot":          {},
		"bad via":              {Snapshot: &snapshot.Snapshot{}, Via: "http"},
		"resume without stop":  {Snapshot: &snapshot.Snapshot{}, Resume: true},
		"stop without REST":    {Snapshot: &snapshot.Snapshot{}, StopConnectors: true},
		"connect without REST": {Snapshot: &snapshot.Snapshot{}, Via: restore.ViaConnect},
	} {
		if _, err := restore.Run(ctx, restore.Env{}, req); err == nil || errors.Is(err, restore.ErrRefused) {
			t.Errorf("%s: %v, want an error that is not a refusal", name, err)
		}
	}
}
