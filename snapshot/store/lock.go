package store

// This file is the restore lock: one restore at a time per Kafka cluster
// among the restores that share a store. The lock of a cluster is the
// newest of its generations,
//
//	locks/<cluster ID>/<generation, 20 digits>.json
//
// each written once with IfNotExist (atomic across processes, a local
// store's too: see localclaim.go), so of two restores that both find the
// cluster free, or both find its lock stale, exactly one writes the next
// generation. The holder renews its generation's heartbeat while it runs
// and deletes it when done. A lock is stale when its process is gone (same
// host, its PID not alive) or its heartbeat is older than LockLease
// (another host, whose process cannot be asked): the next restore takes it
// over by writing the next generation.
//
// Why a lock object and not only Kafka's transactional id: the restore
// writes each offsets topic in a transaction of a fixed transactional id,
// and the broker fences the older producer of an id when a newer one
// initializes it. That fences the restore that started first (the newer
// one wins), it covers only the write, not the stop, create, verify and
// resume around it, and it carries no name, host or start time to report.
// A lock in Kafka itself (an open transaction on a lock topic) would need
// a topic of ours in the operator's cluster. The store is what every
// restore of a fleet already writes (its undo snapshot, its intent) and
// holds what the refusal must say; restores that use different stores
// are still caught at the write by the open-transaction check and the
// fencing.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

const (
	lockPrefix = "locks/"
	lockFormat = "offsetkeeper-restore-lock"
)

// LockLease is how long a restore lock stays held after its last
// heartbeat; its holder renews it every LockLease/6.
var LockLease = 2 * time.Minute

// ErrLocked is the error of Lock when another restore holds the cluster
// (a *LockedError).
var ErrLocked = errors.New("another restore is running against this cluster")

// RestoreLock says which restore holds a cluster.
type RestoreLock struct {
	Format string `json:"format"`
	// ID is the holding restore's ID (its intent's), Snapshot what it
	// restores, Cluster the Kafka cluster ID.
	ID        string    `json:"id"`
	Snapshot  string    `json:"snapshot"`
	Cluster   string    `json:"cluster_id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`

	generation uint64
}

// Stale reports why l no longer holds its cluster at now ("" if it does):
// its process on this host is gone, or its heartbeat is older than
// LockLease.
func (l RestoreLock) Stale(now time.Time) string {
	host, _ := os.Hostname()
	switch {
	case l.Host == host && l.PID > 0 && !processAlive(l.PID):
		return fmt.Sprintf("its process %d on this host is gone", l.PID)
	case now.Sub(l.Heartbeat) > LockLease:
		return fmt.Sprintf("its last heartbeat was %s ago (more than %s)", now.Sub(l.Heartbeat).Round(time.Second), LockLease)
	}
	return ""
}

// processAlive reports whether process pid exists (signal 0; a process of
// another user answers EPERM, and exists).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// LockedError is Lock's refusal: Holder holds the cluster.
type LockedError struct{ Holder RestoreLock }

func (e *LockedError) Error() string {
	h := e.Holder
	return fmt.Sprintf("%v: restore %s (snapshot %s) on host %s, pid %d, started %s, last heartbeat %s",
		ErrLocked, h.ID, h.Snapshot, h.Host, h.PID, h.Started.UTC().Format(time.RFC3339), h.Heartbeat.UTC().Format(time.RFC3339))
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// Held is a restore lock this process holds; Release ends it.
type Held struct {
	s    *Store
	key  string
	lock RestoreLock
	stop chan struct{}
	done chan struct{}
	once sync.Once
	// TookOver names the stale lock it replaced ("" if none), and why.
	TookOver string
}

func lockDir(cluster string) string { return lockPrefix + cluster + "/" }

func lockKey(cluster string, gen uint64) string {
	return fmt.Sprintf("%s%020d.json", lockDir(cluster), gen)
}

// CurrentLock returns the lock of cluster (its newest generation), and
// false when there is none.
func (h Restores) CurrentLock(ctx context.Context, cluster string) (RestoreLock, bool, error) {
	s := h.s
	it := s.bucket.List(&blob.ListOptions{Prefix: lockDir(cluster)})
	var gens []uint64
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return RestoreLock{}, false, fmt.Errorf("list restore locks%s: %w", s.in(), describeBucketError(err))
		}
		name, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, lockDir(cluster)), ".json")
		if g, err := strconv.ParseUint(name, 10, 64); ok && err == nil && !obj.IsDir {
			gens = append(gens, g)
		}
	}
	slices.Sort(gens)
	for i := len(gens) - 1; i >= 0; i-- {
		data, err := s.bucket.ReadAll(ctx, lockKey(cluster, gens[i]))
		if gcerrors.Code(err) == gcerrors.NotFound {
			continue // released while listed
		}
		if err != nil {
			return RestoreLock{}, false, fmt.Errorf("read restore lock%s: %w", s.in(), describeBucketError(err))
		}
		var l RestoreLock
		if err := json.Unmarshal(data, &l); err != nil || l.Format != lockFormat {
			// Half written by a process killed on a store without
			// atomic writes, or foreign: no holder to wait for.
			l = RestoreLock{Format: lockFormat, ID: "(unreadable lock " + lockKey(cluster, gens[i]) + ")"}
		}
		l.generation = gens[i]
		return l, true, nil
	}
	return RestoreLock{}, false, nil
}

// Lock takes the restore lock of l.Cluster for the restore l names (ID,
// Snapshot; Host, PID and the times are set here). It holds no command
// line: one may carry secrets. A lock held
// by another live restore is a *LockedError, unless force, which takes it
// over all the same. A stale one is taken over (Held.TookOver says so).
// The lock is renewed until Release.
func (h Restores) Lock(ctx context.Context, l RestoreLock, force bool) (*Held, error) {
	s := h.s
	if l.Cluster == "" || strings.ContainsAny(l.Cluster, "/\\") {
		return nil, fmt.Errorf("take the restore lock: bad cluster id %q", l.Cluster)
	}
	l.Format = lockFormat
	l.Host, _ = os.Hostname()
	l.PID = os.Getpid()
	now := time.Now().UTC()
	l.Started, l.Heartbeat = now, now
	for range 5 {
		cur, found, err := h.CurrentLock(ctx, l.Cluster)
		if err != nil {
			return nil, err
		}
		tookOver := ""
		if found {
			why := cur.Stale(time.Now())
			if why == "" && !force {
				return nil, &LockedError{Holder: cur}
			}
			if why == "" {
				why = "taken over with --force while it runs"
			}
			tookOver = fmt.Sprintf("restore %s (host %s, pid %d, started %s): %s", cur.ID, cur.Host, cur.PID, cur.Started.UTC().Format(time.RFC3339), why)
		}
		gen := cur.generation + 1
		data, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		err = s.putOnce(ctx, lockKey(l.Cluster, gen), pinType, append(data, '\n'))
		if errors.Is(err, snapshot.ErrExists) {
			// Another restore took this generation first (its object may
			// not be listed yet): look again.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("take the restore lock of cluster %s: %w", l.Cluster, err)
		}
		if found {
			// Older generations are no one's lock any more.
			_ = s.deleteKey(ctx, lockKey(l.Cluster, cur.generation))
		}
		l.generation = gen
		h := &Held{s: s, key: lockKey(l.Cluster, gen), lock: l, stop: make(chan struct{}), done: make(chan struct{}), TookOver: tookOver}
		go h.renew()
		return h, nil
	}
	return nil, fmt.Errorf("take the restore lock of cluster %s: other restores kept taking it first, or a process killed while taking it left %s claimed; try again (a claim without its lock object on a local store is removed by hand)", l.Cluster, lockDir(l.Cluster))
}

// renew rewrites the heartbeat every LockLease/6 until Release.
func (h *Held) renew() {
	defer close(h.done)
	t := time.NewTicker(LockLease / 6)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.lock.Heartbeat = time.Now().UTC()
		data, err := json.Marshal(h.lock)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), LockLease/6)
		// A failed renewal is tried again at the next tick; the lease is
		// six of them.
		_ = h.s.bucket.WriteAll(ctx, h.key, append(data, '\n'), &blob.WriterOptions{ContentType: pinType})
		cancel()
	}
}

// Lock is the lock held.
func (h *Held) Lock() RestoreLock { return h.lock }

// Release stops the renewals and deletes the lock; calling it again does
// nothing.
func (h *Held) Release(ctx context.Context) error {
	var err error
	h.once.Do(func() {
		close(h.stop)
		<-h.done
		if derr := h.s.deleteKey(ctx, h.key); derr != nil && gcerrors.Code(derr) != gcerrors.NotFound {
			err = fmt.Errorf("release the restore lock %s%s: %w", h.key, h.s.in(), derr)
		}
	})
	return err
}
