package main

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// topicGone explains a worker topic that does not exist although the
// store has snapshots of it (see snapshot.Gone); other errors, and a store
// that cannot be listed, leave err as it is.
func topicGone(ctx context.Context, st *store.Store, cl *kgo.Client, err error, advise capture.GoneAdvice) error {
	if !errors.Is(err, capture.ErrTopicMissing) {
		return err
	}
	infos, lerr := st.Snapshots().List(ctx)
	if lerr != nil {
		return err
	}
	cluster := ""
	if md, merr := kadm.NewClient(cl).BrokerMetadata(ctx); merr == nil {
		cluster = md.Cluster
	}
	latest := capture.LatestFull(infos)
	return capture.Gone(err, latest, store.HistoryTopics(ctx, st, latest), cluster, advise)
}

// topicGoneJournal is topicGone advising, when the journal recorded the
// topic's deletion after the latest full snapshot, the restore --at just
// before it (daemon.GoneAdvice), with the settings of s.
func topicGoneJournal(ctx context.Context, st *store.Store, cl *kgo.Client, err error, s restore.CommandSettings) error {
	if !errors.Is(err, capture.ErrTopicMissing) {
		return err
	}
	infos, lerr := st.Snapshots().List(ctx)
	if lerr != nil {
		return err
	}
	if ids, cerr := st.Snapshots().Clusters(ctx); cerr == nil && len(ids) > 1 {
		// A store shared with another cluster's daemon: this cluster's journal.
		if md, merr := kadm.NewClient(cl).BrokerMetadata(ctx); merr == nil {
			s.FromCluster = md.Cluster
		}
	}
	return topicGone(ctx, st, cl, err, daemon.GoneAdvice(ctx, st, s, capture.LatestFull(infos)))
}
