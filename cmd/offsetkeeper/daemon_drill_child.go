package main

// The daemon runs each restore drill as a child process of its own binary,
// offsetkeeper drill ID --output json --run-by-daemon, rather than in its
// own heap: the drill's working set (the snapshot read anew, the plan, the
// embedded scratch cluster, the read-back) is the child's, bounded as a
// drill run by hand is, and goes back to the operating system whole when
// the child exits. Without it the daemon's heap grows by a drill on top of
// what it keeps between runs, and the Go runtime keeps much of that after.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// drillChildGrace is how long a drill child told to stop (SIGTERM: the
// daemon shuts down or loses the lead) has to stop its scratch cluster and
// exit before it is killed.
const drillChildGrace = 10 * time.Second

// drillChildTail is how many of the child's last lines that are not log
// lines (its error, on exit 2) an error names.
const drillChildTail = 10

// startDrillChild starts the drill child; tests see the command through it.
var startDrillChild = (*exec.Cmd).Start

// drillExecutable finds the program the drill child runs: this one.
var drillExecutable = os.Executable

// drillChild runs the daemon's drills as child processes.
type drillChild struct {
	// env is the child's environment (drillChildEnv).
	env []string
	// signingKey is the daemon's --drill-signing-key, the child's
	// --signing-key.
	signingKey string
	// logOut is where the daemon logs: the child's log lines are copied
	// there as they are.
	logOut io.Writer
	log    *slog.Logger
}

// command is the drill child's command for snapshot id. Settings go in its
// environment, never on its argv, which any user sees in ps.
func (dc *drillChild) command(ctx context.Context, id string) (*exec.Cmd, error) {
	args := []string{"drill", id, "--output", "json", "--run-by-daemon"}
	if dc.signingKey != "" {
		args = append(args, "--signing-key", dc.signingKey)
	}
	return dc.commandOf(ctx, args)
}

// commandOf is the child's command running this program with args.
func (dc *drillChild) commandOf(ctx context.Context, args []string) (*exec.Cmd, error) {
	exe, err := drillExecutable()
	if err != nil {
		return nil, fmt.Errorf("%w: find this program's executable to run the %s in a process of its own: %v; "+
			"the daemon runs each drill (offsetkeeper drill ID) and each store check (offsetkeeper verify) in a child "+
			"process, so that its memory is returned when it ends: run the daemon from its binary on disk (or "+
			"--drill-schedule off and --verify-schedule off)", drill.ErrCannotRun, args[0], err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = dc.env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = drillChildGrace
	return cmd, nil
}

// childRun is how a child process ended: its exit code and its stdout.
type childRun struct {
	out  []byte
	code int
	pid  int
	// tail quotes its last lines that were not log lines (childLog.quote).
	tail string
}

// exec runs cmd as the daemon's child (what names it in errors): an exit,
// whatever its code, is a childRun; a child that could not start, was
// stopped by ctx or killed by a signal is an error.
func (dc *drillChild) exec(ctx context.Context, cmd *exec.Cmd, what string) (childRun, error) {
	var undo func()
	cmd.Env, undo = makeRoom(cmd.Env)
	defer undo()
	var stdout bytes.Buffer
	relay := &childLog{out: dc.logOut, log: dc.log}
	cmd.Stdout, cmd.Stderr = &stdout, relay
	dieWithDaemon(cmd)
	// The thread that starts the child stays until the child has exited:
	// on Linux its exit is what sends the child its parent-death signal.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := startDrillChild(cmd); err != nil {
		return childRun{}, fmt.Errorf("%w: start the %s process %s: %v", drill.ErrCannotRun, cmd.Args[1], cmd.Path, err)
	}
	err := cmd.Wait()
	relay.flush()
	pid := cmd.Process.Pid
	if ctx.Err() != nil {
		return childRun{}, fmt.Errorf("%s: stopped (process %d): %w", what, pid, ctx.Err())
	}
	run := childRun{out: stdout.Bytes(), pid: pid, tail: relay.quote()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		run.code = ee.ExitCode()
	case errors.As(err, &ee):
		return childRun{}, fmt.Errorf("%w: %s: the %s process %d was stopped (%s)%s; if by the kernel's "+
			"out-of-memory killer, the daemon's memory limit must hold the daemon and a drill together (docs/drills.md)",
			drill.ErrCannotRun, what, cmd.Args[1], pid, ee, run.tail)
	default:
		return childRun{}, fmt.Errorf("%w: %s: the %s process %d: %v%s", drill.ErrCannotRun, what, cmd.Args[1], pid, err, run.tail)
	}
	return run, nil
}

// run drills snapshot id in a child process and returns its report: exit
// 0 (passed) and 1 (failed) print the report, which the child stored; any
// other exit is an error that quotes the child's last lines.
func (dc *drillChild) run(ctx context.Context, id string) (*drill.Report, error) {
	cmd, err := dc.command(ctx, id)
	if err != nil {
		return nil, err
	}
	what := "drill snapshot " + id
	r, err := dc.exec(ctx, cmd, what)
	if err != nil {
		return nil, err
	}
	if r.code == exitOK || r.code == exitError {
		rep, perr := drill.Open(r.out)
		if perr == nil {
			return rep, nil
		}
		if r.code == exitOK {
			return nil, fmt.Errorf("%w: %s: read the report the drill process %d printed: %v%s",
				drill.ErrCannotRun, what, r.pid, perr, r.tail)
		}
	}
	return nil, fmt.Errorf("%w: %s: the drill process %d: exit status %d%s; the daemon drills again at the next "+
		"--drill-schedule tick", drill.ErrCannotRun, what, r.pid, r.code, r.tail)
}

// drillChildEnv is the drill child's environment: the daemon's environ,
// less the variables the drill would read as settings or warn about, plus
// the environment twin of each setting the daemon was given (on its command
// line, in its environment or as a systemd credential) that drill also
// takes, and the daemon's log level.
func drillChildEnv(environ []string, daemon *flag.FlagSet, logLevel string) []string {
	return childEnv(environ, daemon, drillFlags(), logLevel)
}

// childEnv is drillChildEnv for a child running the command whose flag set
// is dfs.
func childEnv(environ []string, daemon, dfs *flag.FlagSet, logLevel string) []string {
	drop := map[string]bool{"OFFSETKEEPER_CPU_PROFILE": true, "OFFSETKEEPER_HEAP_PROFILE": true}
	dfs.VisitAll(func(f *flag.Flag) { drop[envName(f.Name)] = true })
	for name := range perRun {
		drop[envName(name)] = true
	}
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			out = append(out, kv)
		}
	}
	daemon.Visit(func(f *flag.Flag) {
		if perRun[f.Name] || f.Name == "log-level" || dfs.Lookup(f.Name) == nil {
			return
		}
		v := f.Value.String()
		if l, ok := f.Value.(*listFlag); ok {
			v = strings.Join(*l, ",") // applyEnv splits a list at its commas
		}
		out = append(out, envName(f.Name)+"="+v)
	})
	// The drill command logs at warn by default, the daemon at info.
	return append(out, envName("log-level")+"="+cmpOrStr(logLevel, "info"))
}

// drillFlags is the drill command's flag set, to tell which of the
// daemon's settings the drill takes.
var drillFlags = sync.OnceValue(func() *flag.FlagSet { return flagsOf(drillCommand) })

// childLog takes the drill child's stderr: its log lines (slog's, in the
// daemon's format: they start with the time) go to the daemon's log output
// as they are; any other line (the child's error, on exit 2) is logged at
// debug and the last drillChildTail kept for the error.
type childLog struct {
	mu   sync.Mutex
	out  io.Writer
	log  *slog.Logger
	part []byte
	tail []string
}

func (w *childLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	start := 0
	for {
		i := bytes.IndexByte(w.part[start:], '\n')
		if i < 0 {
			break
		}
		w.line(w.part[start : start+i+1])
		start += i + 1
	}
	w.part = w.part[:copy(w.part, w.part[start:])]
	return len(p), nil
}

// flush takes a last line without its newline.
func (w *childLog) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.part) > 0 {
		w.line(append(w.part, '\n'))
		w.part = w.part[:0]
	}
}

func (w *childLog) line(b []byte) {
	if bytes.HasPrefix(b, []byte("time=")) || bytes.HasPrefix(b, []byte(`{"time":`)) {
		_, _ = w.out.Write(b)
		return
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return
	}
	w.log.Debug("child process output", "line", s)
	if len(w.tail) == drillChildTail {
		w.tail = w.tail[1:]
	}
	w.tail = append(w.tail, s)
}

// quote is the lines kept, for an error: ": line; line", or nothing.
func (w *childLog) quote() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tail) == 0 {
		return " (it wrote no error)"
	}
	return ": " + strings.Join(w.tail, "; ")
}

// makeRoom makes room for a drill process beside the daemon: it returns
// the daemon's free memory to the operating system, then holds the
// daemon's soft limit down while the drill runs (splitBudget).
func makeRoom(env []string) (_ []string, undo func()) {
	memlimit.Release()
	return splitBudget(env, goMemory()+memlimit.Headroom, debug.SetMemoryLimit)
}

// splitBudget shares GOMEMLIMIT in env, the budget of the container the
// daemon and its drill process share (the Helm chart sets 90% of its
// memory limit), between the two: the daemon's soft limit is held to own,
// what it uses now plus headroom, until undo (setLimit is
// debug.SetMemoryLimit), and the drill process is given no GOMEMLIMIT, so
// that its limit follows its live heap (internal/memlimit), as a drill run
// by hand without GOMEMLIMIT does: a fixed limit, whatever is left of the
// budget, would let its heap grow up to it. Meanwhile the daemon's
// collector works harder; its runs go on. Without GOMEMLIMIT, memlimit
// keeps the daemon's limit near its live heap already.
func splitBudget(env []string, own int64, setLimit func(int64) int64) (_ []string, undo func()) {
	budget := int64(-1)
	var out []string
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "GOMEMLIMIT=")
		if !ok {
			out = append(out, kv)
			continue
		}
		if n, valid := parseMemLimit(v); valid {
			budget = n
		}
	}
	if budget < 0 || own >= budget {
		return out, func() {}
	}
	prev := setLimit(own)
	return out, func() { setLimit(prev) }
}

// parseMemLimit reads a GOMEMLIMIT value as the Go runtime does: a number
// of bytes with an optional unit B, KiB, MiB, GiB or TiB.
func parseMemLimit(v string) (int64, bool) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			v, shift = num, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, false
	}
	return n << shift, true
}

// goMemory is the memory the Go runtime holds from the operating system
// now, less what it has returned: about the daemon's resident memory.
func goMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
