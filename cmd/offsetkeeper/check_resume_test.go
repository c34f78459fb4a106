package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// TestCheckExpiryPrintsResume: a stopped sink whose offsets Kafka will
// delete. check said "unless the connector is resumed before" and printed
// no command; with a Connect URL it prints the resume, which, run as
// printed, puts a member back in the group, and check no longer names it.
func TestCheckExpiryPrintsResume(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed resume is a curl command: no curl here")
	}
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	srv := c.startConnect(connectsim.Options{SinkMembers: true, MemberLeaveDelay: 50 * time.Millisecond})
	rc := restClient(t, srv)
	ctx := context.Background()
	conn, group := connectdemo.ConnSinkS3, connectdemo.GroupSinkS3
	if err := rc.Stop(ctx, conn); err != nil {
		t.Fatal(err)
	}
	until(t, 30*time.Second, "the group to be Empty", &strings.Builder{}, func() bool {
		_, _ = rc.Status(ctx, conn)
		s, _ := c.groupState(group)
		return s == "Empty"
	})
	c.snapshot()
	_, out, errOut := c.run("check", "--connect-url", srv.URL)
	if !strings.Contains(out, "offsets-expire "+conn+": ") {
		t.Fatalf("check of the stopped sink:\n%s\n%s", out, errOut)
	}
	var fix string
	for _, l := range strings.Split(out, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "fix: curl ") && strings.Contains(s, "/connectors/"+conn+"/resume") {
			fix = strings.TrimPrefix(s, "fix: ")
		}
	}
	if fix == "" {
		t.Fatalf("no resume command for %s:\n%s", conn, out)
	}
	if b, err := exec.Command("sh", "-c", strings.Replace(fix, "curl", curl, 1)).CombinedOutput(); err != nil {
		t.Fatalf("the printed %s: %v\n%s", fix, err, b)
	}
	until(t, 30*time.Second, conn+" with a member in "+group, &strings.Builder{}, func() bool {
		_, _ = rc.Status(ctx, conn)
		_, n := c.groupState(group)
		return n > 0
	})
	if _, out, _ = c.run("check", "--connect-url", srv.URL); strings.Contains(out, "offsets-expire "+conn+": ") {
		t.Errorf("after the printed resume, check still names %s:\n%s", conn, out)
	}
}
