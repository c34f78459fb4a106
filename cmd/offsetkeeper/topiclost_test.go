package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestOffsetsTopicRecreated is issue 40's first incident: the offsets
// topic deleted and created again while the daemon runs. The daemon's next
// snapshot holds the empty topic, so "latest" is the damage: the advice
// used to be restore latest --allow-other-cluster, which said "nothing to
// do" and left every source offset lost. Now events lists the deletion per
// connector whose keys the topic held, the plan of the state after it
// opens with the WARNING, and the undo events prints, run as printed,
// brings back every source offset.
func TestOffsetsTopicRecreated(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 2s", "--listen", freeAddr(t))
	c.waitJournal(time.Now(), logs)
	off := connectdemo.DefaultOffsetsTopic
	before := c.capture()
	want := map[string]bool{}
	for _, o := range before.SourceTable().Collect() {
		if o.Topic == off && o.Connector != "" {
			want[o.Connector] = true
		}
	}
	if len(want) < 2 {
		t.Fatalf("the demo's offsets topic holds the keys of %v only", want)
	}
	parts := c.partitions(off)
	ctx := context.Background()
	if _, err := c.adm.DeleteTopics(ctx, off); err != nil {
		t.Fatal(err)
	}
	compact := "compact"
	if _, err := c.adm.CreateTopic(ctx, parts, 1, map[string]*string{"cleanup.policy": &compact}, off); err != nil {
		t.Fatal(err)
	}
	recreated := time.Now()

	var evs []eventJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := c.mustRun(0, "events", "--output", "json", "--brokers", c.brokers, "--kafka-timeout", "10s")
		evs = nil
		if err := json.Unmarshal([]byte(out), &evs); err != nil {
			t.Fatalf("events --output json: %v\n%s", err, out)
		}
		evs = slices.DeleteFunc(evs, func(e eventJSON) bool { return e.Kind != snapshot.EventOffsetsTopicDeleted })
		got := map[string]bool{}
		for _, e := range evs {
			got[e.Connector] = true
		}
		if maps.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events lists the deletion for %v, want %v:\n%s\n%s", got, want, out, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	text, _ := c.mustRun(0, "events", "--brokers", c.brokers, "--kafka-timeout", "10s")
	if !strings.Contains(text, "offsets-topic-deleted") || strings.Contains(text, "latest") {
		t.Errorf("events text:\n%s", text)
	}
	// The daemon's log names the undo per connector, never latest.
	waitLog(t, logs, `"msg":"reset seen"`, `"kind":"offsets-topic-deleted"`)
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "restore latest") {
			t.Errorf("the daemon advises restore latest: %s", line)
		}
	}

	// The snapshot taken after the deletion is the trap: its plan opens
	// with the WARNING and the undo.
	waitSnapshotAfter(t, c, recreated)
	conn := evs[0].Connector
	out, _ := c.mustRun(0, "restore", "latest", "--connector", conn, "--dry-run")
	if !strings.HasPrefix(out, "WARNING: connector "+conn+" was reset at ") || !strings.Contains(out, "offsets-topic-deleted") {
		t.Errorf("the plan of the state after the deletion does not open with it:\n%s", out)
	}

	for _, e := range evs {
		if code, out, errOut := c.runPrinted(e.UndoDryRun); code != 0 || !strings.Contains(out, "dry run: nothing written") {
			t.Fatalf("%s: exit %d\n%s%s", e.UndoDryRun, code, out, errOut)
		}
		if code, out, errOut := c.runPrinted(e.Undo); code != 0 || !strings.Contains(out, "verified: ") {
			t.Fatalf("%s: exit %d\n%s%s", e.Undo, code, out, errOut)
		}
	}
	// Every owned key is back with its value; a key the demo holds in two
	// partitions (a stale copy written with kcat -p) comes back once, with
	// one of them.
	byKey := func(s *snapshot.Snapshot) map[string][]string {
		m := map[string][]string{}
		for _, o := range s.SourceTable().Collect() {
			if o.Topic == off && o.Connector != "" {
				m[string(o.Key)] = append(m[string(o.Key)], string(o.Value))
			}
		}
		return m
	}
	got, was := byKey(c.capture()), byKey(before)
	for k, vs := range was {
		if len(got[k]) != 1 || !slices.Contains(vs, got[k][0]) {
			t.Errorf("after the undo, key %s = %q, want one of %q", k, got[k], vs)
		}
	}
	for k := range got {
		if was[k] == nil {
			t.Errorf("after the undo, key %s is extra", k)
		}
	}
}

// waitLog waits until a line of logs holds every one of want.
func waitLog(t *testing.T, logs interface{ String() string }, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, line := range strings.Split(logs.String(), "\n") {
			if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line holds %q:\n%s", want, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSnapshotAfter waits until the store lists a full snapshot taken
// after at.
func waitSnapshotAfter(t *testing.T, c *cluster, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := c.mustRun(0, "list", "--output", "json")
		var infos []snapshot.Info
		if err := json.Unmarshal([]byte(out), &infos); err != nil {
			t.Fatalf("list --output json: %v\n%s", err, out)
		}
		if slices.ContainsFunc(infos, func(i snapshot.Info) bool { return i.Kind == snapshot.KindFull && i.CreatedAt.After(at) }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no full snapshot after %v:\n%s", at, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
