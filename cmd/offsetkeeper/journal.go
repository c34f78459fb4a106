package main

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// journalTailer is the daemon's journal reader over cl.
func journalTailer(cl *kgo.Client, opts snapshot.Options) *daemon.Tailer {
	return &daemon.Tailer{
		New: func(state *snapshot.Snapshot, seed *snapshot.TailSeed, positions []snapshot.EpochTopic, observed time.Time) *snapshot.Tail {
			return snapshot.NewTail(cl, opts, state, seed, positions, observed)
		},
		Topics: func(ctx context.Context, snap *snapshot.Snapshot) ([]snapshot.EpochTopic, error) {
			return snapshot.EpochTopicsOf(ctx, cl, opts, snap)
		},
	}
}
