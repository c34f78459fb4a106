package daemon

// This file is what the journal tells about its own health: how it backs
// off when it cannot start an epoch, and why it is not journaling, for
// /readyz and the metrics.
//
// An epoch starts from a full snapshot just stored, read back from the
// store. When that read fails every time (a credential that may write
// snapshots but not read them, a KMS key that encrypts but may not
// decrypt), asking for the next snapshot at once made a storm: hundreds of
// full snapshots a minute, every run a success. The journal now asks again
// only after a backoff that doubles with each failed start, and says it is
// not journaling until one succeeds.

import (
	"fmt"
	"time"
)

// Backoff of the snapshots the journal asks for after failed epoch starts.
const (
	// epochReask is how long the journal waits for a snapshot it asked
	// for before asking again, while no epoch start has failed (the run
	// may have failed, or been skipped).
	epochReask = time.Minute
	// epochRetryFirst is the wait after the first failed epoch start; it
	// doubles with each one after, up to epochRetryMax.
	epochRetryFirst = 2 * time.Minute
	epochRetryMax   = 30 * time.Minute
	// fencedRetry is how long a journal fenced without leader election
	// waits before it continues from the store again (a term never ends
	// then, see fencedRetryDue).
	fencedRetry = 5 * time.Minute
)

// epochRetry is the wait before the journal asks for a snapshot again
// after fails epoch starts failed in a row.
func epochRetry(fails int) time.Duration {
	if fails <= 0 {
		return epochReask
	}
	d := epochRetryFirst
	for i := 1; i < fails && d < epochRetryMax; i++ {
		d *= 2
	}
	return min(d, epochRetryMax)
}

// startFailed records a failed epoch start from the snapshot id: the
// journal is not journaling until one succeeds.
func (j *journalWriter) startFailed(id string, err error) {
	j.startFails++
	j.d.m.journalStartFails.Inc()
	j.d.m.journalNotRunning.Set(1)
	next := j.clock().Add(epochRetry(j.startFails)).UTC().Format(time.RFC3339)
	j.setTrouble(fmt.Sprintf("not journaling: the epoch could not start from snapshot %s (%d tries in a row; next at %s): %v",
		id, j.startFails, next, err))
}

// started records an epoch started or continued: the journal runs.
func (j *journalWriter) started() {
	j.startFails = 0
	j.d.m.journalNotRunning.Set(0)
	j.setTrouble("")
}

// setTrouble sets why the journal does not journal ("" when it does).
func (j *journalWriter) setTrouble(why string) {
	j.mu.Lock()
	j.trouble = why
	j.mu.Unlock()
}

// troubled returns why the journal does not journal, "" when it does or
// has not had to start yet.
func (j *journalWriter) troubled() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.trouble
}

// ask asks the schedule loop for the snapshot the journal wants, and
// when to ask again if none comes.
func (j *journalWriter) ask() {
	j.askAt = j.clock().Add(epochRetry(j.startFails))
	select {
	case j.d.wantSnapshot <- struct{}{}:
	default:
	}
}

// fencedRetryDue reports whether a journal fenced in term may continue
// from the store again: at once in a new term; without leader election,
// whose one term never ends, after fencedRetry (the other writer may
// have been this daemon's predecessor, whose late write landed).
func (j *journalWriter) fencedRetryDue(term uint64) bool {
	if j.fenced != term {
		return true
	}
	if j.d.Config.Leader.Enabled || j.clock().Before(j.fencedAt.Add(fencedRetry)) {
		return false
	}
	j.log().Info("journal fenced without leader election: continuing from the store again", "term", term)
	j.fenced = 0
	return true
}
