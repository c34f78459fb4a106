package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// metricLine reports whether the daemon's /metrics has line.
func (d *testDaemon) metricLine(line string) bool {
	_, body, err := httpGet("http://" + d.addr + "/metrics")
	return err == nil && strings.Contains(body, "\n"+line+"\n")
}

// An older snapshot damaged in the store (one flipped byte), which no drill
// reads: the daemon's store check, run as offsetkeeper verify in a process
// of its own, names it in the log with what to do and counts it in
// offsetkeeper_store_verify_failed, and the command it prints says why, run
// as printed.
func TestDaemonChecksStoreInChildProcess(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	dir := t.TempDir()
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", dir)
	if code != exitOK {
		t.Fatalf("snapshot: exit %d: %s", code, errs)
	}
	damaged := lastLine(out)
	flipByte(t, dir, damaged)
	children := childrenOf(t, "verify")
	d := startTestDaemon(t, "--brokers", brokers, "--store", dir, "--drill-schedule", "off", "--verify-schedule", "@every 1h")
	d.waitFor(t, "a store check", func() bool {
		return d.metricLine(`offsetkeeper_store_verifies_total{result="failed"} 1`) ||
			d.metricLine(`offsetkeeper_store_verifies_total{result="passed"} 1`) ||
			d.metricLine(`offsetkeeper_store_verifies_total{result="error"} 1`)
	})
	if !d.metricLine(`offsetkeeper_store_verifies_total{result="failed"} 1`) || !d.metricLine(`offsetkeeper_store_verify_failed{kind="snapshot"} 1`) {
		t.Fatalf("the store check did not find the damaged snapshot:\n%s", d.stderr.String())
	}
	cmd := <-children
	self, _ := os.Executable()
	if want := []string{self, "verify", "--output", "json", "--run-by-daemon"}; !slices.Equal(cmd.Args, want) {
		t.Errorf("store check child: %q, want %q", cmd.Args, want)
	}
	var named bool
	var why string
	for _, l := range d.logLines(t) {
		if l["component"] != "verify" {
			continue
		}
		if l["msg"] == "stored snapshot does not verify: do not restore from it" && l["id"] == damaged {
			named = true
		}
		if l["msg"] == "store check failed" {
			why, _ = l["why"].(string)
		}
	}
	if !named || why == "" {
		t.Fatalf("the log names the damaged snapshot %v, says why with %q\n%s", named, why, d.stderr.String())
	}
	// The page says it too: the board's line, and a note with the command.
	_, body, err := httpGet("http://" + d.addr + "/api/connectors")
	var board struct {
		StoreCheck *struct {
			Failed  []string `json:"failed"`
			Command string   `json:"command"`
		} `json:"store_check"`
		Notes []string `json:"notes"`
	}
	if err != nil || json.Unmarshal([]byte(body), &board) != nil || board.StoreCheck == nil {
		t.Fatalf("board: %v\n%s", err, body)
	}
	if !slices.Equal(board.StoreCheck.Failed, []string{"snapshot " + damaged}) || board.StoreCheck.Command != why ||
		len(board.Notes) == 0 || !strings.Contains(board.Notes[0], why) {
		t.Errorf("board's store check %+v, notes %q: want snapshot %s and %q", board.StoreCheck, board.Notes, damaged, why)
	}
	if _, html, _ := httpGet("http://" + d.addr + "/"); !strings.Contains(html, "store check: 1 do not verify") {
		t.Errorf("the page does not show the store check")
	}
	d.stop(t)

	words := strings.Fields(why)
	if words[0] != "offsetkeeper" || words[1] != "verify" {
		t.Fatalf("printed %q: not offsetkeeper verify", why)
	}
	code, out, errs = runCLI(t, words[1:]...)
	if code != exitError || !strings.Contains(out, "FAIL "+damaged) || !strings.Contains(errs, "do not restore them") {
		t.Fatalf("%s: exit %d\n%s\n%s", why, code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshots", damaged+".snap")); err != nil {
		t.Errorf("the damaged snapshot is gone: %v", err)
	}
}
