package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// groupState is the group's state and member count, "" when it is gone.
func (c *cluster) groupState(group string) (string, int) {
	c.t.Helper()
	ds, err := c.adm.DescribeGroups(context.Background(), group)
	if err != nil {
		c.t.Fatal(err)
	}
	d := ds[group]
	if d.State == "Dead" || d.State == "" {
		return "", 0
	}
	return d.State, len(d.Members)
}

// until polls cond every 50ms for up to limit, failing with what and logs.
func until(t *testing.T, limit time.Duration, what string, logs interface{ String() string }, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s\n%s", what, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSinkOffsetsExpire is the expiry guard's acceptance, as a user runs
// it: with offsets.retention.minutes=1, a sink connector is stopped (its
// group goes Empty); the daemon warns before Kafka deletes its offsets;
// once deleted, events lists sink-expired with a command that, run as
// printed, brings them back and resumes the connector; diff --at the
// moment before --live is then clean for it. kfake expires an Empty
// group's offsets at max(emptyAt, lastCommit), Kafka at emptyAt
// (classic/ClassicGroup.java); nothing commits after the stop here, so
// both give the same time.
func TestSinkOffsetsExpire(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec, kfake.BrokerConfigs(map[string]string{
		"offsets.retention.minutes":           "1",
		"offsets.retention.check.interval.ms": "200",
	}))
	srv := c.startConnect(connectsim.Options{SinkMembers: true, MemberLeaveDelay: 50 * time.Millisecond})
	rc := restClient(t, srv)
	ctx := context.Background()
	conn, group := connectdemo.ConnSinkS3, connectdemo.GroupSinkS3
	if err := rc.Resume(ctx, conn); err != nil {
		t.Fatal(err)
	}
	until(t, 30*time.Second, "the sink's member", &strings.Builder{}, func() bool {
		_, _ = rc.Status(ctx, conn) // the fake starts members as it answers
		_, n := c.groupState(group)
		return n > 0
	})
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", "300ms", "--schedule", "@every 1h", "--listen", addr, "--connect-url", srv.URL)
	c.waitJournal(time.Now(), logs)
	want := c.committed(group)
	before := moment()
	c.waitJournal(before, logs)

	if err := rc.Stop(ctx, conn); err != nil {
		t.Fatal(err)
	}
	until(t, 30*time.Second, "the group to be Empty", logs, func() bool {
		_, _ = rc.Status(ctx, conn)
		s, _ := c.groupState(group)
		return s == "Empty"
	})
	stopped := time.Now()

	// The warning comes before Kafka deletes the offsets.
	until(t, 90*time.Second, "the expiry warning", logs, func() bool {
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, `"msg":"sink offsets expire"`) && strings.Contains(line, `"group":"`+group+`"`) {
				return true
			}
		}
		return false
	})
	if len(c.committed(group)) == 0 {
		t.Fatalf("the offsets were gone when the daemon warned\n%s", logs.String())
	}
	if _, metrics, err := httpGet("http://" + addr + "/metrics"); err != nil || !strings.Contains(metrics, `offsetkeeper_sink_offsets_expire_seconds{group="`+group+`"}`) {
		t.Errorf("/metrics: %v\n%s", err, metrics)
	}
	c.waitJournal(moment(), logs) // the warning's segment is stored after its log line
	out, _ := c.mustRun(0, "events", "--since", before.Format(time.RFC3339Nano), "--connect-url", srv.URL)
	t.Logf("events before expiry:\n%s", out)
	if !strings.Contains(out, "sink-expiring") || !strings.Contains(out, "offsets of "+group+" expire at ") || !strings.Contains(out, "--start") {
		t.Fatalf("events before expiry:\n%s", out)
	}

	// Kafka (kfake) deletes them a minute after the stop; the journal
	// records it as sink-expired, with the restore that also resumes.
	until(t, 3*time.Minute, "the group to expire", logs, func() bool { s, _ := c.groupState(group); return s == "" })
	if time.Since(stopped) < 50*time.Second {
		t.Fatalf("the group was gone %s after the stop, before its retention", time.Since(stopped))
	}
	expired := waitSinkExpired(t, c, logs, group, before, srv.URL)
	if !strings.HasSuffix(expired.Undo, " --stop-connectors --resume --start") || !strings.Contains(expired.Undo, "--connector "+conn) {
		t.Fatalf("the command: %s", expired.Undo)
	}
	t.Logf("sink-expired: %s", expired.Undo)
	// The daemon's reset seen line prints the same restore, with the
	// daemon's own settings (it lacked --start).
	var seen map[string]any
	err := json.Unmarshal([]byte(waitLog(t, logs, `"msg":"reset seen"`, `"kind":"sink-expired"`)), &seen)
	if undo, _ := seen["undo"].(string); err != nil || !strings.HasPrefix(undo, strings.Join(strings.Fields(expired.Undo)[:6], " ")) ||
		!strings.HasSuffix(undo, " --stop-connectors --resume --start") {
		t.Errorf("the daemon's reset seen undo %q (%v), events' %q", undo, err, expired.Undo)
	}
	// Run as printed: it names the store, brokers and Connect URL itself.
	var rout, rerr strings.Builder
	if code := run(ctx, strings.Fields(strings.TrimPrefix(expired.Undo, "offsetkeeper ")), &rout, &rerr); code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", expired.Undo, code, rout.String(), rerr.String())
	}
	// The restore resumes the connector: its plan must not say that the
	// offsets it writes will expire unless the connector is resumed.
	if strings.Contains(rout.String(), "Kafka deletes the offsets restored") {
		t.Errorf("the restore resumes the connector, yet its plan says the offsets expire:\n%s", rout.String())
	}
	got := c.committed(group)
	want.Each(func(o kadm.OffsetResponse) {
		if g, ok := got.Lookup(o.Topic, o.Partition); !ok || g.At != o.At {
			t.Errorf("%s/%d: %+v after the restore, want %d", o.Topic, o.Partition, g, o.At)
		}
	})
	until(t, 30*time.Second, "the connector resumed", logs, func() bool {
		_, _ = rc.Status(ctx, conn)
		_, n := c.groupState(group)
		return n > 0
	})
	out, errOut := c.mustRun(0, "diff", "--at", before.Format(time.RFC3339Nano), "--live", "--connector", conn, "--exit-code")
	if t.Failed() {
		t.Logf("diff:\n%s\n%s", out, errOut)
	}
}

// waitSinkExpired waits until events (since, with connectURL) lists the
// sink-expired event of group and returns it; an expiry recorded as a
// deletion fails the test.
func waitSinkExpired(t *testing.T, c *cluster, logs interface{ String() string }, group string, since time.Time, connectURL string) eventJSON {
	t.Helper()
	var expired eventJSON
	until(t, 30*time.Second, "sink-expired in events", logs, func() bool {
		out, _ := c.mustRun(0, "events", "--output", "json", "--since", since.Format(time.RFC3339Nano), "--connect-url", connectURL, "--brokers", c.brokers)
		var evs []eventJSON
		if err := json.Unmarshal([]byte(out), &evs); err != nil {
			t.Fatalf("events --output json: %v\n%s", err, out)
		}
		for _, e := range evs {
			if e.Group == group && e.Kind == snapshot.EventSinkDeleted {
				t.Fatalf("the expiry was recorded as a deletion: %+v", e)
			}
			if e.Group == group && e.Kind == snapshot.EventSinkExpired {
				expired = e
				return true
			}
		}
		return false
	})
	return expired
}
