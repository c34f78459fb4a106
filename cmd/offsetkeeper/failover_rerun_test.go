package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestFailoverRunAgainAfterPartialResume: a failover whose resume of one
// connector failed (exit 1, the fence stored) has resumed the others; one
// of them moves its offset on the standby, as a running connector does,
// and a transaction of offsetkeeper's is left open on the standby's
// offsets topic, as by a run killed mid-write. Run again, failover ends
// that transaction, leaves the connectors resumed before as they run (the
// moved offset stays: not rewound) and names them in resumed_before,
// resumes the one left and exits 0.
func TestFailoverRunAgainAfterPartialResume(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := syncedStandby(t, w)
	ctx := context.Background()

	w.connect.InjectTimeouts(1)
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--output", "json"}, w.flags()...)...)
	if code != 1 || !strings.Contains(errs, "Request timed out") {
		t.Fatalf("failover with a resume that fails: exit %d\n%s\n%s", code, out, errs)
	}
	var first failoverDocument
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatal(err)
	}
	// A connector resumed by the first run moves its offset on.
	snap, err := capture.Capture(ctx, w.bcl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var moved []byte
	for _, o := range snap.SourceTable().Collect() {
		if name, _, _, err := connectjson.ParseKey(o.Key); err == nil && slices.Contains(first.Resumed, name) {
			moved = o.Key
			break
		}
	}
	if moved == nil {
		t.Fatalf("no source offset on the standby of a connector the first run resumed (%v)", first.Resumed)
	}
	testkit.Produce(t, w.bcl, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: moved, Value: []byte(`{"moved":1}`)})
	// A transaction of offsetkeeper's left open.
	txn, err := kgo.NewClient(append(w.bcl.Opts(), kgo.TransactionalID(restore.TransactionalIDPrefix+connectdemo.DefaultOffsetsTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: moved, Value: []byte(`{"killed":1}`),
		Partition: connectdemo.Murmur2Partition(moved, connectdemo.DefaultTopics().OffsetsPartitions)}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	code, out, errs = runCLI(t, append([]string{"failover", "--store", st}, w.flags()...)...)
	if code != 0 {
		t.Fatalf("failover run again: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"note: ended the offsets transactions an earlier run left open",
		"note: an earlier run of this failover resumed " + plural(len(first.Resumed)+len(first.Paused), "connector", "connectors")} {
		if !strings.Contains(out, want) {
			t.Errorf("the run again does not say %q:\n%s", want, out)
		}
	}
	if got := standbyValue(t, w.bcl, moved); got != `{"moved":1}` {
		t.Errorf("the offset a resumed connector moved is %s after the run again, want it left", got)
	}
	code, out, errs = runCLI(t, append([]string{"failover", "--store", st, "--output", "json"}, w.flags()...)...)
	var again failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &again) != nil {
		t.Fatalf("failover a third time: exit %d\n%s\n%s", code, out, errs)
	}
	for _, c := range w.spec.Connectors {
		if !c.HasConfig || c.TargetState != "STARTED" {
			continue
		}
		if s, err := w.rc.Status(ctx, c.Name); err != nil || s.Connector.State != "RUNNING" {
			t.Errorf("%s on the standby after the run again: %+v %v, want RUNNING", c.Name, s, err)
		}
		if !slices.Contains(again.Resumed, c.Name) || !slices.Contains(again.ResumedBefore, c.Name) {
			t.Errorf("the third run's resumed %v / resumed_before %v lack %s", again.Resumed, again.ResumedBefore, c.Name)
		}
	}
}
