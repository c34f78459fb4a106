package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestOrphanedSinkOffsetsExpire: a sink connector stopped, then deleted
// (its config tombstoned, as DELETE /connectors/NAME writes it). The
// expiry guard skipped a group whose connector has no config, the one
// group nothing will ever commit to again: Kafka deleted its offsets with
// no warning. Under a group.id override the daemon even recorded the group
// deleted when the config went: nothing tied it to a sink any more. Now the daemon warns
// ahead (sink-orphan-expiring) with advice for a connector that does not
// exist (orphaned: let it go or delete the group; else create it again,
// never "resume it"), events
// says the same, the expiry is recorded as sink-expired, and its undo, run
// as printed, creates the connector again with its offsets.
//
// Kafka expires an Empty classic group with a protocol type at
// emptyAt + offsets.retention.minutes (OffsetMetadataManager.
// cleanupExpiredOffsets with classic/ClassicGroup.java's
// offsetExpirationCondition, based on currentStateTimestamp); kfake at
// max(emptyAt, lastCommit). Nothing commits after the stop here (the
// delete writes only the config topic), so both give the same time.
func TestOrphanedSinkOffsetsExpire(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec, kfake.BrokerConfigs(map[string]string{
		"offsets.retention.minutes":           "1",
		"offsets.retention.check.interval.ms": "200",
	}))
	// The S3 plugin installed: the undo creates the connector again.
	plugins := append(connectsim.DefaultPlugins("3.7.0"), connectsim.Plugin{Class: "io.confluent.connect.s3.S3SinkConnector", Type: "sink", Version: "10.5.0"})
	srv := c.startConnect(connectsim.Options{SinkMembers: true, MemberLeaveDelay: 50 * time.Millisecond, Plugins: plugins})
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
	logs := c.startDaemon("--journal-interval", "300ms", "--schedule", "@every 1h", "--listen", freeAddr(t), "--connect-url", srv.URL)
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
	cfg := connectdemo.DefaultConfigsTopic
	c.produce(&kgo.Record{Topic: cfg, Key: []byte("connector-" + conn)}, &kgo.Record{Topic: cfg, Key: []byte("target-state-" + conn)})
	waitLog(t, logs, `"msg":"reset seen"`, `"kind":"`+snapshot.EventConnectorDeleted+`"`)
	c.waitJournal(moment(), logs)
	if strings.Contains(logs.String(), `"kind":"sink-deleted"`) && strings.Contains(logs.String(), `"connector":"`+conn+`","kind":"sink-deleted"`) {
		t.Fatalf("the connector's deletion was recorded as its group's deletion\n%s", logs.String())
	}

	// The warning, for a connector that is not there.
	var warned map[string]any
	until(t, 90*time.Second, "the expiry warning", logs, func() bool {
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, `"msg":"sink offsets expire"`) && strings.Contains(line, `"group":"`+group+`"`) {
				return json.Unmarshal([]byte(line), &warned) == nil
			}
		}
		return false
	})
	note, _ := warned["note"].(string)
	undo, _ := warned["undo"].(string)
	del, _ := warned["delete"].(string)
	if warned["orphaned"] != true || !strings.Contains(note, "has no config") || !strings.Contains(del, "--delete --group "+group) ||
		!strings.Contains(undo, "--create-connectors") || strings.Contains(undo, "--start") || warned["resume"] != nil {
		t.Errorf("the warning for an orphaned group: %v", warned)
	}
	if len(c.committed(group)) == 0 {
		t.Fatalf("the offsets were gone when the daemon warned\n%s", logs.String())
	}
	// The warning is logged as the poll is read, its segment stored
	// after: events reads it once the journal covers a later moment.
	c.waitJournal(moment(), logs)
	out, _ := c.mustRun(0, "events", "--since", before.Format(time.RFC3339Nano), "--connect-url", srv.URL)
	if text := flat(out); !strings.Contains(text, "sink-orphan-expiring") || !strings.Contains(text, "connector "+conn+" has no config") ||
		!strings.Contains(text, "delete: kafka-consumer-groups.sh --bootstrap-server") || strings.Contains(text, "unless the connector is resumed") {
		t.Errorf("events before the expiry:\n%s", out)
	}

	// Kafka (kfake) deletes them; the journal records an expiry.
	until(t, 3*time.Minute, "the group to expire", logs, func() bool { s, _ := c.groupState(group); return s == "" })
	expired := waitSinkExpired(t, c, logs, group, before, srv.URL)
	if !strings.Contains(expired.Undo, "--create-connectors") || strings.Contains(expired.Undo, "--start") || !strings.Contains(expired.Note, "has no config") {
		t.Fatalf("sink-expired of an orphaned group: undo %q, note %q", expired.Undo, expired.Note)
	}
	waitLog(t, logs, `"msg":"sink offsets expired"`, `"orphaned":true`)
	line := waitLog(t, logs, `"msg":"reset seen"`, `"kind":"sink-expired"`)
	if strings.Contains(line, "--start") || !strings.Contains(line, "--create-connectors") {
		t.Errorf("the daemon's reset seen line for the orphan's expiry: %s", line)
	}

	// The undo, run as printed: the connector again, with its offsets.
	if code, rout, rerr := c.runPrinted(expired.Undo); code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", expired.Undo, code, rout, rerr)
	}
	if _, err := rc.Status(ctx, conn); err != nil {
		t.Errorf("%s after the undo: %v", conn, err)
	}
	got := c.committed(group)
	want.Each(func(o kadm.OffsetResponse) {
		if g, ok := got.Lookup(o.Topic, o.Partition); !ok || g.At != o.At {
			t.Errorf("%s/%d: %+v after the undo, want %d", o.Topic, o.Partition, g, o.At)
		}
	})
}
