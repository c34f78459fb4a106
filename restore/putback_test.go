package restore_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// stopWorld is a cluster whose Connect runs src (RUNNING) and other
// (PAUSED), with a snapshot of their offsets and a bad reset of both since.
func stopWorld(t *testing.T) (*connectCluster, *snapshot.Snapshot, map[string]string) {
	t.Helper()
	ctx := t.Context()
	cc := newConnectCluster(t, "putback-cluster")
	for name, cfg := range map[string]map[string]string{"src": srcConfig, "other": otherConfig} {
		if _, err := cc.rc.CreateConnector(ctx, name, cfg, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := cc.rc.Pause(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	put := func(pos string) {
		var recs []*kgo.Record
		for _, k := range []string{`["src",{"filename":"/data/in.txt"}]`, `["other",{"filename":"/data/other.txt"}]`} {
			recs = append(recs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(k), Value: []byte(`{"position":` + pos + `}`)})
		}
		if err := cc.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	put("1234")
	snap, err := capture.Capture(ctx, cc.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20260101T000000.000000Z-5709ed"
	put("0")
	want := map[string]string{"src": connectrest.StateRunning, "other": connectrest.StatePaused}
	waitREST(t, cc.rc, want)
	return cc, snap, want
}

// restStates are the REST states of the connectors of want.
func restStates(t *testing.T, rc *connectrest.Client, want map[string]string) map[string]string {
	t.Helper()
	states, err := rc.States(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for name := range want {
		got[name] = states[name].Connector.State
	}
	return got
}

// waitREST waits until the connectors are in the states of want (the
// stand-in applies state changes a poll later).
func waitREST(t *testing.T, rc *connectrest.Client, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := restStates(t, rc, want)
		if maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connector states %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stopRequest(snap *snapshot.Snapshot) restore.Request {
	return restore.Request{Snapshot: snap, StopConnectors: true, Resume: true, StopTimeout: 20 * time.Second}
}

// TestRestoreUnwritableStoreStopsNothing: a restore whose store cannot be
// written (here: its object folders are files, as a read-only bucket
// refuses every write even to root) is refused before it stops anything:
// every connector runs (or is paused) as before, and nothing is written.
// When only the undo snapshot cannot be written (a step after the stop),
// the restore puts back the connectors it stopped and says so (issue 40,
// item 7: they were left STOPPED).
func TestRestoreUnwritableStoreStopsNothing(t *testing.T) {
	for _, blocked := range [][]string{{"restores", "snapshots"}, {"snapshots"}} {
		t.Run(strings.Join(blocked, "+"), func(t *testing.T) {
			ctx := context.Background()
			cc, snap, want := stopWorld(t)
			dir := t.TempDir()
			for _, name := range blocked {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("not a folder"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st, err := store.OpenStore(ctx, "file://"+dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var out strings.Builder
			_, err = restore.Run(ctx, restore.Env{Client: cc.cl, Store: st, Connect: cc.rc, Out: &out}, stopRequest(snap))
			wantErr := "nothing was stopped"
			if len(blocked) == 1 {
				wantErr = "connectors this restore stopped were put back as they were"
			}
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("restore to an unwritable store: %v, want %q\n%s", err, wantErr, out.String())
			}
			if got := restStates(t, cc.rc, want); !maps.Equal(got, want) {
				t.Errorf("after the failed restore the connectors are %v, want %v as before", got, want)
			}
			live, err := capture.Capture(ctx, cc.cl, capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range live.SourceTable().Collect() {
				if string(o.Value) != `{"position":0}` {
					t.Errorf("offset %s written: %s", o.Key, o.Value)
				}
			}
			if len(blocked) == 2 {
				for _, r := range cc.srv.Requests() {
					if strings.Contains(r, "/stop") {
						t.Errorf("a restore refused for its store sent %s", r)
					}
				}
			}
		})
	}
}

// TestRestoreInterruptedPutsBack: a restore interrupted (its context
// canceled, as main does on SIGINT) at each point, before the stop, after
// the undo snapshot, inside its transaction, says "interrupted" (not
// "context canceled" or a timeout), writes no offset that a worker sees,
// and leaves every connector as it was, running where it was running,
// paused where it was paused; the same restore run again then restores
// and resumes them (issue 40, item 3).
func TestRestoreInterruptedPutsBack(t *testing.T) {
	for _, point := range []string{"intent", "undo", "half"} {
		t.Run(point, func(t *testing.T) {
			cc, snap, want := stopWorld(t)
			st, err := store.OpenStore(t.Context(), "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			restore.SetTestPoint(func(p string) {
				if p == point {
					cancel()
				}
			})
			t.Cleanup(func() { restore.SetTestPoint(nil) })
			env := restore.Env{Client: cc.cl, Store: st, Connect: cc.rc}
			_, err = restore.Run(ctx, env, stopRequest(snap))
			restore.SetTestPoint(nil)
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "interrupted") || strings.Contains(err.Error(), "context canceled") {
				t.Fatalf("interrupted restore: %v", err)
			}
			if got := restStates(t, cc.rc, want); !maps.Equal(got, want) {
				t.Errorf("after the interrupt the connectors are %v, want %v as before", got, want)
			}
			before := map[string]string{}
			if _, err := capture.ReadWorkerView(t.Context(), cc.cl, snapshot.DefaultOffsetsTopic, func(k *capture.PartitionKeys) error {
				for key, v := range k.All() {
					before[string(key)] = string(v)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for k, v := range before {
				if v != `{"position":0}` {
					t.Errorf("after the interrupt a worker reads %s = %s", k, v)
				}
			}
			// The advice: run the same restore again.
			if _, err := restore.Run(t.Context(), env, stopRequest(snap)); err != nil {
				t.Fatalf("the same restore again: %v", err)
			}
			waitREST(t, cc.rc, want)
			live, err := capture.Capture(t.Context(), cc.cl, capture.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range live.SourceTable().Collect() {
				if string(o.Value) != `{"position":1234}` {
					t.Errorf("after the restore ran again %s = %s", o.Key, o.Value)
				}
			}
			if intents, err := st.Restores().List(t.Context()); err != nil || len(intents) != 0 {
				t.Errorf("records left: %+v, %v", intents, err)
			}
		})
	}
}

// TestResumeResumesWhatRanInTheStateRestored: --resume resumes what was
// running (or paused) in the state restored, also a connector found
// STOPPED (stopped by hand, or by the reset being undone), not only the
// connectors the restore stopped itself (issue 40, item 3: the undo of a
// reset after a manual stop left the connector STOPPED).
func TestResumeResumesWhatRanInTheStateRestored(t *testing.T) {
	cc, snap, want := stopWorld(t)
	for name := range want {
		if err := cc.rc.Stop(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	waitREST(t, cc.rc, map[string]string{"src": connectrest.StateStopped, "other": connectrest.StateStopped})
	st, err := store.OpenStore(t.Context(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out strings.Builder
	if _, err := restore.Run(t.Context(), restore.Env{Client: cc.cl, Store: st, Connect: cc.rc, Out: &out}, stopRequest(snap)); err != nil {
		t.Fatalf("restore --stop-connectors --resume: %v\n%s", err, out.String())
	}
	waitREST(t, cc.rc, want)
	if said := out.String(); !strings.Contains(said, "resumed: connector src") || !strings.Contains(said, "paused again: connector other") {
		t.Errorf("the restore does not say it resumed them:\n%s", said)
	}
}
