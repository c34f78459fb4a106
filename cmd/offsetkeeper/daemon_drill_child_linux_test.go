package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// A daemon killed with SIGKILL (no cgroup around it here to kill its
// children too) takes its drill child with it: the kernel sends the child
// SIGTERM when the daemon dies, and it exits instead of running on alone
// until its --timeout. The daemon is this test binary run as offsetkeeper
// in a process of its own; its drill is held in its completeness check by
// a Connect URL that never answers.
func TestDrillChildDiesWithDaemon(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	hang, asked := hangingConnect(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	daemon := exec.Command(self, "daemon", "--brokers", brokers, "--store", "file://"+t.TempDir(),
		"--listen", freeAddr(t), "--schedule", "@every 1h", "--drill-schedule", "@every 1h", "--verify-schedule", "off",
		"--connect-url", hang, "--connect-timeout", "1h")
	daemon.Env = append(os.Environ(), "OFFSETKEEPER_TEST_AS_MAIN=1")
	daemon.Stdout, daemon.Stderr = &logs, &logs
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = daemon.Wait(); close(done) }()
	t.Cleanup(func() { _ = daemon.Process.Kill(); <-done })
	select {
	case <-asked:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no drill asked Connect\n%s", logs.String())
	}
	child := childOf(t, daemon.Process.Pid)
	if err := daemon.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	deadline := time.Now().Add(time.Minute)
	for alive(child) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("drill child %d still runs a minute after its daemon was killed", child)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// childOf is the one child process of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err == nil {
			kids = append(kids, strings.Fields(string(data))...)
		}
	}
	if len(kids) != 1 {
		t.Fatalf("process %d has children %q, want the drill child alone", pid, kids)
	}
	child, err := strconv.Atoi(kids[0])
	if err != nil {
		t.Fatal(err)
	}
	return child
}

// alive tells whether process pid runs: it exists and is no zombie (an
// orphan whose new parent has not reaped it yet has exited).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
