package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// A key that also lives off its murmur2 partition, as it did in the
// snapshot (the demo's ["inventory-connector",{"server":"server1"}] on
// partition 11 beside 8, the -p 11 of Debezium's docs): the restore keeps
// that copy and says to remove it with a tombstone once the connector has
// committed again, with the kcat command that writes it, on a line of its
// own. Run as printed, the stray copy is gone: the next snapshot no longer
// warns of the key in two partitions. (It said "by hand", with no command.)
func TestStrayCopyTombstoneRunsAsPrinted(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("the printed command is a kcat command: no kcat here (apt-get install kcat)")
	}
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	_, warn := c.mustRun(0, "snapshot")
	const twice = `lives in partitions 8, 11 of topic`
	if !strings.Contains(flat(warn), twice) {
		t.Fatalf("the demo's stray copy is not there to restore: %s", warn)
	}
	id := c.snapshot()
	c.stopConnectors(connectdemo.ConnMySQL)
	out, _ := c.mustRun(0, "restore", id, "--connector", connectdemo.ConnMySQL)
	cmd := pasted(out, "printf ")
	if !strings.Contains(cmd, "| kcat -P ") || !strings.Contains(cmd, " -p 11 ") {
		t.Fatalf("no tombstone command for partition 11 in:\n%s", out)
	}
	if b, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	if _, warn = c.mustRun(0, "snapshot"); strings.Contains(flat(warn), twice) {
		t.Errorf("after the printed tombstone, the key is still in two partitions:\n%s", warn)
	}
}
