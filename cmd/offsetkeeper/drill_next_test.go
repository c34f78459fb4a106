package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// A connector created after the newest snapshot: the drill of that
// snapshot fails its completeness check naming it, and prints what to do,
// each command on lines of its own; run as printed, the first (a drill of
// a capture made now) passes and stores no snapshot, the second takes a
// snapshot, and a drill of the newest snapshot then passes.
func TestDrillAdvisesAfterConnectorMissing(t *testing.T) {
	brokers, cl, _ := demoCluster(t, connectdemo.DefaultSpec())
	srv, err := connectsimtest.Start(cl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	if code, _, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", dir); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errs)
	}
	body := `{"name":"late-sink","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","topics":"orders","file":"/tmp/late.txt"}}`
	resp, err := http.Post(srv.URL+"/connectors", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("create late-sink: %s", resp.Status)
	}

	code, out, errs := runCLI(t, "drill", "latest", "--brokers", brokers, "--store", dir, "--connect-url", srv.URL)
	if code != 1 || !strings.Contains(out, `connector-missing connector "late-sink"`) {
		t.Fatalf("drill latest with a connector made after it: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	cmds := checkAdvice(t, "drill after connector-missing", errs)
	if len(cmds) != 2 || !strings.Contains(flat(errs), "(late-sink)") {
		t.Fatalf("drill after connector-missing: commands %q\n%s", cmds, errs)
	}
	check, take := cmds[0], cmds[1]
	if !strings.HasPrefix(check, "offsetkeeper drill --") || !strings.HasPrefix(take, "offsetkeeper snapshot --") {
		t.Fatalf("printed commands %q", cmds)
	}
	before := listIDs(t, dir)
	code, out, errs = runPasted(t, check)
	if code != 0 || !strings.Contains(out, "PASSED") || !strings.Contains(out, "a capture of the live cluster") {
		t.Fatalf("printed drill: exit %d\n%s\n%s", code, out, errs)
	}
	if after := listIDs(t, dir); len(after) != len(before) {
		t.Fatalf("the printed drill stored a snapshot: %q then %q", before, after)
	}
	if code, _, errs := runPasted(t, take); code != 0 {
		t.Fatalf("printed snapshot: exit %d\n%s", code, errs)
	}
	code, out, errs = runCLI(t, "drill", "latest", "--brokers", brokers, "--store", dir, "--connect-url", srv.URL)
	if code != 0 || !strings.Contains(out, "PASSED") {
		t.Fatalf("drill latest after the printed snapshot: exit %d\n%s\n%s", code, out, errs)
	}

	// A drill of a capture made now that misses a connector prints no
	// such advice: a new snapshot would miss it too.
	if next, _ := (&drillCmd{env: &env{g: &globals{}}}).nextAfterAbsent(captureReport("late-sink")); next != "" {
		t.Errorf("advice after a capture's drill: %s", next)
	}
}

// runPasted runs cmd as a shell would, as printed.
func runPasted(t *testing.T, cmd string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLI(t, shellArgs(t, cmd)...)
}

// listIDs lists the snapshot IDs of the store in dir.
func listIDs(t *testing.T, dir string) []string {
	t.Helper()
	code, out, errs := runCLI(t, "list", "--store", dir, "--output", "json")
	var listed []struct {
		ID string `json:"id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil {
		t.Fatalf("list: exit %d: %s\n%s", code, out, errs)
	}
	ids := make([]string, len(listed))
	for i, l := range listed {
		ids[i] = l.ID
	}
	return ids
}

// captureReport is a failed drill of a capture made now that lacks
// connector name.
func captureReport(name string) *drill.Report {
	return &drill.Report{
		State:  drill.State{Kind: "capture"},
		Result: drill.Failed,
		Checks: []drill.Check{{Name: drill.CheckComplete, Result: drill.Failed, Failures: []drill.Failure{
			{Cause: drill.CauseConnectorAbsent, Connector: name, Partition: -1},
		}}},
	}
}

// The newest snapshot damaged (one flipped byte): its drill fails, counts
// RPO from the full snapshot before it, and prints what to do; run as
// printed, the drill of the snapshot before it passes, a new snapshot is
// taken, and its drill passes. The report's drill show command runs as
// printed too.
func TestDrillAdvisesAfterUnreadable(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	dir := t.TempDir()
	var ids []string
	for range 2 {
		code, out, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", dir)
		if code != 0 {
			t.Fatalf("snapshot: exit %d: %s", code, errs)
		}
		ids = append(ids, lastLine(out))
	}
	flipByte(t, dir, ids[1])

	code, out, errs := runCLI(t, "drill", "latest", "--brokers", brokers, "--store", dir)
	if code != 1 || !strings.Contains(out, "snapshot-unreadable") || !strings.Contains(out, "no scratch cluster started") {
		t.Fatalf("drill of a damaged snapshot: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "newest full snapshot "+ids[0]) {
		t.Errorf("RPO does not count from the snapshot before the damaged one:\n%s", out)
	}
	_, stored, _ := strings.Cut(out, "report stored as")
	show := printedCommands(t, stored, "offsetkeeper")
	if len(show) != 1 || !strings.HasPrefix(show[0], "offsetkeeper drill show ") {
		t.Fatalf("report line: commands %q\n%s", show, out)
	}
	if code, out, errs := runPasted(t, show[0]); code != 0 || !strings.Contains(out, `"snapshot-unreadable"`) {
		t.Fatalf("printed drill show: exit %d\n%s\n%s", code, out, errs)
	}
	cmds := checkAdvice(t, "drill of a damaged snapshot", errs)
	if len(cmds) != 3 || !strings.Contains(cmds[0], "drill "+ids[0]) || !strings.Contains(flat(errs), "restore nothing from it") {
		t.Fatalf("drill of a damaged snapshot: commands %q\n%s", cmds, errs)
	}
	for i, want := range []string{"PASSED", "", "PASSED"} {
		code, out, errs := runPasted(t, cmds[i])
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("printed command %d %q: exit %d\n%s\n%s", i, cmds[i], code, out, errs)
		}
	}
	if ids2 := listIDs(t, dir); len(ids2) != 3 {
		t.Fatalf("after the printed snapshot the store lists %q", ids2)
	}
}
