package main

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestDemoStandby follows demo --standby's guide as printed: the daemon
// line keeps the standby in step (connectors STOPPED there), the kill
// file kills the primary, the failover command printed resumes on the
// standby every connector that ran on the primary.
func TestDemoStandby(t *testing.T) {
	t.Chdir(t.TempDir())
	kport, cport := freePorts(t, 6), freePorts(t, 2)
	for cport+1 >= kport && cport <= kport+5 { // both free now, but not both ours later
		cport = freePorts(t, 2)
	}
	dir := t.TempDir()
	out := startDemo(t, "--standby", "--port", strconv.Itoa(kport), "--rest-port", strconv.Itoa(cport), "--store", "file://"+dir, "--churn-every", "200ms")
	guide := out.String()
	for _, l := range strings.Split(guide, "\n") {
		if len(l) > 120 {
			t.Errorf("guide line of %d columns: %q", len(l), l)
		}
	}
	args := guideCommand(t, guide, "daemon")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var derr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, args, &testkit.SyncBuffer{}, &derr) }()
	standbyURL := regexp.MustCompile(`--standby-connect-url (\S+)`).FindStringSubmatch(guide)[1]
	rc, err := connectrest.New(connectrest.Config{URLs: []string{standbyURL}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := rc.States(ctx)
		if err == nil && len(st) > 0 && st["inventory-connector"].Connector.State == "STOPPED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby never got its connectors: %v %v\n%s", st, err, derr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	kill := regexp.MustCompile(`touch (\S+)`).FindStringSubmatch(guide)[1]
	if err := os.WriteFile(kill, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(out.String(), "the primary cluster and its Connect are gone") {
		if time.Now().After(deadline) {
			t.Fatalf("the primary was not killed:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-exit
	code, fout, ferr := runCLI(t, guideCommand(t, guide, "failover")...)
	if code != 0 || !strings.Contains(fout, "failover done: RPO") || !strings.Contains(fout, "RTO ") {
		t.Fatalf("failover as printed: %d\n%s\n%s", code, fout, ferr)
	}
	st, err := rc.States(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := st["inventory-connector"]; s.Connector.State != "RUNNING" {
		t.Fatalf("inventory-connector on the standby after failover: %s\n%s", s, fout)
	}
	t.Logf("%s", fout)
	// The diff failover printed: only what the translation moved, and it
	// says so.
	code, dout, derrs := runCLI(t, guideCommand(t, fout, "diff")...)
	t.Logf("%s", dout)
	if code != 0 || !strings.Contains(dout, "note: live cluster "+standbyClusterID+" is the standby of cluster ") ||
		!regexp.MustCompile(`note: sink offsets translated \(mm2\): all \d+ differences are the translation's, expected; nothing else differs`).MatchString(dout) {
		t.Errorf("the diff failover printed: exit %d\n%s\n%s", code, dout, derrs)
	}
}

// guideCommand is the last command of the guide whose program is followed
// by name, its continuation lines joined, as the shell splits it (the
// guide quotes only "@every 1h"), without the program.
func guideCommand(t *testing.T, guide, name string) []string {
	t.Helper()
	var cmd string
	lines := strings.Split(guide, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.Contains(lines[i], "offsetkeeper "+name+" ") {
			continue
		}
		c := strings.TrimSpace(lines[i])
		for strings.HasSuffix(c, " \\") && i+1 < len(lines) {
			i++
			c = strings.TrimSuffix(c, " \\") + " " + strings.TrimSpace(lines[i])
		}
		cmd = c
	}
	if cmd == "" {
		t.Fatalf("no %s command in the guide:\n%s", name, guide)
	}
	_, rest, _ := strings.Cut(cmd, " "+name+" ")
	var out []string
	for _, w := range strings.Fields(strings.ReplaceAll(rest, `"@every 1h"`, "@every_1h")) {
		out = append(out, strings.ReplaceAll(w, "@every_1h", "@every 1h"))
	}
	return append([]string{name}, out...)
}
