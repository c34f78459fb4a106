package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// TestDrillAt: drill --at a moment the daemon's journal covers drills the
// state at that moment, not the newest one (a key written after it is not
// in the report's counts) and the report names the moment; a moment
// before the journal, where only an older snapshot stands, and a moment
// before anything was kept cannot run (exit 2), each saying why.
func TestDrillAt(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	early := c.snapshot() // before the daemon: no journal covers its time
	between := moment()
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	c.waitJournal(time.Now(), logs)

	c.waitJournal(moment(), logs)
	t1 := moment()
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic,
		Key: key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.refunds"}`), Value: []byte(`{"incrementing":7}`)})
	c.waitJournal(moment(), logs)
	t2 := moment()

	drillAt := func(at time.Time) drill.Report {
		t.Helper()
		out, errs := c.mustRun(exitOK, "drill", "--at", at.UTC().Format(time.RFC3339Nano), "--output", "json")
		var rep drill.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("drill --at %v --output json: %v\n%s\n%s", at, err, out, errs)
		}
		if rep.Result != drill.Passed || rep.State.Kind != "moment" || !rep.State.At.Equal(at) || rep.State.SnapshotID != "" ||
			!strings.Contains(rep.State.Description, "journal") {
			t.Errorf("drill --at %v: result %s, state %+v", at, rep.Result, rep.State)
		}
		return rep
	}
	r1, r2 := drillAt(t1), drillAt(t2)
	if r2.Counts.SourceKeys != r1.Counts.SourceKeys+1 {
		t.Errorf("source keys at t1 %d, at t2 %d: want the key written between them in t2's state only", r1.Counts.SourceKeys, r2.Counts.SourceKeys)
	}
	out, _ := c.mustRun(exitOK, "drill", "--at", t1.UTC().Format(time.RFC3339Nano))
	if !strings.Contains(out, "at "+t1.UTC().Format(millis)) || !strings.Contains(out, "PASSED") {
		t.Errorf("the text report does not name the moment %s:\n%s", t1.UTC().Format(millis), out)
	}

	for _, tc := range []struct {
		name string
		at   time.Time
		want []string
	}{
		{"before the journal", between, []string{"no journal covers " + between.UTC().Format(millis), "snapshot " + early, "drill that snapshot"}},
		{"before anything kept", between.Add(-time.Hour), []string{"read state at", "not restorable"}},
	} {
		_, errs := c.mustRun(exitUsage, "drill", "--at", tc.at.UTC().Format(time.RFC3339Nano))
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, errs)
			}
		}
	}
}
