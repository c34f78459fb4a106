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
