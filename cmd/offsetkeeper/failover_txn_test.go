package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestFailoverFirstRunWithTransactionOpen: the primary's daemon died
// mid-sync, its offsets transaction left open on the standby. The first
// failover is refused (exit 3, no fence stored) and prints the failover
// with --force on a line of its own; that command, run as printed, ends
// the transaction, fails over and resumes the connectors.
func TestFailoverFirstRunWithTransactionOpen(t *testing.T) {
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	_, key := openStandbyTransaction(t, w)

	code, out, errs := runCLI(t, append([]string{"failover", "--store", st}, w.flags()...)...)
	if code != exitRefused {
		t.Fatalf("failover with a transaction open on the standby: exit %d, want %d\n%s\n%s", code, exitRefused, out, errs)
	}
	t.Logf("refusal:\n%s", errs)
	cmds := checkAdvice(t, "open transaction refusal", errs)
	if len(cmds) != 1 || !strings.HasSuffix(cmds[0], " --force") || !strings.Contains(flat(errs), "no fence was stored") {
		t.Fatalf("refusal: commands %q, want the failover with --force:\n%s", cmds, errs)
	}
	s, err := store.OpenStore(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fences().Get(ctx, "primary"); err == nil {
		t.Fatal("a refused failover stored a fence")
	}
	s.Close()

	code, out, errs = runCLI(t, shellArgs(t, cmds[0])...)
	if code != 0 || !strings.Contains(flat(out), "note: ended the offsets transactions left open on the standby") {
		t.Fatalf("the printed failover --force: exit %d\n%s\n%s", code, out, errs)
	}
	if got := standbyValue(t, w.bcl, key); got == `{"mid-sync":1}` {
		t.Errorf("the value of the transaction left open is on the standby after failover")
	}
	for _, c := range w.spec.Connectors {
		if !c.HasConfig || c.TargetState != "STARTED" {
			continue
		}
		if s, err := w.rc.Status(ctx, c.Name); err != nil || s.Connector.State != "RUNNING" {
			t.Errorf("%s on the standby after failover: %+v %v, want RUNNING", c.Name, s, err)
		}
	}
}

// TestFailoverNamesConnectorsAlreadyRunning: a connector someone resumed on
// the standby while the daemon kept it in step (the standby holds its
// state) is let through by failover, which writes nothing for it and
// leaves it running, and says so in text and JSON: never in silence.
func TestFailoverNamesConnectorsAlreadyRunning(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := syncedStandby(t, w)
	ctx := context.Background()

	var started string
	for _, c := range w.spec.Connectors {
		if c.HasConfig && c.TargetState == "STARTED" {
			started = c.Name
			break
		}
	}
	if err := w.rc.Resume(ctx, started); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--output", "json"}, w.flags()...)...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("failover with %s running on the standby: exit %d\n%s\n%s", started, code, out, errs)
	}
	if !slices.Equal(doc.AlreadyRunning, []string{started}) {
		t.Errorf("already_running %v, want [%s]", doc.AlreadyRunning, started)
	}
	if s, err := w.rc.Status(ctx, started); err != nil || s.Connector.State != "RUNNING" {
		t.Errorf("%s after failover: %+v %v, want left RUNNING", started, s, err)
	}
}

// syncedStandby runs the daemon with w's standby until the standby is in
// step, stops it, and returns the store it used.
func syncedStandby(t *testing.T, w *standbyWorld) string {
	t.Helper()
	st := "file://" + t.TempDir()
	addr := freeAddr(t)
	ctx := context.Background()
	dctx, cancel := context.WithCancel(ctx)
	var stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(dctx, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", addr, "--log-format", "json"}, w.flags()...), &bytes.Buffer{}, &stderr)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for m := standbyMetrics(addr); m[`offsetkeeper_standby_connectors{state="out_of_step"}`] > 0 || m[`offsetkeeper_standby_connectors{state="in_step"}`] == 0; m = standbyMetrics(addr) {
		if time.Now().After(deadline) {
			t.Fatalf("the standby never got in step\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-exit
	return st
}

// openStandbyTransaction leaves a transaction open on w's standby offsets
// topic, as the primary's daemon killed mid-sync (or a killed failover)
// leaves it: restore's transactional id, one record of key written and
// not committed. The client is closed with the test.
func openStandbyTransaction(t *testing.T, w *standbyWorld) (txn *kgo.Client, key []byte) {
	t.Helper()
	// The daemon's sync writes with restore's transactional id.
	txn, err := kgo.NewClient(append(w.bcl.Opts(), kgo.TransactionalID(restore.TransactionalIDPrefix+connectdemo.DefaultOffsetsTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(txn.Close)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	key = []byte(`["` + connectdemo.ConnFile + `",{"filename":"/var/log/app.log"}]`)
	if err := txn.ProduceSync(context.Background(), &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key, Value: []byte(`{"mid-sync":1}`),
		Partition: connectdemo.Murmur2Partition(key, connectdemo.DefaultTopics().OffsetsPartitions)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return txn, key
}
