package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestFailoverDryRunWithTransactionOpen: the primary's daemon, killed
// mid-sync, left its offsets transaction open on the standby. Regression:
// failover --dry-run was refused by it until the broker's timeout aborted
// it, and said nothing of what the failover would do, though a dry run
// writes nothing. Now the dry run goes on, names the transaction (its id,
// since when), says the failover will be refused without --force and that
// --force ends it, prints that failover with --force on a line of its own
// and exits 3, as restore --dry-run does when it finds a blocker; with
// --force it says the failover ends it and exits 0. Neither touches the
// transaction. After a failover killed part way, which the failover
// finishes by ending the transaction itself, the dry run says so and
// exits 0. The printed command then fails over.
func TestFailoverDryRunWithTransactionOpen(t *testing.T) {
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	_, key := openStandbyTransaction(t, w)
	txnID := restore.TransactionalIDPrefix + connectdemo.DefaultOffsetsTopic

	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--dry-run"}, w.flags()...)...)
	t.Logf("dry run:\n%s\n%s", out, errs)
	if code != exitRefused {
		t.Fatalf("failover --dry-run with a transaction open: exit %d, want %d (a dry run that found a blocker)", code, exitRefused)
	}
	fits(t, "dry run", out)
	for _, want := range []string{
		"would write to standby cluster standby:", // the dry run went on
		"would resume",
		`offsetkeeper's transactional id "` + txnID + `", Ongoing since `,
		"will be refused while it is open", "with --force it ends it first",
	} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("dry run's stdout lacks %q", want)
		}
	}
	cmds := checkAdvice(t, "dry run's refusal", errs)
	if len(cmds) != 1 || !strings.HasSuffix(cmds[0], " --force") || strings.Contains(cmds[0], "dry-run") ||
		!strings.Contains(flat(errs), "dry run: nothing was written, no fence stored") {
		t.Fatalf("dry run's refusal: commands %q, want the failover with --force (not a dry run)", cmds)
	}

	// --output json carries the transaction, and the exit code is the same.
	code, out, errs = runCLI(t, append([]string{"failover", "--store", st, "--dry-run", "--output", "json"}, w.flags()...)...)
	var doc failoverDocument
	if code != exitRefused || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("failover --dry-run --output json: exit %d\n%s\n%s", code, out, errs)
	}
	if len(doc.OpenTransactions) != 1 || doc.OpenTransactions[0].TxnID != txnID || doc.OpenTransactions[0].Since == nil ||
		doc.OpenTransactions[0].Ended || !doc.DryRun || doc.Counts.SourceWrites == 0 {
		t.Errorf("json: open_transactions %+v, counts %+v", doc.OpenTransactions, doc.Counts)
	}

	// With --force the failover ends it: no blocker.
	code, out, errs = runCLI(t, append([]string{"failover", "--store", st, "--dry-run", "--force"}, w.flags()...)...)
	if code != 0 || !strings.Contains(flat(out), "--force: the failover ends it first") || !strings.Contains(flat(out), txnID) {
		t.Fatalf("failover --dry-run --force: exit %d\n%s\n%s", code, out, errs)
	}

	// The dry runs left the transaction open and stored no fence.
	described, err := kadm.NewClient(w.bcl).DescribeTransactions(ctx, txnID)
	if err != nil || described[txnID].State != "Ongoing" {
		t.Fatalf("the transaction after the dry runs: %+v %v, want Ongoing", described[txnID], err)
	}
	s, err := store.OpenStore(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fences().Get(ctx, "primary"); err == nil {
		t.Fatal("a dry run stored a fence")
	}
	// After a failover killed part way (its fence stored), the failover
	// ends the transaction itself: the dry run says so, no blocker.
	if err := standby.PutFence(ctx, s, standby.Fence{Primary: "primary", Standby: "standby", At: time.Now(), By: "failover",
		Translate: "mm2", MM2SourceAlias: "a"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	code, out, errs = runCLI(t, append([]string{"failover", "--store", st, "--dry-run"}, w.flags()...)...)
	if code != 0 || !strings.Contains(flat(out), "the failover ends it first (a run again after one killed part way)") {
		t.Fatalf("failover --dry-run after a killed failover: exit %d\n%s\n%s", code, out, errs)
	}

	code, out, errs = runCLI(t, shellArgs(t, cmds[0])...)
	if code != 0 || !strings.Contains(flat(out), "note: ended the offsets transactions") {
		t.Fatalf("the printed failover --force: exit %d\n%s\n%s", code, out, errs)
	}
	if got := standbyValue(t, w.bcl, key); got == `{"mid-sync":1}` {
		t.Errorf("the value of the transaction left open is on the standby after failover")
	}
}
