package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// dailyNormal replaces what changes from run to run (IDs, times, sizes,
// durations) in the demo's output, for the golden files.
var dailyNormal = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{6}`), "<ID>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<TIME>"},
	{regexp.MustCompile(`size: \d+ bytes`), "size: <N> bytes"},
	{regexp.MustCompile(`sink offsets [0-9.]+(ns|µs|ms|s|m)+ older`), "sink offsets <D> older"},
	{regexp.MustCompile(`(?m)  \d+$`), "  <N>"},                  // list's SIZE column
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<PORT>"}, // the demo's free ports, in printed commands
}

func normalize(s string) string {
	for _, n := range dailyNormal {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// golden compares got with testdata/daily/<name>.txt (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir, "daily", name+".txt")
	got = normalize(got)
	if *updateMan {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/offsetkeeper -run TestDemoDailyOutput -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from %s (-update rewrites it):\n got:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// testdataDir is absolute: the test runs in a temporary directory.
var testdataDir, _ = filepath.Abs("testdata")

// TestDemoDailyOutput: against the demo, as its guide runs them, snapshot,
// pin, list, restore --dry-run, restore --at ... --dry-run and prune
// --dry-run print their result
// on stdout and on stderr only a warning that is a real problem (a key in
// two partitions of the offsets topic: which one a worker reads is
// nondeterministic); no INFO lines, no line over 120 columns. The golden
// files under testdata/daily hold the output.
func TestDemoDailyOutput(t *testing.T) {
	t.Chdir(t.TempDir())
	kport, cport := freePorts(t, 3), freePorts(t, 1)
	ctx := t.Context()
	startDemo(t, "--port", strconv.Itoa(kport), "--rest-port", strconv.Itoa(cport), "--churn-every", "1000h")
	brokers := "127.0.0.1:" + strconv.Itoa(kport)
	check := func(name string, wantStderr string, args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		if normalize(stderr) != wantStderr {
			t.Errorf("%s: stderr\n%s\nwant\n%s", name, stderr, wantStderr)
		}
		for _, l := range strings.Split(stdout+stderr, "\n") {
			if n := len([]rune(l)); n > 120 {
				t.Errorf("%s: a line of %d columns: %s", name, n, l)
			}
		}
		golden(t, name, stdout)
		return stdout
	}
	const realWarning = "offsetkeeper snapshot: warning: key [\"inventory-connector\",{\"server\":\"server1\"}] lives in partitions 8, 11 of topic\n" +
		"  \"connect-offsets\"; a worker's view of it is nondeterministic (written to a wrong partition by hand, or partitions were\n  added)\n"
	check("snapshot", realWarning, "snapshot", "--brokers", brokers)
	// A pin with its note: list's PIN column and the notes under the table.
	check("pin", "", "pin", "latest", "--note", "before the demo's bad reset")
	check("list", "", "list")
	check("restore-dry-run", "", "restore", "latest", "--dry-run", "--brokers", brokers)

	// The journal, for --at: the daemon, until its epoch has segments.
	dctx, stop := context.WithCancel(ctx)
	ddone := make(chan int, 1)
	var dout, derr testkit.SyncBuffer
	go func() {
		ddone <- run(dctx, []string{"daemon", "--brokers", brokers, "--schedule", "@every 1000h", "--journal-interval", "100ms",
			"--listen", "", "--leader-election=false"}, &dout, &derr)
	}()
	st, err := store.OpenStore(ctx, defaultStore)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The epoch's first segment covers the journal to its last time: the
	// moment --at restores to. (Nothing changes, so a second segment would
	// wait for the journal's heartbeat, a minute.)
	var at time.Time
	for {
		l, err := st.Journal().List(ctx)
		if err == nil && len(l.Epochs) > 0 {
			if last, ok := l.Epochs[len(l.Epochs)-1].Last(); ok {
				at = last.LastTime
				break
			}
		}
		select {
		case code := <-ddone:
			t.Fatalf("daemon ended: exit %d\n%s", code, derr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	if code := <-ddone; code != exitOK {
		t.Fatalf("daemon: exit %d\n%s", code, derr.String())
	}
	if !strings.Contains(derr.String(), "level=INFO") {
		t.Errorf("the daemon logs no INFO lines by default:\n%s", derr.String())
	}
	check("restore-at-dry-run", "", "restore", "--at", at.UTC().Format(time.RFC3339Nano), "--dry-run", "--brokers", brokers)
	// --keep-manual-within 0: the other manual snapshot is removed, the
	// pinned one kept.
	check("prune-dry-run", "", "prune", "--keep-last", "1", "--keep-manual-within", "0", "--dry-run")
	// --log-level info brings the INFO lines back.
	if _, _, stderr := runCLI(t, "list", "--log-level", "info", "--store", "mem://"); stderr != "" {
		t.Logf("list of an empty store logs: %s", stderr)
	}
	if _, _, stderr := runCLI(t, "restore", "latest", "--dry-run", "--brokers", brokers, "--log-level", "info"); !strings.Contains(stderr, "level=INFO") {
		t.Errorf("restore --log-level info: no INFO line on stderr:\n%s", stderr)
	}
}

// TestWrapLastColumn: a table line wider than its width breaks in its last
// column, at its commas first, under the column; narrower lines are as
// they were.
func TestWrapLastColumn(t *testing.T) {
	table := "ACTION  ID  WHY\n" +
		"keep    a   short\n" +
		"keep    bé  base of the newest journal epoch, newest full snapshot, last snapshot\n" +
		"remove  c   manual full snapshots are not kept (keep-manual-within 0)\n"
	want := "ACTION  ID  WHY\n" +
		"keep    a   short\n" +
		"keep    bé  base of the newest journal epoch,\n" +
		"            newest full snapshot, last snapshot\n" +
		"remove  c   manual full snapshots are not kept\n" +
		"            (keep-manual-within 0)\n"
	got := wrapLastColumn(table, 47)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		if n := len([]rune(l)); n > 47 {
			t.Errorf("a line of %d columns: %s", n, l)
		}
	}
	if got := wrapLastColumn(table, 200); got != table {
		t.Errorf("a table that fits changed:\n%s", got)
	}
}
