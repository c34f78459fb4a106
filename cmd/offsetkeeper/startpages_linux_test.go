package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile is the process's resident file-backed memory, in KiB.
func rssFile(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("parse %q: %v", l, err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestReleaseStartupPages: the binary's pages mapped so far leave the
// process's resident memory, and the code runs on (its pages come back as
// it uses them): the test goes on to run the command table's help, which
// touches code all over the binary.
func TestReleaseStartupPages(t *testing.T) {
	// Map the binary's pages the way starting a command does.
	var help strings.Builder
	mainUsage(&help)
	before := rssFile(t)
	releaseStartupPages()
	after := rssFile(t)
	t.Logf("RssFile %d KiB before, %d KiB after", before, after)
	if after >= before {
		t.Errorf("RssFile %d KiB after releaseStartupPages, %d KiB before: nothing was released", after, before)
	}
	var again strings.Builder
	mainUsage(&again)
	if again.String() != help.String() || !strings.Contains(again.String(), "Commands:") {
		t.Errorf("the usage after the release differs from the one before:\n%s\n---\n%s", again.String(), help.String())
	}
}
