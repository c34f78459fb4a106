package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFailoverDryRunNothingOpen: with no transaction open on the standby,
// failover --dry-run said "the failover will be refused while it is open
// (exit 3 ...); with --force it ends it first" all the same (the note of
// the open transactions was printed for none), steering an operator to
// --force before a failover nothing refuses. Now it says nothing of
// transactions, exits 0, and the failover run as the dry run's own
// command line is not refused.
func TestFailoverDryRunNothingOpen(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	args := append([]string{"failover", "--store", st}, w.flags()...)
	code, out, errs := runCLI(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "would resume") {
		t.Fatalf("failover --dry-run: exit %d\n%s\n%s", code, out, errs)
	}
	for _, bad := range []string{"refused", "--force", "transaction"} {
		if strings.Contains(flat(out+errs), bad) {
			t.Errorf("a dry run with nothing open says %q:\n%s\n%s", bad, out, errs)
		}
	}
	code, out, errs = runCLI(t, append(args, "--dry-run", "--output", "json")...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.OpenTransactions) != 0 {
		t.Fatalf("failover --dry-run --output json: exit %d, open_transactions %+v\n%s\n%s", code, doc.OpenTransactions, out, errs)
	}
	if code, out, errs = runCLI(t, args...); code != 0 || !strings.Contains(out, "verified: the standby holds the state") {
		t.Fatalf("the failover the dry run announced: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestFailoverSaysPrimaryNotAsked: failover without --connect-url took the
// primary as gone in silence, though the primary may be half alive (its
// Connect running connectors while the store's state is a second old):
// both clusters then ran them. Now it says the primary's Connect was not
// asked and how to have it checked; given --connect-url of a Connect that
// does not answer, it says that instead, and that its workers, back with
// its Kafka, would run its connectors beside the standby's.
func TestFailoverSaysPrimaryNotAsked(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	args := append([]string{"failover", "--store", st, "--dry-run"}, w.flags()...)
	code, out, errs := runCLI(t, args...)
	if want := "note: the primary's Connect was not asked (no --connect-url)"; code != 0 || !strings.Contains(flat(out), want) {
		t.Fatalf("failover --dry-run without --connect-url: exit %d, want %q\n%s\n%s", code, want, out, errs)
	}
	fits(t, "dry run", out)
	gone := "http://" + freeAddr(t) // nothing listens there
	code, out, errs = runCLI(t, append(args, "--connect-url", gone)...)
	if code != 0 || strings.Contains(out, "was not asked") || !strings.Contains(out, "note: the primary's Connect did not answer") ||
		!strings.Contains(flat(out), "they run its connectors again beside the standby's") {
		t.Fatalf("failover --dry-run with a --connect-url that does not answer: exit %d\n%s\n%s", code, out, errs)
	}
}
