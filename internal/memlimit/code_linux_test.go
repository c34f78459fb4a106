package memlimit

import (
	"fmt"
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

// TestReleaseCode: the binary's pages mapped so far leave the process's
// resident memory, and the code runs on (its pages come back as it uses
// them): the test goes on to format and parse, which touches code of its
// own and of the runtime.
func TestReleaseCode(t *testing.T) {
	// Map pages the way starting a command does: code all over the binary.
	want := fmt.Sprintf("%v %q %x", t.Name(), strings.Repeat("x", 3), []byte("ok"))
	before := rssFile(t)
	ReleaseCode()
	after := rssFile(t)
	t.Logf("RssFile %d KiB before, %d KiB after", before, after)
	if after >= before {
		t.Errorf("RssFile %d KiB after ReleaseCode, %d KiB before: nothing was released", after, before)
	}
	if got := fmt.Sprintf("%v %q %x", t.Name(), strings.Repeat("x", 3), []byte("ok")); got != want {
		t.Errorf("after ReleaseCode: %q, before: %q", got, want)
	}
	if n, err := strconv.Atoi("12345"); err != nil || n != 12345 {
		t.Errorf("after ReleaseCode: Atoi: %d, %v", n, err)
	}
}
