package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// The drill line of the demo's walk-through, run as printed while the
// demo's connectors commit, passes all three checks, and list shows it.
func TestDemoDrill(t *testing.T) {
	t.Chdir(t.TempDir())
	kport, cport := freePorts(t, 3), freePorts(t, 1)
	out := startDemo(t, "--port", strconv.Itoa(kport), "--rest-port", strconv.Itoa(cport), "--churn-every", "200ms")
	// A command wider than 120 columns is continued on the next lines.
	guide := joinContinued(out.String())
	m := regexp.MustCompile(`(?m)^  go run ./cmd/offsetkeeper (drill .*)$`).FindStringSubmatch(guide)
	if m == nil {
		t.Fatalf("no drill line in the walk-through:\n%s", out.String())
	}
	args := strings.Fields(m[1])
	code, stdout, errs := runCLI(t, args...)
	if code != 0 || !strings.Contains(stdout, "PASSED") || !strings.Contains(stdout, "ok   complete") {
		t.Fatalf("%s: exit %d\n%s\n%s", m[1], code, stdout, errs)
	}
	if n := strings.Count(stdout, "\n"); n > 24 {
		t.Errorf("the drill takes %d lines, more than a screen:\n%s", n, stdout)
	}
	code, stdout, errs = runCLI(t, append(args, "--output", "json")...)
	var rep drill.Report
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil || rep.Result != drill.Passed || len(rep.Checks) != 3 {
		t.Fatalf("%s --output json: exit %d\n%s\n%s", m[1], code, stdout, errs)
	}
	if code, stdout, _ := runCLI(t, "list"); code != 0 || !strings.Contains(stdout, "last drill: "+rep.ID+" PASSED") {
		t.Errorf("list does not show the last drill %s:\n%s", rep.ID, stdout)
	}
}
