package main

import (
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// TestDryRunStopListFits: the dry run of a restore with --stop-connectors
// names every connector the real run would stop, wrapped within 120
// columns as the real run's "stopping" line is (on the demo's incident of
// a recreated offsets topic, a line of 281 columns), and stops none.
func TestDryRunStopListFits(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	c.badReset()
	srv := c.startConnect(connectsim.Options{})
	out, _ := c.mustRun(exitOK, "restore", id, "--connect-url", srv.URL, "--stop-connectors", "--resume", "--dry-run")
	fits(t, "dry run", out)
	said := flat(out)
	i := strings.Index(said, "dry run: --stop-connectors would stop ")
	if i < 0 {
		t.Fatalf("the dry run names no connector it would stop:\n%s", out)
	}
	for _, name := range []string{connectdemo.ConnJDBC, connectdemo.ConnMirror} {
		if !strings.Contains(said[i:], " "+name) {
			t.Errorf("the dry run's stop list lacks %s:\n%s", name, out)
		}
	}
	if got := c.configStates()[connectdemo.ConnJDBC]; got.TargetState == "STOPPED" {
		t.Errorf("the dry run stopped %s", connectdemo.ConnJDBC)
	}
}
