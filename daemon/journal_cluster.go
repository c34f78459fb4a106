package daemon

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// ownNewest is the newest epoch of l with its epoch file whose base
// snapshot is of this daemon's cluster. A store shared with the daemon of
// another cluster (a standby's after a failover, docs/standby.md) holds
// that cluster's epochs too: continued here, one would record this
// cluster's records, read from the other's positions, as the other's
// state. Without this cluster's id, or the base's, an epoch is taken as
// this cluster's, as before a store was shared.
func (j *journalWriter) ownNewest(ctx context.Context, l *journal.JournalListing) *journal.EpochInfo {
	var mine string
	if j.d.Kafka != nil {
		if md, err := kadm.NewClient(j.d.Kafka).BrokerMetadata(ctx); err == nil {
			mine = md.Cluster
		}
	}
	of := map[string]string{}
	if mine != "" {
		if infos, err := j.d.Store.Snapshots().List(ctx); err == nil {
			for _, i := range infos {
				of[i.ID] = i.ClusterID
			}
		}
	}
	var newest *journal.EpochInfo
	for i := range l.Epochs {
		e := &l.Epochs[i]
		if !e.HasFile || mine != "" && of[e.ID] != "" && of[e.ID] != mine {
			continue
		}
		newest = e
	}
	return newest
}
