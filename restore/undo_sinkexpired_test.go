package restore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// The undo of a sink-expired event, as the daemon's "reset seen" line, the
// page and a plan's header print it (CommandSettings.Undo), starts the
// connector (--start) as events' does: the offsets expired because it
// stayed stopped, and restored into the group it left Empty long ago
// Kafka deletes them again at its next expiry check. The daemon's line
// used to print the restore without --start. Without a Connect URL the
// note says to resume it at once.
func TestUndoSinkExpiredStarts(t *testing.T) {
	before := time.Date(2026, 12, 1, 9, 14, 2, 999e6, time.UTC)
	with := restore.CommandSettings{Flags: []string{"--store", "file:///s"}, ConnectURL: true}
	c := with.Undo(snapshot.EventSinkExpired, before, "s3-sink")
	if !strings.HasSuffix(c.Run, " --stop-connectors --resume --start") || strings.Contains(c.DryRun, "--start") ||
		!strings.HasSuffix(c.DryRun, " --stop-connectors --resume --dry-run") {
		t.Errorf("with a Connect URL: run %q, dry run %q", c.Run, c.DryRun)
	}
	if n := with.UndoNote(snapshot.EventSinkExpired); n != "" {
		t.Errorf("with a Connect URL, a note: %q", n)
	}
	without := restore.CommandSettings{Flags: []string{"--store", "file:///s"}}
	c = without.Undo(snapshot.EventSinkExpired, before, "s3-sink")
	if strings.Contains(c.Run, "--start") || strings.Contains(c.Run, "--resume") {
		t.Errorf("without a Connect URL: %q", c.Run)
	}
	if n := without.UndoNote(snapshot.EventSinkExpired); !strings.Contains(n, "resume it as soon as the undo is verified") {
		t.Errorf("without a Connect URL, the note: %q", n)
	}
	// Other kinds are as before.
	if c := with.Undo(snapshot.EventSinkDeleted, before, "s3-sink"); strings.Contains(c.Run, "--start") {
		t.Errorf("sink-deleted: %q", c.Run)
	}
}
