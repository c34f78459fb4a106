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
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestFailoverRunAgainAfterSwitchoverResume: a planned switchover ends
// with the operator resuming on the standby the connectors the failover
// left STOPPED (as the primary's state had them once stopped there), and
// they move their offsets on. The same failover run again (twice in a
// shell's history, or to be sure) was refused: "a connector runs on the
// standby ... stop them on the standby, or they were started there: fail
// over instead", advice that, followed, rewinds them to the primary's old
// offsets. Now the run again leaves them as they run, names them
// (started_since_failover), writes nothing for them and exits 0.
func TestFailoverRunAgainAfterSwitchoverResume(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := syncedStandby(t, w)
	ctx := context.Background()
	args := append([]string{"failover", "--store", st}, w.flags()...)
	if code, out, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", code, out, errs)
	}
	name := connectdemo.ConnMongo // STOPPED in the primary's state
	if err := w.rc.Resume(ctx, name); err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, w.bcl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var key []byte
	for _, o := range snap.SourceTable().Collect() {
		if n, _, _, err := connectjson.ParseKey(o.Key); err == nil && n == name {
			key = o.Key
			break
		}
	}
	if key == nil {
		t.Fatalf("no source offset of %s on the standby", name)
	}
	testkit.Produce(t, w.bcl, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key, Value: []byte(`{"ord":999999}`),
		Partition: connectdemo.Murmur2Partition(key, connectdemo.DefaultTopics().OffsetsPartitions)})

	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("failover run again after the switchover's resume: exit %d\n%s\n%s", code, out, errs)
	}
	if want := "note: started on the standby since the earlier failover, which left them STOPPED as the primary's state has them: " +
		name; !strings.Contains(flat(out), want) {
		t.Errorf("the run again does not say %q:\n%s", want, out)
	}
	fits(t, "run again", out)
	if want := "of them paused there, as on the primary): left as they run"; !strings.Contains(flat(out), want) {
		t.Errorf("the run again does not say the connectors the earlier run paused were paused (%q):\n%s", want, out)
	}
	if got := standbyValue(t, w.bcl, key); got != `{"ord":999999}` {
		t.Errorf("%s's offset on the standby is %s after the run again, want it left as it ran", name, got)
	}
	if s, err := w.rc.Status(ctx, name); err != nil || s.Connector.State != "RUNNING" {
		t.Errorf("%s after the run again: %+v %v, want RUNNING", name, s, err)
	}
	code, out, errs = runCLI(t, append(args, "--output", "json")...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("failover a third time: exit %d\n%s\n%s", code, out, errs)
	}
	if !slices.Contains(doc.StartedSince, name) || slices.Contains(doc.ResumedBefore, name) || slices.Contains(doc.Resumed, name) {
		t.Errorf("json: started_since_failover %v, resumed_before %v, resumed %v: want %s among the first only",
			doc.StartedSince, doc.ResumedBefore, doc.Resumed, name)
	}
}
