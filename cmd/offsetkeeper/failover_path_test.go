package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
)

// TestFailoverStopCommandsShellSafe: a connector named with characters
// url.PathEscape leaves as they are (& ; $ =) runs on the primary. The
// refusal printed "curl -s -X PUT http://.../connectors/a&b;c$d=e/stop":
// pasted into a shell, it ran curl on ".../a" in the background and the
// rest as other commands, and stopped nothing. Now the name is
// percent-encoded: the printed stop, run by sh as printed, stops it.
func TestFailoverStopCommandsShellSafe(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed commands are curl commands: no curl here")
	}
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	prim, err := connectsimtest.Start(w.acl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prim.Close)
	prc, err := connectrest.New(connectrest.Config{URLs: []string{prim.URL}})
	if err != nil {
		t.Fatal(err)
	}
	name := "a&b;c$d=e"
	if _, err := prc.CreateConnector(ctx, name, map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"tasks.max": "1", "file": "/tmp/in.txt", "topic": "orders"}, ""); err != nil {
		t.Fatal(err)
	}
	if s, err := prc.Status(ctx, name); err != nil || s.Connector.State != "RUNNING" {
		t.Fatalf("%s on the primary: %+v %v, want RUNNING", name, s, err)
	}
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--connect-url", prim.URL, "--dry-run"}, w.flags()...)...)
	if code != exitRefused {
		t.Fatalf("failover while the primary runs: exit %d\n%s\n%s", code, out, errs)
	}
	var stop string
	for _, l := range strings.Split(errs, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "curl ") && strings.HasSuffix(strings.TrimSuffix(s, "'"), "/stop") && strings.Contains(s, "/connectors/a") {
			stop = s
		}
	}
	if stop == "" {
		t.Fatalf("no stop command of %s printed:\n%s", name, errs)
	}
	if b, err := exec.Command("sh", "-c", strings.Replace(stop, "curl", curl, 1)).CombinedOutput(); err != nil {
		t.Fatalf("the printed command %s: %v\n%s", stop, err, b)
	}
	if s, err := prc.Status(ctx, name); err != nil || s.Connector.State != "STOPPED" {
		t.Errorf("%s on the primary after the printed %s: %+v %v, want STOPPED", name, stop, s, err)
	}
}
