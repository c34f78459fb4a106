package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestSnapshotOfRecreatedOffsetsTopicWarns: the offsets topic deleted and
// created again (10 partitions where it had 25, empty) before a snapshot.
// The snapshot of the loss was stored in silence (exit 0, no word), and
// "restore latest" then restored the loss. It now warns, naming the
// earlier snapshot and the dry run of its restore on lines of its own;
// run as printed, that dry run plans the source offsets back, and the same
// command without --dry-run restores them (verified).
func TestSnapshotOfRecreatedOffsetsTopicWarns(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	c.snapshot()
	first, firstErr := c.mustRun(exitOK, "snapshot")
	if strings.Contains(firstErr, "created again") {
		t.Fatalf("a snapshot of an unchanged topic warns:\n%s", firstErr)
	}
	before := lastLine(first) // the newest full snapshot before the loss

	ctx := context.Background()
	topic := connectdemo.DefaultOffsetsTopic
	if _, err := c.adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	if _, err := c.adm.CreateTopic(ctx, 10, -1, compact, topic); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := c.run("snapshot")
	if code != exitOK {
		t.Fatalf("snapshot of the recreated topic: exit %d\n%s\n%s", code, out, stderr)
	}
	fits(t, "snapshot", stderr)
	said := flat(stderr)
	if !strings.Contains(said, `offsets topic "`+topic+`" has 10 partitions, it had 25`) || !strings.Contains(said, "deleted and created again?") {
		t.Fatalf("the snapshot of the recreated topic does not warn:\n%s", stderr)
	}
	cmds := printedCommands(t, stderr, "offsetkeeper")
	if len(cmds) != 1 || !strings.HasPrefix(cmds[0], "offsetkeeper restore "+before+" ") || !strings.HasSuffix(cmds[0], " --dry-run") {
		t.Fatalf("commands %q, want the dry run of the restore of %s:\n%s", cmds, before, stderr)
	}
	code, out, errs := c.runPrinted(cmds[0])
	if code != exitOK || !strings.Contains(out, "dry run: nothing written") || strings.Contains(out, "plan: 0 source writes") {
		t.Fatalf("the printed dry run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = c.runPrinted(strings.TrimSuffix(cmds[0], " --dry-run"))
	if code != exitOK || !strings.Contains(out, "verified: ") {
		t.Fatalf("the printed restore without --dry-run: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestDaemonSnapshotOfRecreatedOffsetsTopicWarns: a daemon started after
// the offsets topic was deleted and created again (its journal never saw
// the loss) stores its first scheduled snapshot of the empty topic; it
// now logs a warning naming the earlier snapshot to restore, instead of
// nothing.
func TestDaemonSnapshotOfRecreatedOffsetsTopicWarns(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	before := c.snapshot()
	ctx := context.Background()
	topic := connectdemo.DefaultOffsetsTopic
	if _, err := c.adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	if _, err := c.adm.CreateTopic(ctx, 10, -1, compact, topic); err != nil {
		t.Fatal(err)
	}
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	c.waitJournal(time.Now(), logs) // its first snapshot is stored
	said := logs.String()
	if !strings.Contains(said, "deleted and created again?") || !strings.Contains(said, `"earlier_snapshot_id":"`+before+`"`) {
		t.Errorf("the daemon's snapshot of the recreated topic does not warn naming %s:\n%s", before, said)
	}
}
