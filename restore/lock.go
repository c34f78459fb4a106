package restore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// CheckRestoreLock is the Refusal.Check of a restore refused because
// another holds the cluster's restore lock (store.Lock).
const CheckRestoreLock = "restore-lock"

// restoreID is the run's ID, made once: its lock's and its intent's.
func (r *run) restoreID() string {
	if r.id == "" {
		r.id = newRestoreID(r.began)
	}
	return r.id
}

// lockCluster takes the restore lock of the cluster restored into before
// the run looks at it, so that a second restore neither plans from a
// state the first is changing nor writes over it: one that finds the lock
// held by a live restore is refused (exit 3, nothing written) naming it,
// unless Force, which takes it over with a warning. A stale lock (its
// process gone) is taken over with a line saying so. A dry run takes no
// lock and notes a restore that holds it. Without a store there is no
// lock.
func (r *run) lockCluster(ctx context.Context) error {
	if r.Store == nil {
		return nil
	}
	cluster, err := r.clusterID(ctx)
	if err != nil {
		return fmt.Errorf("read the cluster id for the restore lock: %w; nothing was written", err)
	}
	if r.req.DryRun {
		cur, found, err := r.Store.Restores().CurrentLock(ctx, cluster)
		if err == nil && found && cur.Stale(time.Now()) == "" {
			fmt.Fprintln(r.Out, wrapLines(fmt.Sprintf("note: %v; this plan may change once it finishes", &store.LockedError{Holder: cur})))
		}
		return nil
	}
	held, err := r.Store.Restores().Lock(ctx, store.RestoreLock{ID: r.restoreID(), Snapshot: r.req.Snapshot.ID, Cluster: cluster}, r.req.Force)
	var locked *store.LockedError
	if errors.As(err, &locked) {
		err = fmt.Errorf("%w; %s", err, r.lockedAdvice())
		r.report.Refusals = []Refusal{{Check: CheckRestoreLock, Reason: err.Error()}}
		return refusal{advise(err, r.req.Again.Run)}
	}
	if err != nil {
		return fmt.Errorf("%w; nothing was written", err)
	}
	r.held = held
	if held.TookOver != "" {
		w := r.Out
		if r.req.Force {
			w = r.Warn
		}
		fmt.Fprintf(w, "took over the restore lock of cluster %s from %s\n", cluster, held.TookOver)
	}
	return nil
}

// lockedAdvice says what to do when another restore holds the lock.
func (r *run) lockedAdvice() string {
	again := "run this restore again"
	if r.req.Again.Run != "" {
		again += ": " + r.req.Again.Run
	}
	return fmt.Sprintf("one restore at a time per cluster, so that neither writes over the other's offsets or plans from a state the other is changing; nothing was written; wait for it to finish, then %s (it plans from the state the other left); a restore whose process was killed on another host holds the lock until %s after its last heartbeat, then the next restore takes it over; --force takes it over at once (only when you know that restore is gone)",
		again, store.LockLease)
}

// clusterID is the id of the Kafka cluster restored into: the brokers',
// or, restoring through Connect alone, the workers'.
func (r *run) clusterID(ctx context.Context) (string, error) {
	if r.Client != nil {
		m, err := kadm.NewClient(r.Client).BrokerMetadata(ctx)
		if err != nil {
			return "", err
		}
		if m.Cluster != "" {
			return m.Cluster, nil
		}
		return "", errors.New("the brokers report no cluster id")
	}
	if r.Connect != nil {
		info, err := r.serverInfo(ctx)
		if err != nil {
			return "", err
		}
		if info.KafkaClusterID != "" {
			return info.KafkaClusterID, nil
		}
	}
	return "", errors.New("no Kafka client and no cluster id from Connect")
}

// unlock releases the lock taken by lockCluster.
func (r *run) unlock(ctx context.Context) {
	if r.held == nil {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := r.held.Release(dctx); err != nil {
		r.Log.Warn("release the restore lock", "restore_id", r.id, "error", err)
	}
}
