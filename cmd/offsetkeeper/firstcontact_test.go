package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// What a new operator types first gets the helpful answer: help NAME is
// NAME's help; undo and rollback point at the undo snapshots; a time
// without a zone says to add Z.
func TestFirstContact(t *testing.T) {
	code, help, _ := runCLI(t, "help", "restore")
	_, want, _ := runCLI(t, "restore", "--help")
	if code != exitOK || help != want || !strings.HasPrefix(help, "Usage: offsetkeeper restore") {
		t.Errorf("help restore: exit %d, not restore's help:\n%.300s", code, help)
	}
	for _, word := range []string{"undo", "rollback"} {
		code, _, stderr := runCLI(t, word)
		if code != exitUsage || !strings.Contains(stderr, "'offsetkeeper list --kind undo'") || !strings.Contains(stderr, "'offsetkeeper events'") {
			t.Errorf("%s: exit %d, no pointer to the undo snapshots:\n%s", word, code, stderr)
		}
	}
	code, _, stderr := runCLI(t, "show", "--at", "2026-12-07T02:15:42", "--store", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "add Z for UTC (2026-12-07T02:15:42Z)") {
		t.Errorf("show --at without a zone: exit %d\n%s", code, stderr)
	}
	// Unreachable brokers: a "still trying" line long before the timeout.
	code, _, stderr = runCLI(t, "snapshot", "--brokers", freeAddr(t), "--kafka-timeout", "8s", "--store", t.TempDir())
	if code != exitError || !strings.Contains(stderr, "refuse connections") || !strings.Contains(stderr, "still trying, for up to 8s (--kafka-timeout)") {
		t.Errorf("snapshot with no broker: exit %d\n%s", code, stderr)
	}
	// -o json: an early error is a JSON object on stdout too.
	for _, args := range [][]string{
		{"show", "latest", "-o", "json", "--store", filepath.Join(t.TempDir(), "none")},
		{"list", "--output=json", "--kind", "weekly"},
	} {
		code, stdout, _ := runCLI(t, args...)
		var e jsonError
		if err := json.Unmarshal([]byte(stdout), &e); err != nil || e.ExitCode != code || code == exitOK || e.Error == "" || e.Command != args[0] {
			t.Errorf("%v: exit %d, stdout not a JSON error (%v):\n%s", args, code, err, stdout)
		}
	}
	if got := demoListen(9092); got != "127.0.0.1:9464" {
		t.Errorf("demoListen(9092) = %s", got)
	}
	if got := demoListen(9192); got != "127.0.0.1:9564" {
		t.Errorf("demoListen(9192) = %s", got)
	}
	if got := demoListen(65500); got != "127.0.0.1:65128" {
		t.Errorf("demoListen(65500) = %s", got)
	}
}

// list --connector and --kind pick snapshots out of a store that is
// mostly other ones.
func TestListFilters(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	full := c.snapshot()
	scoped := c.snapshot("--connector", connectdemo.ConnJDBC)
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--kind", "full"}, []string{full}, []string{scoped}},
		{[]string{"--kind", "scoped"}, []string{scoped}, []string{full}},
		{[]string{"--kind", "undo"}, nil, []string{full, scoped}},
		{[]string{"--connector", connectdemo.ConnJDBC}, []string{full, scoped}, nil},
		{[]string{"--connector", connectdemo.ConnMongo}, []string{full}, []string{scoped}},
		{[]string{"--connector", connectdemo.ConnMongo, "--kind", "scoped"}, nil, []string{full, scoped}},
	} {
		out, _ := c.mustRun(exitOK, append([]string{"list"}, tt.args...)...)
		for _, id := range tt.want {
			if !strings.Contains(out, id) {
				t.Errorf("list %v lacks %s:\n%s", tt.args, id, out)
			}
		}
		for _, id := range tt.not {
			if strings.Contains(out, id) {
				t.Errorf("list %v lists %s:\n%s", tt.args, id, out)
			}
		}
	}
	if _, stderr := c.mustRun(exitUsage, "list", "--kind", "weekly"); !strings.Contains(stderr, "want full, scoped or undo") {
		t.Errorf("list --kind weekly: %s", stderr)
	}
}
