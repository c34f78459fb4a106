package store

// This file resolves a moment in a store shared by the daemons of two
// clusters (a standby's after a failover, a failback: docs/standby.md).
// Each daemon journals its own cluster in epochs whose base snapshot
// carries the cluster's ID, and their spans overlap: the state at a
// moment is a cluster's, and StateAt alone takes the newest epoch that
// covers it, whichever cluster's it is.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

var (
	// ErrAmbiguousCluster: the journal epochs of more than one cluster
	// cover a moment and nothing tells which cluster's state is meant
	// (see AmbiguousClusterError).
	ErrAmbiguousCluster = errors.New("the moment is in the journal of more than one cluster")
	// ErrNoSuchCluster: the cluster chosen (ClusterPick.From) has no
	// full snapshot in the store.
	ErrNoSuchCluster = errors.New("no full snapshot of that cluster in the store")
)

// ClusterPick says whose state StateAtFor reads.
type ClusterPick struct {
	// From is the cluster chosen explicitly (--from-cluster): only its
	// epochs and snapshots are read.
	From string
	// Live is the ID of the cluster the command talks to ("" when it talks
	// to none): its epochs are read when they cover the moment.
	Live string
}

// ClusterSpans is one cluster's journal epochs in a store: its ID and the
// span of each epoch whose base snapshot is stored, oldest first.
type ClusterSpans struct {
	Cluster string
	Spans   []snapshot.Coverage
}

// Describe is the spans as "FROM to TO, FROM to TO".
func (c ClusterSpans) Describe() string { return journal.DescribeCoverage(c.Spans) }

// AmbiguousClusterError is the refusal of a moment that the journal
// epochs of several clusters cover, with no cluster chosen and none of
// them the live one. It wraps ErrAmbiguousCluster.
type AmbiguousClusterError struct {
	At time.Time
	// Live is the cluster the command talks to, "" when none.
	Live string
	// Clusters are those whose epochs cover At, by ID.
	Clusters []ClusterSpans
}

func (e *AmbiguousClusterError) Error() string {
	var parts []string
	for _, c := range e.Clusters {
		parts = append(parts, fmt.Sprintf("cluster %s (journal %s)", c.Cluster, c.Describe()))
	}
	live := "the command talks to no cluster"
	if e.Live != "" {
		live = fmt.Sprintf("the live cluster, %s, is none of them", e.Live)
	}
	return fmt.Sprintf("%v: %s is covered by the journal epochs of %d clusters: %s, and %s; choose one with --from-cluster ID",
		ErrAmbiguousCluster, snapshot.FmtTime(e.At), len(e.Clusters), strings.Join(parts, "; "), live)
}

// Unwrap returns ErrAmbiguousCluster.
func (e *AmbiguousClusterError) Unwrap() error { return ErrAmbiguousCluster }

// StateAtFor is StateAt in a store the daemons of several clusters may
// share: the state at at of one cluster. That cluster is pick.From when
// set; else, when the store holds snapshots of one cluster only, StateAt's
// (a disaster recovery into a new cluster reads the old one's, as
// always); else the live cluster's when its epochs cover at, or the only
// cluster's whose epochs do. Epochs of several clusters covering at, none
// of them the live cluster's, is an *AmbiguousClusterError. With no epoch
// covering at, the newest full snapshot at or before it is taken (as
// StateAt's fallback) of the live cluster, or of the only cluster that
// has one; of several, an *AmbiguousClusterError too.
func (h Journal) StateAtFor(ctx context.Context, at time.Time, pick ClusterPick) (*snapshot.Snapshot, *journal.StateInfo, error) {
	infos, err := h.s.Snapshots().List(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids := clusterIDs(infos)
	if pick.From != "" {
		if !slices.Contains(ids, pick.From) {
			return nil, nil, fmt.Errorf("%w: --from-cluster %s: the store holds full snapshots of %s", ErrNoSuchCluster, pick.From, describeIDs(ids))
		}
		return h.stateAt(ctx, at, pick.From)
	}
	if len(ids) <= 1 {
		return h.StateAt(ctx, at)
	}
	cover, err := h.clustersAt(ctx, at)
	if err != nil {
		return nil, nil, err
	}
	if len(cover) == 0 {
		// No journal covers at: whose full snapshot falls back.
		var had []ClusterSpans
		for _, id := range ids {
			if slices.ContainsFunc(infos, func(i snapshot.Info) bool {
				return i.ClusterID == id && i.Kind == snapshot.KindFull && !i.CreatedAt.After(at)
			}) {
				had = append(had, ClusterSpans{Cluster: id})
			}
		}
		if len(had) <= 1 {
			return h.StateAt(ctx, at)
		}
		cover = had
	}
	for _, c := range cover {
		if c.Cluster == pick.Live {
			return h.stateAt(ctx, at, c.Cluster)
		}
	}
	if len(cover) == 1 {
		return h.stateAt(ctx, at, cover[0].Cluster)
	}
	return nil, nil, &AmbiguousClusterError{At: at, Live: pick.Live, Clusters: cover}
}

// Clusters returns the IDs of the clusters the store holds full
// snapshots of, sorted: more than one is a store shared by their daemons
// (a moment then needs a cluster: Journal.StateAtFor).
func (h Snapshots) Clusters(ctx context.Context) ([]string, error) {
	infos, err := h.List(ctx)
	if err != nil {
		return nil, err
	}
	return clusterIDs(infos), nil
}

// clustersAt returns the clusters whose journal epochs cover at, by ID,
// each with all its epochs' spans. An epoch covers at from its base
// snapshot to its last segment, or, for a moment after that, to what its
// flush mark proves; a cluster's newest epoch up to now while its daemon
// still flushes it (as StateAt judges them).
func (h Journal) clustersAt(ctx context.Context, at time.Time) ([]ClusterSpans, error) {
	s := h.s
	infos, err := s.Snapshots().List(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.Journal().List(ctx)
	if err != nil {
		return nil, err
	}
	cov := journal.CoverageOf(infos, l)
	var out []ClusterSpans
	now := time.Now()
	for _, id := range clusterIDs(infos) {
		mine := slices.DeleteFunc(covOf(slices.Clone(cov), infos, id), func(c snapshot.Coverage) bool { return !c.BaseExists })
		if len(mine) == 0 {
			continue
		}
		if slices.ContainsFunc(mine, func(c snapshot.Coverage) bool {
			return s.covers(ctx, l, c, c.Epoch == mine[len(mine)-1].Epoch, at, now)
		}) {
			// The newest epoch's span as far as its flush mark proves: a
			// journal with nothing new writes a segment only each
			// heartbeat, and its last segment would understate it.
			last := &mine[len(mine)-1]
			if e, ok := l.Epoch(last.Epoch); ok {
				last.To = s.provenTo(ctx, e, *last)
			}
			out = append(out, ClusterSpans{Cluster: id, Spans: mine})
		}
	}
	return out, nil
}

// covers reports whether epoch c (its cluster's newest when newest)
// covers at, as StateAt judges it.
func (s *Store) covers(ctx context.Context, l *journal.JournalListing, c snapshot.Coverage, newest bool, at, now time.Time) bool {
	if c.From.After(at) {
		return false
	}
	if !at.After(c.To) {
		return true
	}
	e, ok := l.Epoch(c.Epoch)
	if !ok {
		return false
	}
	if newest && c.Broken == "" {
		return s.flushedLately(ctx, e, c, at, now) == nil
	}
	return !at.After(s.provenTo(ctx, e, c))
}

// clusterIDs are the distinct non-empty cluster IDs of the full
// snapshots of infos, sorted: those a state at a moment can be of. A
// restore's undo snapshot is of the cluster restored into, which a
// disaster recovery's is not.
func clusterIDs(infos []snapshot.Info) []string {
	var ids []string
	for _, i := range infos {
		if i.ClusterID != "" && i.EffectiveKind() == snapshot.KindFull && !slices.Contains(ids, i.ClusterID) {
			ids = append(ids, i.ClusterID)
		}
	}
	slices.Sort(ids)
	return ids
}

func describeIDs(ids []string) string {
	if len(ids) == 0 {
		return "no cluster"
	}
	return "cluster " + strings.Join(ids, ", cluster ")
}

// ofCluster reports whether a snapshot of cluster id is read for the
// state of cluster only ("": every cluster's). A snapshot that names no
// cluster is anyone's, as it was before a store was shared.
func ofCluster(id, only string) bool {
	return only == "" || id == "" || id == only
}

// infosOf is infos of cluster only (see ofCluster).
func infosOf(infos []snapshot.Info, only string) []snapshot.Info {
	if only == "" {
		return infos
	}
	return slices.DeleteFunc(slices.Clone(infos), func(i snapshot.Info) bool { return !ofCluster(i.ClusterID, only) })
}

// covOf is cov of the epochs of cluster only (see ofCluster). An epoch
// whose base snapshot is gone has no cluster to tell: it stays, so that a
// moment inside it is refused as such rather than read from an older
// snapshot.
func covOf(cov []snapshot.Coverage, infos []snapshot.Info, only string) []snapshot.Coverage {
	if only == "" {
		return cov
	}
	of := make(map[string]string, len(infos))
	for _, i := range infos {
		of[i.ID] = i.ClusterID
	}
	return slices.DeleteFunc(cov, func(c snapshot.Coverage) bool {
		id, ok := of[c.Epoch]
		return ok && !ofCluster(id, only)
	})
}
