package main

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// topicGone explains a worker topic that does not exist although the
// store has snapshots of it (see snapshot.Gone); other errors, and a store
// that cannot be listed, leave err as it is.
func topicGone(ctx context.Context, store *snapshot.Store, cl *kgo.Client, err error) error {
	if !errors.Is(err, snapshot.ErrTopicMissing) {
		return err
	}
	infos, lerr := store.List(ctx)
	if lerr != nil {
		return err
	}
	cluster := ""
	if md, merr := kadm.NewClient(cl).BrokerMetadata(ctx); merr == nil {
		cluster = md.Cluster
	}
	latest := snapshot.LatestFull(infos)
	return snapshot.Gone(err, latest, snapshot.HistoryTopics(ctx, store, latest), cluster)
}
