package restore_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestDryRunAfterKilledRestoreResumesNothing: a restore with
// --stop-connectors --resume killed (SIGKILL) after it stopped its
// connectors leaves them STOPPED with the bad reset still in their
// offsets. A dry run then, of its undo snapshot (nothing to do: the undo
// holds the state after the stop) or of the snapshot itself (the same
// restore as printed, with --dry-run), resumes nothing (the defect: the
// dry run of the undo printed "resumed: connector src" and started it on
// the damaged offsets), keeps the record, and says what the real run
// would put back. The restore the record prints, run again, then resumes
// them.
func TestDryRunAfterKilledRestoreResumesNothing(t *testing.T) {
	cc, snap, want := stopWorld(t)
	storeURL := "file://" + t.TempDir()
	st, err := store.OpenStore(t.Context(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Snapshots().Put(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	stored, _, err := st.Snapshots().GetWith(t.Context(), info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	killChild(t, childSpec{Brokers: cc.cl.OptValue(kgo.SeedBrokers).([]string), Store: storeURL, Snapshot: info.ID, Point: "undo", ConnectURL: cc.srv.URL})
	stopped := map[string]string{"src": connectrest.StateStopped, "other": connectrest.StateStopped}
	if got := restStates(t, cc.rc, want); !maps.Equal(got, stopped) {
		t.Fatalf("after the kill the connectors are %v, want both STOPPED: the test proves nothing", got)
	}
	intents, err := st.Restores().List(t.Context())
	if err != nil || len(intents) != 1 || intents[0].Undo == "" {
		t.Fatalf("records after the kill: %+v, %v; want one with its undo snapshot", intents, err)
	}
	undo, _, err := st.Snapshots().GetWith(t.Context(), intents[0].Undo, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := restore.Env{Client: cc.cl, Store: st, Connect: cc.rc}
	for _, s := range []struct{ name, says string }{{"undo", "nothing to do"}, {"snapshot", "dry run: nothing written"}} {
		target := undo
		if s.name == "snapshot" {
			target = stored
		}
		var out strings.Builder
		env.Out = &out
		req := stopRequest(target)
		req.DryRun = true
		if _, err := restore.Run(t.Context(), env, req); err != nil {
			t.Fatalf("dry run of the %s: %v\n%s", s.name, err, out.String())
		}
		said := strings.Join(strings.Fields(out.String()), " ")
		if !strings.Contains(said, s.says) || strings.Contains(said, "resumed:") || strings.Contains(said, "paused again:") {
			t.Errorf("dry run of the %s says:\n%s", s.name, out.String())
		}
		if s.name == "undo" && !strings.Contains(said, "dry run: --resume would put back 2 connectors: ") {
			t.Errorf("dry run of the undo does not say what the real run would put back:\n%s", out.String())
		}
		if got := restStates(t, cc.rc, want); !maps.Equal(got, stopped) {
			t.Fatalf("after the dry run of the %s the connectors are %v, want both still STOPPED", s.name, got)
		}
		if intents, err := st.Restores().List(t.Context()); err != nil || len(intents) != 1 {
			t.Fatalf("records after the dry run of the %s: %+v, %v; want the one left", s.name, intents, err)
		}
	}
	env.Out = nil
	if _, err := restore.Run(t.Context(), env, stopRequest(stored)); err != nil {
		t.Fatalf("the same restore again: %v", err)
	}
	waitREST(t, cc.rc, want)
	if intents, err := st.Restores().List(t.Context()); err != nil || len(intents) != 0 {
		t.Errorf("records left: %+v, %v", intents, err)
	}
}
