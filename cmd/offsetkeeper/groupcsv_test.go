package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestRestoreGroupCSV: restore --from-file --group G takes the
// topic,partition,offset lines kafka-consumer-groups.sh --reset-offsets
// --export writes for one --group, and restores that group's offsets.
func TestRestoreGroupCSV(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	before := c.capture()
	group := connectdemo.GroupSinkS3
	g, ok := before.SinkGroupOf(connectdemo.ConnSinkS3)
	if !ok || len(g.Offsets) == 0 || g.Group != group {
		t.Fatalf("no offsets of group %s in snapshot %s", group, id)
	}
	var export strings.Builder // as kafka-consumer-groups.sh --export --group writes it
	for _, o := range g.Offsets {
		fmt.Fprintf(&export, "%s,%d,%d\n", o.Topic, o.Partition, o.Offset)
	}
	file := filepath.Join(t.TempDir(), group+".csv")
	if err := os.WriteFile(file, []byte(export.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	c.badReset()
	out, _ := c.mustRun(0, "restore", "--from-file", file, "--group", group)
	wantLines(t, "group CSV import", out, "file "+file+": csv", "verified: ")
	have := c.groupOffsets(group)
	for _, o := range g.Offsets {
		if w := fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset); !slices.Contains(have, w) {
			t.Errorf("group %s after the import: %v lacks %s", group, have, w)
		}
	}
	out, _ = c.mustRun(0, "restore", "--from-file", file, "--group", group)
	wantLines(t, "second import", out, "nothing to do")

	// Without --group the three fields say how to name the group.
	_, stderr := c.mustRun(1, "restore", "--from-file", file)
	wantLines(t, "three fields without --group", stderr, "--group G", "nothing was written")
	// --group is for --from-file CSV only.
	c.mustRun(2, "restore", id, "--group", group)
	c.mustRun(2, "restore", "--from-file", file, "--group", group, "--connector", connectdemo.ConnSinkS3)
	rest := filepath.Join(t.TempDir(), "body.json")
	os.WriteFile(rest, []byte(`{"offsets":[]}`), 0o644)
	_, stderr = c.mustRun(2, "restore", "--from-file", rest, "--group", group)
	wantLines(t, "REST body with --group", stderr, "--connector NAME instead")
}
