package web

import (
	"context"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// cluster is Source.Cluster's answer, "" without one.
func (s *Server) cluster(ctx context.Context) string {
	if s.src.Cluster == nil {
		return ""
	}
	return s.src.Cluster(ctx)
}

// stateAt is the state at at of Source.Cluster's cluster, as the
// commands the page prints read it (--from-cluster); StateAt's without one.
func (s *Server) stateAt(ctx context.Context, at time.Time) (*snapshot.Snapshot, *journal.StateInfo, error) {
	if id := s.cluster(ctx); id != "" {
		return s.src.Store.Journal().StateAtFor(ctx, at, store.ClusterPick{From: id})
	}
	return s.src.Store.Journal().StateAt(ctx, at)
}

// commands are Source.Commands with the cluster they read (--from-cluster).
func (s *Server) commands(ctx context.Context) restore.CommandSettings {
	c := s.src.Commands
	c.FromCluster = s.cluster(ctx)
	return c
}

// epochsOf keeps the journal epochs of Source.Cluster's cluster (their
// base snapshot's, in infos): the page's history, plots and events, are
// its cluster's. Nil (every epoch) without one; an epoch whose base names
// no cluster or is gone is kept.
func (s *Server) epochsOf(ctx context.Context, infos []snapshot.Info) func(epoch string) bool {
	id := s.cluster(ctx)
	if id == "" {
		return nil
	}
	of := make(map[string]string, len(infos))
	for _, i := range infos {
		of[i.ID] = i.ClusterID
	}
	return func(epoch string) bool { return of[epoch] == "" || of[epoch] == id }
}
