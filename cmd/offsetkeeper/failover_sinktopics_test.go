package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestFailoverHoldsSinkWithUnmatchedRegex: a sink connector that runs on
// the primary reads topics.regex "clicks|orders"; the standby's copies
// are MirrorMaker 2's a.clicks and a.orders. Failover translated its
// offsets to the copies and resumed it with its pattern as it was, which
// matches none of them: it would read none of the records its offsets
// point at, and failover said nothing. Now failover leaves it STOPPED,
// names it (held_stopped in --output json) with its pattern, the copies
// it misses and the command that starts it once the pattern is changed,
// and resumes the others. Run as printed after the pattern is changed on
// the standby, that command starts it; a run again then resumes it too.
func TestFailoverHoldsSinkWithUnmatchedRegex(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed command is a curl command: no curl here")
	}
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	name := connectdemo.ConnSinkS3 // topics.regex clicks|orders, STOPPED in the spec: started here
	testkit.Produce(t, w.acl, &kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-" + name),
		Value: []byte(`{"state":"STARTED"}`)})
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	args := append([]string{"failover", "--store", st}, w.flags()...)
	code, out, errs := runCLI(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(flat(out), "would not resume: sink connector "+name+", left STOPPED") {
		t.Fatalf("failover --dry-run: exit %d, want it to name %s it would not resume\n%s\n%s", code, name, out, errs)
	}
	code, out, errs = runCLI(t, args...)
	t.Logf("failover:\n%s\n%s", out, errs)
	if code != 0 {
		t.Fatalf("failover: exit %d", code)
	}
	fits(t, "failover", out)
	for _, want := range []string{"not resumed: sink connector " + name + `, left STOPPED: its topics.regex "clicks|orders" ` +
		"does not match a.clicks, a.orders"} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("failover does not say %q", want)
		}
	}
	if s, err := w.rc.Status(ctx, name); err != nil || s.Connector.State != "STOPPED" {
		t.Fatalf("%s on the standby after failover: %+v %v, want STOPPED", name, s, err)
	}
	if s, err := w.rc.Status(ctx, connectdemo.ConnSinkES); err != nil || s.Connector.State != "RUNNING" {
		t.Errorf("%s (its topics list rewritten) after failover: %+v %v, want RUNNING", connectdemo.ConnSinkES, s, err)
	}
	var cmds []string
	for _, l := range strings.Split(out, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "curl ") {
			cmds = append(cmds, s)
		}
	}
	if len(cmds) != 1 || !strings.Contains(cmds[0], "/connectors/"+name+"/resume") {
		t.Fatalf("printed commands %q, want the resume of %s", cmds, name)
	}

	// The operator changes the pattern on the standby, then runs the
	// printed command.
	cfg, err := w.rc.Config(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg["topics.regex"] = `a\.(clicks|orders)`
	if err := w.rc.PutConfig(ctx, name, cfg); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("sh", "-c", strings.Replace(cmds[0], "curl", curl, 1)).CombinedOutput(); err != nil {
		t.Fatalf("the printed command %s: %v\n%s", cmds[0], err, b)
	}
	if s, err := w.rc.Status(ctx, name); err != nil || s.Connector.State != "RUNNING" {
		t.Errorf("%s after the printed command: %+v %v, want RUNNING", name, s, err)
	}

	// Run again with the pattern changed: nothing held.
	code, out, errs = runCLI(t, append(args, "--output", "json")...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Held) != 0 || !slices.Contains(doc.Resumed, name) {
		t.Fatalf("failover run again: exit %d, held %+v, resumed %v\n%s\n%s", code, doc.Held, doc.Resumed, out, errs)
	}
}

// TestFailoverNamesStoppedSinkWithUnmatchedRegex: after a planned
// switchover every connector is STOPPED in the primary's state, and the
// refusal that asked for the stop printed the resumes to run on the
// standby afterwards, a sink whose topics.regex misses the copies among
// them. Failover left it STOPPED, as on the primary, without a word. Now
// it names it, says why it must not start as it is, and prints the
// command that starts it once its pattern is changed; run as printed
// then, the sink runs.
func TestFailoverNamesStoppedSinkWithUnmatchedRegex(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed command is a curl command: no curl here")
	}
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	name := connectdemo.ConnSinkS3 // STOPPED in the primary's state
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--output", "json"}, w.flags()...)...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("failover: exit %d\n%s\n%s", code, out, errs)
	}
	if len(doc.Held) != 1 || doc.Held[0].Connector != name || !doc.Held[0].Stopped || !slices.Contains(doc.LeftStopped, name) {
		t.Fatalf("held_stopped %+v, left_stopped %v: want %s, stopped on the primary", doc.Held, doc.LeftStopped, name)
	}
	// The text run again says so too (nothing left to write).
	code, out, errs = runCLI(t, append([]string{"failover", "--store", st}, w.flags()...)...)
	if code != 0 || !strings.Contains(flat(out), "note: sink connector "+name+", left STOPPED as on the primary: its topics.regex") ||
		strings.Contains(out, "held 1") {
		t.Fatalf("failover run again: exit %d\n%s\n%s", code, out, errs)
	}
	fits(t, "run again", out)
	cfg, err := w.rc.Config(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cfg["topics.regex"] = `a\.(clicks|orders)`
	if err := w.rc.PutConfig(ctx, name, cfg); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("sh", "-c", strings.Replace(doc.Held[0].Command, "curl", curl, 1)).CombinedOutput(); err != nil {
		t.Fatalf("the printed command %s: %v\n%s", doc.Held[0].Command, err, b)
	}
	if s, err := w.rc.Status(ctx, name); err != nil || s.Connector.State != "RUNNING" {
		t.Errorf("%s after the printed command: %+v %v, want RUNNING", name, s, err)
	}
}
