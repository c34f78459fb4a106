package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// What broke: a whole-snapshot restore in the demo refused with 12
// problems, six of them connectors whose plan was "unchanged" (running,
// paused, or with a live sink member), some with no offsets here or in the
// snapshot. A restore refuses only for the connectors it writes: here it
// writes the stopped mongodb-connector and succeeds, the others left alone.
func TestRestoreLeavesAloneWhatItDoesNotWrite(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	spec.LiveSinkMember = true
	c := newCluster(t, &spec)
	id := c.snapshot()
	mongo0 := key(connectdemo.ConnMongo, `{"rs":"rs0","server_id":"mongo1"}`)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mongo0})

	alone := []string{
		"connector inventory-connector (source, STARTED, 1 task): unchanged, running, left alone\n",
		"connector sqlserver-connector (source, PAUSED, 1 task): unchanged, paused, left alone\n",
		"connector es-sink-orders (sink, STARTED, 2 tasks): unchanged, running, left alone\n",
		"connector custom-poller (source, STARTED, no task commit): unchanged, running, left alone\n",
		"connector mongodb-connector (source, STOPPED)\n",
	}
	out, stderr := c.mustRun(0, "restore", id, "--dry-run")
	wantLines(t, "dry run", out, append(alone, "plan: 1 source write, 0 tombstones, 0 sink commits, 0 sink deletions\n", "dry run: nothing written\n")...)
	if strings.Contains(out+stderr, "refused") {
		t.Errorf("a dry run that writes only a stopped connector speaks of refusal:\n%s\n%s", out, stderr)
	}

	out, _ = c.mustRun(0, "restore", id)
	wantLines(t, "restore", out, append(alone, "undo snapshot: ", "verified: 16 connectors match the snapshot\n")...)

	// restore latest --connector X finds X in the scoped snapshot that
	// holds it, newer than the full one.
	scoped := c.snapshot("--connector", connectdemo.ConnMongo)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mongo0})
	out, _ = c.mustRun(0, "restore", "latest", "--connector", connectdemo.ConnMongo)
	wantLines(t, "restore latest --connector", out, "restore plan: snapshot "+scoped+" ", "verified: 1 connector matches the snapshot\n")
}

// TestRestoreOutputJSON: restore --output json prints one document on
// stdout (the text goes to stderr) for a refused dry run (exit 3), a
// restore (exit 0) and a second run with nothing to do; CI can gate on it.
func TestRestoreOutputJSON(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	spec.LiveSinkMember = true
	c := newCluster(t, &spec)
	id := c.snapshot()
	mongo0 := key(connectdemo.ConnMongo, `{"rs":"rs0","server_id":"mongo1"}`)
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: mongo0})
	c.rewrite(connectdemo.ConnMySQL, `{"pos":0}`) // running: refused

	doc := func(code int, args ...string) (restore.Document, string) {
		t.Helper()
		out, stderr := c.mustRun(code, append(args, "--output", "json")...)
		var d restore.Document
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("%v: stdout is not one restore document: %v\n%s", args, err, out)
		}
		if dec.More() {
			t.Fatalf("%v: stdout holds more than one document:\n%s", args, out)
		}
		return d, stderr
	}

	d, stderr := doc(3, "restore", id, "--dry-run")
	if d.Outcome != restore.OutcomeRefused || !d.DryRun || d.Snapshot != id || d.UndoSnapshot != "" || d.Written != nil || d.Verified != nil || d.Error == "" {
		t.Errorf("refused dry run: %+v", d)
	}
	var refused []string
	for _, r := range d.Refusals {
		refused = append(refused, r.Check+" "+r.Connector)
	}
	if !slices.Equal(refused, []string{restore.CheckRunning + " " + connectdemo.ConnMySQL}) {
		t.Errorf("refusals %v, want inventory-connector running only", refused)
	}
	if d.Plan == nil || d.Plan.Counts.SourceWrites != 2 || d.Plan.ClusterID != connectdemo.DefaultClusterID {
		t.Fatalf("plan %+v", d.Plan)
	}
	byName := map[string]restore.ConnectorDocument{}
	for _, cd := range d.Plan.Connectors {
		byName[cd.Name] = cd
	}
	if cd := byName[connectdemo.ConnMongo]; !cd.Writes || cd.LeftAlone || cd.Source == nil || len(cd.Source.Changes) != 1 ||
		cd.Source.Changes[0].Action != restore.Added || string(cd.Source.Changes[0].Key) != string(mongo0) || cd.Source.Changes[0].Old != nil {
		t.Errorf("mongodb-connector in the plan: %+v", cd)
	}
	if cd := byName[connectdemo.ConnSQLServer]; cd.Writes || !cd.LeftAlone || cd.State != "PAUSED, 1 task" {
		t.Errorf("sqlserver-connector in the plan: %+v", cd)
	}
	if cd := byName[connectdemo.ConnSinkES]; cd.Sink == nil || cd.Sink.Members != 1 || cd.Sink.Unchanged == 0 || len(cd.Sink.Changes) != 0 {
		t.Errorf("es-sink-orders in the plan: %+v", cd)
	}
	if !strings.Contains(stderr, "restore plan: snapshot "+id) || !strings.Contains(stderr, "dry run: nothing written; the restore would be refused (1 problem)") {
		t.Errorf("the text of a JSON run is not on stderr:\n%s", stderr)
	}

	d, _ = doc(0, "restore", id, "--connector", connectdemo.ConnMongo)
	if d.Outcome != restore.OutcomeRestored || d.DryRun || d.UndoSnapshot == "" || len(d.Refusals) != 0 || d.Error != "" {
		t.Errorf("restore: %+v", d)
	}
	if w := d.Written; w == nil || w.Via != restore.ViaKafka || w.SourceWrites != 1 || len(w.Topics) != 1 || w.Topics[0].Topic != connectdemo.DefaultOffsetsTopic {
		t.Errorf("written %+v", d.Written)
	}
	if v := d.Verified; v == nil || !v.OK || v.Connectors != 1 || len(v.Differences) != 0 {
		t.Errorf("verified %+v", d.Verified)
	}
	if !slices.Contains(c.storeIDs(), d.UndoSnapshot+" undo") {
		t.Errorf("undo snapshot %s is not stored: %v", d.UndoSnapshot, c.storeIDs())
	}

	d, _ = doc(0, "restore", id, "--connector", connectdemo.ConnMongo)
	if d.Outcome != restore.OutcomeNothingToDo || d.UndoSnapshot != "" || d.Written != nil {
		t.Errorf("second run: %+v", d)
	}

	// A usage error prints no document.
	code, out, _ := c.run("restore", id, "--output", "yaml")
	if code != exitUsage || out != "" {
		t.Errorf("--output yaml: exit %d, stdout %q", code, out)
	}
}
