package drill

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// On a real Connect 3.8 worker, the completeness check agrees with the
// worker's GET /connectors/{name}/offsets for every connector: a running
// source and sink, a stopped source and a paused one pass; the state
// without the sink's group fails, naming it.
func TestDrillAgreesWithRealWorker(t *testing.T) {
	realconnect.Dir(t)
	c := realconnect.NewCluster(t)
	c.CreateTopic(t, "lines", 2, false)
	w := realconnect.Start(t, c, realconnect.Options{})
	rest := w.REST(t)
	dir := t.TempDir()
	files := map[string]string{"running": filepath.Join(dir, "a.txt"), "stopped": filepath.Join(dir, "b.txt"), "paused": filepath.Join(dir, "c.txt")}
	for name, f := range files {
		realconnect.AppendLines(t, f, "one", "two", name)
		rest.Create(name, realconnect.FileSource(f, "lines"), "")
	}
	rest.Create("sink", realconnect.FileSink(filepath.Join(dir, "out.txt"), "lines"), "")
	for _, name := range []string{"running", "stopped", "paused", "sink"} {
		rest.WaitState(name, "RUNNING", 1)
	}
	realconnect.Eventually(t, "every source at the end of its file, the sink past all 9 records", func() (bool, string) {
		for name, f := range files {
			if realconnect.SourcePosition(t, rest.Offsets(name), f) != int64(len("one\ntwo\n"+name+"\n")) {
				return false, name + ": " + string(rest.Offsets(name))
			}
		}
		sum := int64(0)
		for _, o := range realconnect.SinkOffsets(t, rest.Offsets("sink")) {
			sum += o
		}
		return sum == 9, "sink: " + string(rest.Offsets("sink"))
	})
	rest.Stop("stopped")
	rest.Pause("paused")
	rest.WaitState("stopped", "STOPPED", 0)
	rest.WaitState("paused", "PAUSED", 1)

	state, err := capture.Capture(t.Context(), c.Client, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := connectrest.New(connectrest.Config{URLs: []string{w.URL}, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Connect: rc}
	rep, err := Run(t.Context(), env, Request{State: state, Named: State{Kind: "capture", At: state.CreatedAt}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Passed {
		t.Fatalf("drill on the real worker: %+v", rep.Checks)
	}
	complete := rep.Check(CheckComplete)
	if complete.Result != Passed || len(complete.Notes) != 0 {
		t.Fatalf("complete: %+v", complete)
	}
	if want := "4 connectors compared"; complete.Summary[:len(want)] != want {
		t.Errorf("complete: %s, want %s", complete.Summary, want)
	}

	// The same state without the sink's group: the worker reports offsets
	// for it, so the check fails, naming the connector and the group.
	var sink snapshot.SinkGroup
	for i, g := range state.SinkGroups {
		if g.Connector == "sink" {
			sink = g
			state.SinkGroups = append(state.SinkGroups[:i:i], state.SinkGroups[i+1:]...)
			break
		}
	}
	rep, err = Run(t.Context(), env, Request{State: state, Named: State{Kind: "capture", At: state.CreatedAt}})
	if err != nil {
		t.Fatal(err)
	}
	fs := failuresOf(rep, CheckComplete, CauseGroupAbsent)
	if rep.Result != Failed || len(fs) != 1 || fs[0].Connector != "sink" || fs[0].Group != sink.Group {
		t.Fatalf("drill without the sink's group: %+v", rep.Checks)
	}
}
