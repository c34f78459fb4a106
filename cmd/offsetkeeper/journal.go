package main

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// journalTailer is the daemon's journal reader over cl.
func journalTailer(cl *kgo.Client, opts capture.Options) *daemon.Tailer {
	return &daemon.Tailer{
		New: func(state *snapshot.Snapshot, seed *capture.TailSeed, positions []journal.EpochTopic, observed time.Time) *capture.Tail {
			return capture.NewTail(cl, opts, state, seed, positions, observed)
		},
		Topics: func(ctx context.Context, snap *snapshot.Snapshot) ([]journal.EpochTopic, error) {
			return capture.EpochTopicsOf(ctx, cl, opts, snap)
		},
	}
}
