package main

import (
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
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

// TestNotInSnapshotShowAtRunsAsPrinted: restore --at a moment before the
// connector existed (created since, or renamed) lists the state's
// connectors with show --at that moment and the restore's settings; it
// printed "show 'at TIME (snapshot ID + journal to seq N)'", the state's
// description where show takes a snapshot ID, which failed. Run as
// printed, it shows the state at that moment.
func TestNotInSnapshotShowAtRunsAsPrinted(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	c.waitJournal(time.Now(), logs) // its first snapshot: the earliest restorable moment
	at := moment()
	c.waitJournal(at, logs)
	args := []string{"restore", "--at", restore.FormatMoment(at), "--connector", "created-since", "--dry-run"}
	_, stderr := c.mustRun(exitError, args...)
	cmds := checkAdvice(t, "restore --at", stderr)
	if len(cmds) != 1 || !strings.HasPrefix(cmds[0], "offsetkeeper show --at "+restore.FormatMoment(at)+" ") {
		t.Fatalf("commands %q:\n%s", cmds, stderr)
	}
	code, out, errs := c.runPrinted(cmds[0])
	if code != exitOK || !strings.Contains(out, "connector "+connectdemo.ConnJDBC) {
		t.Errorf("the printed %s: exit %d\n%s\n%s", cmds[0], code, out, errs)
	}
}
