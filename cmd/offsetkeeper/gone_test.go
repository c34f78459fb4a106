package main

import (
	"context"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestSnapshotTopicGone: a worker offsets topic that does not exist is a
// configuration question while the store has no history of it (check
// --offsets-topic), and a deleted topic once it has: snapshot says so and
// points at restore --allow-other-cluster.
func TestSnapshotTopicGone(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	_, stderr := c.mustRun(1, "snapshot", "--offsets-topic", "nope")
	if !strings.Contains(stderr, `offsets topic "nope": topic does not exist: check --offsets-topic`) {
		t.Errorf("no history, wrong topic name:\n%s", stderr)
	}
	id := c.snapshot()
	if _, err := c.adm.DeleteTopics(context.Background(), connectdemo.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	_, stderr = c.mustRun(1, "snapshot")
	for _, want := range []string{`offsets topic "connect-offsets" is gone, but the store holds its history`,
		`it was deleted (this is the snapshot's cluster "offsetkeeper-demo-cluster")`, "offsetkeeper restore " + id + " --"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("deleted topic: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "restore latest") || strings.Contains(stderr, "--allow-other-cluster") {
		t.Errorf("the advice names latest, or another cluster on the snapshot's own:\n%s", stderr)
	}
	if strings.Contains(stderr, "check --offsets-topic") {
		t.Errorf("a deleted topic blamed on configuration:\n%s", stderr)
	}
}
