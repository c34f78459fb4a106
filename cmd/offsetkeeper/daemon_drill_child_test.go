package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// hangingConnect is a Connect URL that never answers, and a channel told
// when it is first asked: a drill's completeness check waits there.
func hangingConnect(t *testing.T) (url string, asked <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case ch <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	return hang.URL, ch
}

// drillChildren records the drill children the daemon starts, through
// startDrillChild, for the rest of the test.
func drillChildren(t *testing.T) <-chan *exec.Cmd {
	t.Helper()
	return childrenOf(t, "drill")
}

// childrenOf records the children running command that the daemon starts
// (its drills, its store checks), for the rest of the test.
func childrenOf(t *testing.T, command string) <-chan *exec.Cmd {
	t.Helper()
	started := make(chan *exec.Cmd, 8)
	prev := startDrillChild
	startDrillChild = func(cmd *exec.Cmd) error {
		err := prev(cmd)
		if err == nil && len(cmd.Args) > 1 && cmd.Args[1] == command {
			started <- cmd
		}
		return err
	}
	t.Cleanup(func() { startDrillChild = prev })
	return started
}

// testDaemon is a daemon run as the command line runs it.
type testDaemon struct {
	stderr testkit.SyncBuffer
	exit   chan int
	cancel context.CancelFunc
	addr   string
}

func startTestDaemon(t *testing.T, args ...string) *testDaemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &testDaemon{exit: make(chan int, 1), cancel: cancel, addr: freeAddr(t)}
	args = append([]string{"daemon", "--listen", d.addr, "--log-format", "json", "--schedule", "@every 1h"}, args...)
	go func() { d.exit <- run(ctx, args, &d.stderr, &d.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-d.exit:
		case <-time.After(2 * time.Minute):
			t.Error("the daemon did not stop")
		}
	})
	return d
}

// stop stops the daemon and waits for it: what its goroutines did is
// seen after.
func (d *testDaemon) stop(t *testing.T) int {
	t.Helper()
	d.cancel()
	select {
	case code := <-d.exit:
		d.exit <- code
		return code
	case <-time.After(2 * time.Minute):
		t.Fatalf("the daemon did not stop\n%s", d.stderr.String())
		return -1
	}
}

// waitFor waits for cond, failing the test if the daemon exits first or
// nothing happens within a generous bound.
func (d *testDaemon) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		select {
		case code := <-d.exit:
			d.exit <- code
			t.Fatalf("the daemon exited %d while waiting for %s\n%s", code, what, d.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s\n%s", what, d.stderr.String())
		}
	}
}

// drills is the daemon's offsetkeeper_drills_total of result.
func (d *testDaemon) drills(result string) bool {
	_, body, err := httpGet("http://" + d.addr + "/metrics")
	return err == nil && strings.Contains(body, `offsetkeeper_drills_total{result="`+result+`"} 1`)
}

// logLines are the daemon's JSON log lines.
func (d *testDaemon) logLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// The daemon's drill runs in a process of its own (the binary again, as
// offsetkeeper drill ID): the drill's own log line carries a PID that is
// the child's, not the daemon's. The settings the daemon was given by flag
// alone reach it through their environment twins (the store, the brokers,
// the Connect URL; the encryption key, a secret, never on its argv), and
// the per-run ones it needs on its argv (--signing-key from
// --drill-signing-key): the child decrypts the daemon's snapshot, compares
// with Connect, and stores the signed report the daemon counts.
func TestDaemonDrillRunsInChildProcess(t *testing.T) {
	brokers, cl, _ := demoCluster(t, connectdemo.DefaultSpec())
	srv, err := connectsimtest.Start(cl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, name := range []string{"brokers", "store", "encrypt-key", "connect-url"} {
		if _, ok := os.LookupEnv(envName(name)); ok {
			t.Fatalf("%s is set: this test gives the daemon its settings by flag", envName(name))
		}
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	secret := base64.StdEncoding.EncodeToString(raw)
	key := "base64key://" + secret
	st := "file://" + t.TempDir()
	keyFile, _ := writeKeys(t)
	children := drillChildren(t)
	d := startTestDaemon(t, "--brokers", brokers, "--store", st, "--encrypt-key", key, "--connect-url", srv.URL,
		"--drill-schedule", "@every 1h", "--drill-signing-key", keyFile)
	d.waitFor(t, "passed drill", func() bool { return d.drills(drill.Passed) || d.drills(drill.Failed) || d.drills("error") })
	if !d.drills(drill.Passed) {
		t.Fatalf("the drill did not pass:\n%s", d.stderr.String())
	}
	cmd := <-children

	if cmd.Process.Pid == os.Getpid() {
		t.Fatalf("drill child PID %d is the daemon's", cmd.Process.Pid)
	}
	var drillLine map[string]any
	for _, l := range d.logLines(t) {
		if l["msg"] == "drill" && l["result"] == drill.Passed {
			drillLine = l
		}
	}
	if drillLine == nil || drillLine["component"] != "drill" || drillLine["pid"] != float64(cmd.Process.Pid) {
		t.Fatalf("the drill's log line %v: want component drill and the child's pid %d (the daemon's is %d)\n%s",
			drillLine, cmd.Process.Pid, os.Getpid(), d.stderr.String())
	}

	self, _ := os.Executable()
	id := ""
	if len(cmd.Args) > 2 {
		id = cmd.Args[2]
	}
	if want := []string{self, "drill", id, "--output", "json", "--run-by-daemon", "--signing-key", keyFile}; !slices.Equal(cmd.Args, want) || cmd.Path != self {
		t.Errorf("drill child: %s %q, want %q", cmd.Path, cmd.Args, want)
	}
	for _, a := range cmd.Args {
		if strings.Contains(a, secret) {
			t.Errorf("the encryption key is on the drill child's argv: %q", cmd.Args)
		}
	}
	for _, want := range []string{"OFFSETKEEPER_BROKERS=" + brokers, "OFFSETKEEPER_STORE=" + st, "OFFSETKEEPER_ENCRYPT_KEY=" + key,
		"OFFSETKEEPER_CONNECT_URL=" + srv.URL, "OFFSETKEEPER_LOG_FORMAT=json", "OFFSETKEEPER_LOG_LEVEL=info"} {
		if !slices.Contains(cmd.Env, want) {
			t.Errorf("drill child's environment lacks %s", want)
		}
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "OFFSETKEEPER_DRILL_") || strings.HasPrefix(kv, "OFFSETKEEPER_SCHEDULE=") {
			t.Errorf("drill child's environment has the daemon's own setting %s", kv)
		}
	}

	code, out, errs := runCLI(t, "drill", "--list", "--store", st, "--encrypt-key", key, "--output", "json")
	var rows []struct {
		ID     string        `json:"id"`
		Signed bool          `json:"signed"`
		Report *drill.Report `json:"report"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].Report == nil {
		t.Fatalf("drill --list: exit %d\n%s\n%s", code, out, errs)
	}
	rep := rows[0].Report
	if !rows[0].Signed || rep.State.SnapshotID != id || rep.Result != drill.Passed {
		t.Errorf("stored drill: signed %v, %+v", rows[0].Signed, rep)
	}
	if c := rep.Check(drill.CheckComplete); c == nil || c.Result != drill.Passed {
		t.Errorf("complete: %+v: the child had the daemon's --connect-url", c)
	}
}

// A daemon without --connect-url: the child's report says the daemon
// skipped the completeness check by choice, in the daemon's words.
func TestDaemonDrillChildSkipsComplete(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	st := "file://" + t.TempDir()
	children := drillChildren(t)
	d := startTestDaemon(t, "--brokers", brokers, "--store", st, "--drill-schedule", "@every 1h")
	d.waitFor(t, "passed drill", func() bool { return d.drills(drill.Passed) || d.drills(drill.Failed) || d.drills("error") })
	<-children
	code, out, errs := runCLI(t, "drill", "--list", "--store", st, "--output", "json")
	var rows []struct {
		Report *drill.Report `json:"report"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].Report == nil {
		t.Fatalf("drill --list: exit %d\n%s\n%s\n%s", code, out, errs, d.stderr.String())
	}
	c := rows[0].Report.Check(drill.CheckComplete)
	if rows[0].Report.Result != drill.Passed || c == nil || c.Result != drill.Skipped || c.Summary != daemonSkipComplete {
		t.Fatalf("drill without --connect-url: %s, complete %+v", rows[0].Report.Result, c)
	}
}

// When the daemon stops, the drill child running stops too (SIGTERM: it
// exits on its own), and the daemon does not wait for it past that. The
// drill is held in its completeness check by a Connect URL that never
// answers.
func TestDaemonDrillChildStopsOnCancel(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	hang, asked := hangingConnect(t)
	children := drillChildren(t)
	d := startTestDaemon(t, "--brokers", brokers, "--store", "file://"+t.TempDir(), "--drill-schedule", "@every 1h",
		"--connect-url", hang, "--connect-timeout", "1h")
	var cmd *exec.Cmd
	d.waitFor(t, "drill child", func() bool {
		select {
		case cmd = <-children:
		default:
		}
		return cmd != nil
	})
	d.waitFor(t, "the drill's request to Connect", func() bool {
		select {
		case <-asked:
			return true
		default:
			return false
		}
	})
	if code := d.stop(t); code != 0 {
		t.Fatalf("daemon exited %d\n%s", code, d.stderr.String())
	}
	// The daemon returned: its Wait for the child is done.
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Fatalf("drill child %d: %v, want it to have exited on SIGTERM", cmd.Process.Pid, cmd.ProcessState)
	}
	if err := syscall.Kill(cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("drill child %d still there: %v", cmd.Process.Pid, err)
	}
	if strings.Contains(d.stderr.String(), "drill could not run") {
		t.Errorf("a drill stopped by shutdown is logged as an error:\n%s", d.stderr.String())
	}
}

// A drill that cannot run (exit 2: Connect does not answer) is an error
// that quotes the child's own message.
func TestDaemonDrillChildCannotRun(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	children := drillChildren(t)
	d := startTestDaemon(t, "--brokers", brokers, "--store", "file://"+t.TempDir(), "--drill-schedule", "@every 1h",
		"--connect-url", "http://"+freeAddr(t))
	d.waitFor(t, "drill error", func() bool { return d.drills("error") })
	cmd := <-children
	d.stop(t)
	var msg string
	for _, l := range d.logLines(t) {
		if l["msg"] == "drill could not run" {
			msg, _ = l["error"].(string)
		}
	}
	if !strings.Contains(msg, "exit status 2") || !strings.Contains(msg, "offsetkeeper drill: drill cannot run") ||
		!strings.Contains(msg, "Connect REST API") || cmd.ProcessState.ExitCode() != 2 {
		t.Fatalf("drill could not run: %q (child exit %v)\n%s", msg, cmd.ProcessState, d.stderr.String())
	}
}

// With GOMEMLIMIT (the container's budget), the daemon holds its own soft
// limit to what it uses while a drill process runs and takes its limit back
// after; the drill process gets no GOMEMLIMIT (its limit follows its live
// heap). A daemon already over the budget, an "off" or unreadable value,
// or none, leave the daemon's limit alone.
func TestDrillSplitBudget(t *testing.T) {
	limit := int64(math.MaxInt64)
	set := func(n int64) int64 { prev := limit; limit = n; return prev }
	for _, tc := range []struct {
		limit  string
		own    int64
		during int64
	}{
		{"230MiB", 100 << 20, 100 << 20},
		{"1073741824", 24 << 20, 24 << 20},
		{"4096KiB", 1 << 20, 1 << 20},
		{"230MiB", 300 << 20, math.MaxInt64},
		{"off", 100 << 20, math.MaxInt64},
		{"230M", 100 << 20, math.MaxInt64},
	} {
		env, undo := splitBudget([]string{"A=1", "GOMEMLIMIT=" + tc.limit, "B=2"}, tc.own, set)
		if during := limit; !slices.Equal(env, []string{"A=1", "B=2"}) || during != tc.during {
			t.Errorf("GOMEMLIMIT=%s, daemon holding %d: daemon's limit %d during the drill, want %d; drill's environment %q",
				tc.limit, tc.own, during, tc.during, env)
		}
		undo()
		if limit != math.MaxInt64 {
			t.Errorf("GOMEMLIMIT=%s: the daemon's limit after the drill: %d, want it back", tc.limit, limit)
		}
	}
	env, undo := splitBudget([]string{"A=1"}, 100<<20, set)
	undo()
	if !slices.Equal(env, []string{"A=1"}) || limit != math.MaxInt64 {
		t.Errorf("without GOMEMLIMIT: daemon's limit %d, drill's environment %q", limit, env)
	}
}

// drill --run-by-daemon is the daemon's own: drill accepts it, and neither
// its --help, the man page nor the completions name it.
func TestRunByDaemonIsHidden(t *testing.T) {
	code, out, errs := runCLI(t, "drill", "--help")
	if code != exitOK || strings.Contains(out+errs, "run-by-daemon") {
		t.Errorf("drill --help: exit %d, names --run-by-daemon:\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "man"); code != exitOK || strings.Contains(out, "run-by-daemon") {
		t.Errorf("man: exit %d, names --run-by-daemon", code)
	}
	if got := complete(t, "drill", "--"); slices.Contains(got, "--run-by-daemon") || !slices.Contains(got, "--signing-key") {
		t.Errorf("drill -- completes %q", got)
	}
	if code, _, errs := runCLI(t, "drill", "--run-by-daemon", "--list", "--store", t.TempDir()); code != exitOK {
		t.Errorf("drill --run-by-daemon --list: exit %d: %s", code, errs)
	}
}

// The drill process's stderr: its log lines, text or JSON, go to the
// daemon's log output as they are, whole even when they come in pieces;
// other lines are logged at debug and the last drillChildTail kept for the
// error.
func TestDrillChildLog(t *testing.T) {
	var out, debug strings.Builder
	w := &childLog{out: &out, log: slog.New(slog.NewTextHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	text := "time=2026-12-07T16:05:35.956Z level=INFO msg=drill component=drill pid=6819 result=passed\n"
	js := `{"time":"2026-12-07T16:05:35.956Z","level":"WARN","msg":"x","component":"drill"}` + "\n"
	for _, piece := range []string{text[:10], text[10:] + js[:5], js[5:]} {
		if _, err := w.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range drillChildTail + 2 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	_, _ = w.Write([]byte("offsetkeeper drill: drill cannot run: no newline"))
	w.flush()
	if out.String() != text+js {
		t.Errorf("log lines passed on:\n%q\nwant\n%q", out.String(), text+js)
	}
	q := w.quote()
	if !strings.HasSuffix(q, "; offsetkeeper drill: drill cannot run: no newline") || strings.Contains(q, "line 2;") ||
		!strings.HasPrefix(q, ": line 3; ") || strings.Count(q, "; ") != drillChildTail-1 {
		t.Errorf("quote: %q", q)
	}
	if !strings.Contains(debug.String(), `msg="child process output" line="line 0"`) {
		t.Errorf("other lines not logged at debug:\n%s", debug.String())
	}
}

// A daemon that cannot find its own executable cannot drill, and says so:
// no drill process starts, and the error says what to do.
func TestDrillChildNoExecutable(t *testing.T) {
	prev := drillExecutable
	drillExecutable = func() (string, error) { return "", errors.New("readlink /proc/self/exe: no such file or directory") }
	t.Cleanup(func() { drillExecutable = prev })
	started := drillChildren(t)
	dc := &drillChild{logOut: io.Discard, log: slog.New(slog.DiscardHandler)}
	rep, err := dc.run(context.Background(), "20261207T160529.129832Z-8497e5")
	if rep != nil || !errors.Is(err, drill.ErrCannotRun) || !strings.Contains(err.Error(), "find this program's executable") ||
		!strings.Contains(err.Error(), "--drill-schedule off") {
		t.Fatalf("no executable: %+v, %v", rep, err)
	}
	if len(started) != 0 {
		t.Fatal("a drill process started without the executable")
	}
}
