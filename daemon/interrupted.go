package daemon

import (
	"context"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// recoverInterrupted looks, before each snapshot run, for restores that
// did not finish (killed, interrupted, failed part way) and writes back
// what their aborted transactions left visible to workers without
// exactly-once source support, as every command does; it logs what it
// found (restore.RecoverInterrupted logs each restore). A failure to look
// is logged and the run goes on: the snapshot reads read_committed, which
// an aborted transaction never changes.
func (d *Daemon) recoverInterrupted(ctx context.Context) {
	if d.Kafka == nil || d.Store == nil {
		return
	}
	if _, err := restore.RecoverInterrupted(ctx, restore.Recovery{Client: d.Kafka, Store: d.Store, Log: d.log()}); err != nil {
		d.log().Warn("look for restores that did not finish", "error", err)
	}
}
