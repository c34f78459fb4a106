package main

import (
	"slices"
	"strings"
	"testing"
)

// The demo's daemon line carries the demo's Connect URL: without it the
// daemon's "reset seen" undo of a deleted connector could not create it
// again, nor stop and resume a running one, and its drills did not compare
// with Connect. The line, joined as a shell joins it, parses as the daemon
// command's flags.
func TestDemoGuideDaemonKnowsConnect(t *testing.T) {
	const url = "http://127.0.0.1:33083"
	var b strings.Builder
	demoGuide(&b, "offsetkeeper", "127.0.0.1:33092,127.0.0.1:33093", url, " --store /tmp/demo-store", "127.0.0.1:33464")
	var line string
	for _, l := range strings.Split(joinContinued(b.String()), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "offsetkeeper daemon ") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatalf("no daemon line in the guide:\n%s", b.String())
	}
	// "@every 1m" reads the same in single quotes, which shellArgs knows.
	args := shellArgs(t, strings.ReplaceAll(line, `"`, `'`))
	i := slices.Index(args, "--connect-url")
	if i < 0 || i+1 >= len(args) || args[i+1] != url {
		t.Errorf("the printed daemon line lacks --connect-url %s: %s", url, line)
	}
	fs := flagsOf(daemonCommand)
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		t.Errorf("the printed daemon line does not parse as daemon flags (%v, %q): %s", err, fs.Args(), line)
	}
}
