package drill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// demoWorld is the demo's Connect cluster in kfake, its fake REST API and
// a fresh capture of it.
type demoWorld struct {
	cl    *kgo.Client
	rc    *connectrest.Client
	state *snapshot.Snapshot
}

func newDemoWorld(t *testing.T) demoWorld {
	t.Helper()
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	srv, err := connectsimtest.Start(cl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	state, err := capture.Capture(t.Context(), cl, capture.Options{ProgramVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return demoWorld{cl: cl, rc: rc, state: state}
}

func (w demoWorld) drill(t *testing.T, state *snapshot.Snapshot) *Report {
	t.Helper()
	var out bytes.Buffer
	rep, err := Run(t.Context(), Env{Connect: w.rc}, Request{State: state, Named: State{Kind: "capture", At: state.CreatedAt}, ToolVersion: "test", restoreOutForTests: &out})
	if err != nil {
		t.Fatalf("drill: %v\nrestore said:\n%s", err, out.String())
	}
	if t.Failed() || rep.Result != Passed {
		var text bytes.Buffer
		PrintText(&text, rep)
		t.Logf("report:\n%s\nrestore said:\n%s", text.String(), out.String())
	}
	return rep
}

// failuresOf returns the failures of check name with cause.
func failuresOf(rep *Report, name, cause string) []Failure {
	var out []Failure
	for _, f := range rep.Check(name).Failures {
		if f.Cause == cause {
			out = append(out, f)
		}
	}
	return out
}

func TestDrillPassesOnDemoCluster(t *testing.T) {
	w := newDemoWorld(t)
	rep := w.drill(t, w.state)
	if rep.Result != Passed {
		t.Fatalf("result %s, failed checks %v", rep.Result, rep.Failed())
	}
	for _, name := range []string{CheckRestorable, CheckComplete, CheckRecoverable} {
		if c := rep.Check(name); c == nil || c.Result != Passed {
			t.Errorf("check %s: %+v", name, c)
		}
	}
	if rep.RTO.Records == 0 || rep.RTO.Groups != len(w.state.SinkGroups) {
		t.Errorf("RTO wrote %d records and %d groups; the state has %d groups", rep.RTO.Records, rep.RTO.Groups, len(w.state.SinkGroups))
	}
	// The demo's stray copy (kcat -p 11) is a note, not a failure.
	if notes := strings.Join(rep.Check(CheckRestorable).Notes, "\n"); !strings.Contains(notes, "stray copy") {
		t.Errorf("no note of the stray copy: %s", notes)
	}
	var text bytes.Buffer
	PrintText(&text, rep)
	for _, l := range strings.Split(strings.TrimSpace(text.String()), "\n") {
		if n := len([]rune(l)); n > textWidth {
			t.Errorf("line of %d columns: %s", n, l)
		}
	}
	if n := strings.Count(text.String(), "\n"); n > 24 {
		t.Errorf("a passing drill takes %d lines, more than a screen:\n%s", n, text.String())
	}
	doc, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseReport(doc)
	if err != nil || back.Result != Passed || len(back.Checks) != 3 {
		t.Fatalf("report does not read back: %v %+v", err, back)
	}
}

// A source key only on a partition that is not murmur2(key) % n is where
// no Connect producer writes it and no restore puts it.
func TestDrillFailsOnKeyOnWrongPartition(t *testing.T) {
	w := newDemoWorld(t)
	state := w.state
	i := -1
	for j, o := range state.SourceTable().Collect() {
		if o.Connector == connectdemo.ConnFile {
			i = j
		}
	}
	if i < 0 {
		t.Fatalf("no offset of %s in the state", connectdemo.ConnFile)
	}
	offs := state.SourceTable().Collect()
	o := &offs[i]
	o.Partition = (o.Partition + 1) % state.PartitionCount(o.Topic)
	state.SetSourceOffsets(offs)
	rep := w.drill(t, state)
	if rep.Result != Failed {
		t.Fatalf("result %s", rep.Result)
	}
	fs := failuresOf(rep, CheckRestorable, CauseWrongPartition)
	if len(fs) != 1 || fs[0].Connector != connectdemo.ConnFile || fs[0].Partition != o.Partition || fs[0].SourcePartition == "" {
		t.Fatalf("wrong-partition failures %+v", fs)
	}
}

// A state that lacks a sink group Connect reports (a capture made while
// the group could not be read) fails Complete, naming the connector.
func TestDrillFailsOnMissingSinkGroup(t *testing.T) {
	w := newDemoWorld(t)
	state := w.state
	var dropped snapshot.SinkGroup
	for i, g := range state.SinkGroups {
		if g.Connector != "" && len(g.Offsets) > 0 {
			if c, ok := state.Connector(g.Connector); ok && c.HasConfig {
				dropped = g
				state.SinkGroups = append(state.SinkGroups[:i:i], state.SinkGroups[i+1:]...)
				break
			}
		}
	}
	if dropped.Group == "" {
		t.Fatal("no sink group with a connector in the state")
	}
	rep := w.drill(t, state)
	if rep.Check(CheckRestorable).Result != Passed {
		t.Errorf("restorable: %+v", rep.Check(CheckRestorable))
	}
	fs := failuresOf(rep, CheckComplete, CauseGroupAbsent)
	if rep.Result != Failed || len(fs) != 1 || fs[0].Connector != dropped.Connector || fs[0].Group != dropped.Group {
		t.Fatalf("result %s, group-missing failures %+v; checks %+v", rep.Result, fs, rep.Checks)
	}
}

// A state that cannot be read (a snapshot object with a flipped byte)
// fails Restorable with the read error; nothing is restored.
func TestDrillFailsOnUnreadableState(t *testing.T) {
	rep, err := Run(context.Background(), Env{}, Request{ReadError: snapshot.ErrChecksum, Named: State{Kind: "snapshot", SnapshotID: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	fs := failuresOf(rep, CheckRestorable, CauseUnreadable)
	if rep.Result != Failed || len(fs) != 1 || !strings.Contains(fs[0].Detail, "checksum") {
		t.Fatalf("result %s, failures %+v", rep.Result, rep.Checks)
	}
	if c := rep.Check(CheckComplete); c.Result != Skipped {
		t.Errorf("complete: %+v", c)
	}
}

// A scratch cluster that does not answer is ErrCannotRun, never a pass.
func TestDrillCannotRunWithoutScratch(t *testing.T) {
	w := newDemoWorld(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := Run(ctx, Env{}, Request{State: w.state, ScratchBrokers: []string{"127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), ErrCannotRun.Error()) {
		t.Fatalf("err %v, want ErrCannotRun", err)
	}
}

// --scratch-brokers: the drill restores into that cluster, passes, and
// deletes the topics and groups it made there; a scratch cluster that
// already has one of the state's topics is refused (cannot run).
func TestDrillIntoScratchBrokers(t *testing.T) {
	w := newDemoWorld(t)
	sc, scl := testkit.Cluster(t)
	req := Request{State: w.state, Named: State{Kind: "capture", At: w.state.CreatedAt}, ScratchBrokers: sc.ListenAddrs()}
	rep, err := Run(t.Context(), Env{Connect: w.rc}, req)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Passed || rep.Scratch == "embedded" {
		t.Fatalf("result %s into %s: %+v", rep.Result, rep.Scratch, rep.Checks)
	}
	adm := kadm.NewClient(scl)
	topics, err := adm.ListTopics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); len(names) != 0 {
		t.Errorf("the drill left topics in the scratch cluster: %v", names)
	}
	groups, err := adm.ListGroups(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if names := groups.Groups(); len(names) != 0 {
		t.Errorf("the drill left groups in the scratch cluster: %v", names)
	}
	if err := connectdemo.CreateTopics(t.Context(), scl, connectdemo.DefaultTopics()); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), Env{}, req); !errors.Is(err, ErrCannotRun) || !strings.Contains(err.Error(), "already has topic") {
		t.Fatalf("drill into a scratch cluster with the state's topics: %v, want ErrCannotRun", err)
	}
}
