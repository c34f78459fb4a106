package daemon

// This file is the snapshot run's advice when an offsets topic is gone and
// the journal recorded its deletion: the restore of the state just before
// the deletion, not of the latest full snapshot, which can be up to a
// schedule older (an hour by default) and would rewind every source
// offset committed since it to where it stood then.

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// goneAdvice is GoneAdvice with the daemon's store and commands, when
// its journal is on.
func (d *Daemon) goneAdvice(ctx context.Context, latest *snapshot.Info) capture.GoneAdvice {
	if d.Config.Journal.Interval <= 0 {
		return d.Config.Commands.GoneAdvice
	}
	return GoneAdvice(ctx, d.Store, d.commands(ctx), latest)
}

// GoneAdvice is the restore capture.Gone prints for latest: the dry run
// of restore --at the moment just before the journal in st saw the
// offsets topic deleted, for the connectors whose keys it held, when the
// journal recorded that after latest was taken; else the restore of
// latest (cmds.GoneAdvice).
func GoneAdvice(ctx context.Context, st *store.Store, cmds restore.CommandSettings, latest *snapshot.Info) capture.GoneAdvice {
	if latest == nil {
		return cmds.GoneAdvice
	}
	evs, err := st.Journal().Events(ctx, latest.CreatedAt)
	if err != nil {
		return cmds.GoneAdvice
	}
	mine := ofCluster(ctx, st, cmds.FromCluster)
	var before time.Time
	var connectors []string
	for _, e := range evs {
		if e.Kind != snapshot.EventOffsetsTopicDeleted || e.Before.Before(latest.CreatedAt) || !mine(e.Epoch) {
			continue
		}
		if before.IsZero() || e.Before.Before(before) {
			before = e.Before
		}
		if !slices.Contains(connectors, e.Connector) {
			connectors = append(connectors, e.Connector)
		}
	}
	if before.IsZero() {
		return cmds.GoneAdvice
	}
	slices.Sort(connectors)
	return func(_ string, other bool) string {
		dry := cmds.At(before, connectors...).DryRun
		if other {
			dry = strings.TrimSuffix(dry, " --dry-run") + " --allow-other-cluster --dry-run"
		}
		return dry
	}
}

// ofCluster reports whether a journal epoch is of cluster id (its base
// snapshot's): in a store shared with another cluster's daemon, that
// cluster's events are not this one's. Every epoch is, for id "" or an
// epoch whose base names no cluster.
func ofCluster(ctx context.Context, st *store.Store, id string) func(epoch string) bool {
	if id == "" {
		return func(string) bool { return true }
	}
	of := map[string]string{}
	if infos, err := st.Snapshots().List(ctx); err == nil {
		for _, i := range infos {
			of[i.ID] = i.ClusterID
		}
	}
	return func(epoch string) bool { return of[epoch] == "" || of[epoch] == id }
}
