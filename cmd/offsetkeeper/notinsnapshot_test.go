package main

import (
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestNotInSnapshotShowRunsAsPrinted: a restore naming a connector the
// snapshot lacks (renamed since: --connector NEW, or --rename-connector
// with a wrong OLD) prints the show command that lists the snapshot's
// connectors. It printed 'offsetkeeper show ID' without the restore's
// --store, which read the default store and failed; now, run as printed,
// it lists the snapshot's connectors from the store the restore read, and
// it is on lines of its own within 120 columns.
func TestNotInSnapshotShowRunsAsPrinted(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	t.Chdir(t.TempDir()) // no store in the working directory to fall back on
	for _, args := range [][]string{
		{"restore", id, "--connector", "renamed-since", "--dry-run"},
		{"restore", id, "--allow-other-cluster", "--rename-connector", "renamed-since=" + connectdemo.ConnJDBC, "--connector", "renamed-since", "--dry-run"},
	} {
		_, stderr := c.mustRun(exitError, args...)
		cmds := checkAdvice(t, args[3], stderr)
		if len(cmds) != 1 || !strings.HasPrefix(cmds[0], "offsetkeeper show "+id+" ") || !strings.Contains(flat(stderr), `"renamed-since" not found`) {
			t.Fatalf("%q: commands %q:\n%s", args, cmds, stderr)
		}
		code, out, errs := c.runPrinted(cmds[0])
		if code != exitOK || !strings.Contains(out, "snapshot "+id) || !strings.Contains(out, "connector "+connectdemo.ConnJDBC) {
			t.Errorf("the printed %s: exit %d\n%s\n%s", cmds[0], code, out, errs)
		}
	}
}
