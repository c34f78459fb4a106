package daemon

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// ownCluster caches the ID of the daemon's cluster, read once from the
// brokers' metadata.
type ownCluster struct {
	mu sync.Mutex
	id string
}

// clusterID is the ID of the daemon's cluster, "" without a Kafka client
// or while the brokers do not answer (asked again next time).
func (d *Daemon) clusterID(ctx context.Context) string {
	d.own.mu.Lock()
	defer d.own.mu.Unlock()
	if d.own.id == "" && d.Kafka != nil {
		if md, err := kadm.NewClient(d.Kafka).BrokerMetadata(ctx); err == nil {
			d.own.id = md.Cluster
		}
	}
	return d.own.id
}

// fromCluster is the cluster the daemon's printed --at commands read
// their moment from (--from-cluster): its own, when the store holds
// snapshots of more than one cluster (a standby's daemon shares it after
// a failover, docs/standby.md) and restore would otherwise have to
// choose; "" in a store of one cluster, whose commands stay as they were.
func (d *Daemon) fromCluster(ctx context.Context) string {
	if d.Store == nil {
		return ""
	}
	ids, err := d.Store.Snapshots().Clusters(ctx)
	if err != nil || len(ids) < 2 {
		return ""
	}
	return d.clusterID(ctx)
}

// commands are Config.Commands for the commands printed now: with
// --from-cluster in a shared store (fromCluster).
func (d *Daemon) commands(ctx context.Context) restore.CommandSettings {
	c := d.Config.Commands
	c.FromCluster = d.fromCluster(ctx)
	return c
}
