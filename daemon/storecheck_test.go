package daemon

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The leader checks the store once its first snapshot is stored. A check
// that finds damage logs each object with what to do and sets
// offsetkeeper_store_verify_failed; the next check comes within
// storeRecheck however late the schedule is, and once the store verifies
// the gauge is 0 again. A check that cannot run is counted as an error and
// leaves the gauge as it was.
func TestDaemonChecksStore(t *testing.T) {
	prev := storeRecheck
	storeRecheck = 50 * time.Millisecond
	t.Cleanup(func() { storeRecheck = prev })
	var calls atomic.Int32
	d := &Daemon{
		Config:   Config{Schedule: "@every 1h", VerifySchedule: "@daily"},
		Store:    memStore(t),
		Snapshot: drillableSnapshot,
	}
	d.VerifyStore = func(ctx context.Context) (StoreCheck, error) {
		chk := StoreCheck{Snapshots: 2, Epochs: 1, Command: "offsetkeeper verify --store x"}
		switch calls.Add(1) {
		case 1:
			chk.Failed = []StoreFailure{{Kind: "snapshot", ID: "20261207T000000.000000Z-abcdef", Err: "checksum mismatch"}}
		case 2:
			return chk, errors.New("store unreachable")
		}
		return chk, nil
	}
	if got := metric(t, d, "offsetkeeper_store_verify_last_run_timestamp_seconds"); got != 0 {
		t.Fatalf("last run before the first check = %v, want 0", got)
	}
	r := start(t, d)
	waitFor(t, "a failed check", func() bool { return metric(t, d, "offsetkeeper_store_verifies_total", "result", "failed") == 1 })
	if s, j := metric(t, d, "offsetkeeper_store_verify_failed", "kind", "snapshot"), metric(t, d, "offsetkeeper_store_verify_failed", "kind", "journal_epoch"); s != 1 || j != 0 {
		// The gauge may already be 0 again if the third check ran: then
		// the passed counter says so.
		if metric(t, d, "offsetkeeper_store_verifies_total", "result", "passed") == 0 {
			t.Errorf("offsetkeeper_store_verify_failed after the failed check: snapshot %v, journal_epoch %v; want 1, 0", s, j)
		}
	}
	logs := r.logs.String()
	if !strings.Contains(logs, "stored snapshot does not verify: do not restore from it") || !strings.Contains(logs, "20261207T000000.000000Z-abcdef") ||
		!strings.Contains(logs, `why="offsetkeeper verify --store x"`) {
		t.Errorf("the failed check's log does not name the snapshot and the command:\n%s", logs)
	}
	// Failed, then an error, then passed: each within storeRecheck of the last.
	waitFor(t, "a check that passed", func() bool { return metric(t, d, "offsetkeeper_store_verifies_total", "result", "passed") == 1 })
	r.stop(t)
	if n := metric(t, d, "offsetkeeper_store_verifies_total", "result", "error"); n != 1 {
		t.Errorf("checks that could not run: %v, want 1", n)
	}
	if got := metric(t, d, "offsetkeeper_store_verify_failed", "kind", "snapshot"); got != 0 {
		t.Errorf("offsetkeeper_store_verify_failed after a check that passed = %v, want 0", got)
	}
	if metric(t, d, "offsetkeeper_store_verify_last_run_timestamp_seconds") <= 0 {
		t.Errorf("no last run time")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d checks, want 3: none after one that passed, on a daily schedule", n)
	}
}
