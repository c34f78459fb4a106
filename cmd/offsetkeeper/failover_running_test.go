package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestFailoverRefusedForConnectorRunningOnStandby: before any failover,
// someone started a connector on the standby and it moved its offset on.
// The failover was refused with the check's advice, "stop them on the
// standby, or they were started there: fail over instead", which sends a
// failover to itself. Now it prints the stop on the standby's Connect and
// the same failover again, each on a line of its own; run as printed,
// they stop it and fail over, writing the primary's state for it.
func TestFailoverRefusedForConnectorRunningOnStandby(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed stop is a curl command: no curl here")
	}
	w := newStandbyWorld(t, 0)
	st := syncedStandby(t, w)
	ctx := context.Background()
	name := connectdemo.ConnMongo
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
	want := standbyValue(t, w.bcl, key)
	testkit.Produce(t, w.bcl, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key, Value: []byte(`{"ord":424242}`)})

	code, out, errs := runCLI(t, append([]string{"failover", "--store", st}, w.flags()...)...)
	t.Logf("refusal:\n%s", errs)
	if code != exitRefused || strings.Contains(errs, "fail over instead") {
		t.Fatalf("failover with a connector running on the standby: exit %d, want %d without 'fail over instead'\n%s\n%s",
			code, exitRefused, out, errs)
	}
	fits(t, "refusal", errs)
	var stop, again string
	for _, l := range strings.Split(joinContinued(errs), "\n") {
		switch s := strings.TrimSpace(l); {
		case strings.HasPrefix(s, "curl ") && strings.HasSuffix(s, "/"+name+"/stop"):
			stop = s
		case strings.HasPrefix(s, "offsetkeeper failover "):
			again = s
		}
	}
	if stop == "" || again == "" {
		t.Fatalf("the refusal does not print the stop and the failover again on lines of their own:\n%s", errs)
	}
	if b, err := exec.Command("sh", "-c", strings.Replace(stop, "curl", curl, 1)).CombinedOutput(); err != nil {
		t.Fatalf("the printed %s: %v\n%s", stop, err, b)
	}
	if code, out, errs = runCLI(t, shellArgs(t, again)...); code != 0 {
		t.Fatalf("the printed %s: exit %d\n%s\n%s", again, code, out, errs)
	}
	if got := standbyValue(t, w.bcl, key); got != want {
		t.Errorf("%s's offset on the standby after the failover: %s, want the primary's state %s", name, got, want)
	}
}
