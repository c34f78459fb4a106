package main

import (
	"context"

	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// epochClusters maps each journal epoch to its cluster's ID (its base
// snapshot's) when the store holds snapshots of more than one cluster
// (the daemons of a primary and its standby share it after a failover):
// an event's undo then reads its moment from the journal of the cluster
// that caught it (--from-cluster). Nil in a store of one cluster, whose
// commands stay as they were.
func epochClusters(ctx context.Context, st *store.Store) (map[string]string, error) {
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	ids := map[string]bool{}
	for _, i := range infos {
		out[i.ID] = i.ClusterID
		if i.ClusterID != "" {
			ids[i.ClusterID] = true
		}
	}
	if len(ids) < 2 {
		return nil, nil
	}
	return out, nil
}
