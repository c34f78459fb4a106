package daemon

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// replica is one daemon of an HA pair and how many snapshots it took.
type replica struct {
	name  string
	d     *Daemon
	r     *running
	calls atomic.Int32
}

func (rp *replica) leading(t *testing.T) bool {
	return metric(t, rp.d, "offsetkeeper_leader") == 1
}

func newReplica(t *testing.T, name string, c *kfake.Cluster, st *store.Store, session time.Duration) *replica {
	rp := &replica{name: name}
	rp.d = &Daemon{
		Config: Config{
			Schedule: "@every 1s",
			Leader: LeaderConfig{
				Enabled:        true,
				Group:          DefaultLeaderGroup("mem://shared-test-store"),
				SessionTimeout: session,
				ClientOpts:     []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)},
			},
		},
		Store: st,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			rp.calls.Add(1)
			return okSnapshot(ctx)
		},
	}
	rp.r = start(t, rp.d)
	return rp
}

// leaderOf waits until exactly one replica leads and returns it and the other.
func leaderOf(t *testing.T, a, b *replica) (leader, standby *replica) {
	t.Helper()
	waitFor(t, "one leader", func() bool { return a.leading(t) != b.leading(t) })
	if a.leading(t) {
		return a, b
	}
	return b, a
}

func TestLeaderElectionHandover(t *testing.T) {
	t.Parallel()
	c := testkit.Kfake(t, kfake.NumBrokers(3))
	st := memStore(t)
	a := newReplica(t, "a", c, st, 0)
	b := newReplica(t, "b", c, st, 0)
	leader, standby := leaderOf(t, a, b)

	waitFor(t, "3 snapshots by the leader", func() bool { return leader.calls.Load() >= 3 })
	if n := standby.calls.Load(); n != 0 {
		t.Fatalf("standby %s took %d snapshots while %s led", standby.name, n, leader.name)
	}
	if got, want := int32(len(listIDs(t, st))), leader.calls.Load(); got < want-1 || got > want {
		t.Errorf("store holds %d snapshots, leader took %d", got, want)
	}

	// The leader shuts down cleanly: it leaves the group and the standby
	// takes over at once, snapshotting as soon as it leads.
	leader.r.stop(t)
	before := len(listIDs(t, st))
	waitFor(t, standby.name+" to lead", func() bool { return standby.leading(t) })
	waitFor(t, standby.name+" to snapshot", func() bool { return standby.calls.Load() >= 1 })
	waitFor(t, "the store to grow", func() bool { return len(listIDs(t, st)) > before })
	if metric(t, leader.d, "offsetkeeper_leader") != 0 {
		t.Errorf("stopped replica still reports offsetkeeper_leader 1")
	}
	if !strings.Contains(standby.r.logs.String(), "leading: this daemon takes the snapshots") {
		t.Errorf("takeover not logged:\n%s", standby.r.logs)
	}
}

// A leader that dies without leaving the group (kill -9, a network
// partition) is evicted after the session timeout and the standby takes
// over.
func TestLeaderElectionLeaderDies(t *testing.T) {
	t.Parallel()
	c := testkit.Kfake(t, kfake.NumBrokers(3), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	st := memStore(t)
	const session = time.Second
	a := newReplica(t, "a", c, st, session)
	b := newReplica(t, "b", c, st, session)
	leader, standby := leaderOf(t, a, b)
	waitFor(t, "a snapshot by the leader", func() bool { return leader.calls.Load() >= 1 })

	// Swallow the dying leader's LeaveGroup, as if its process was killed:
	// the coordinator only notices when its heartbeats stop.
	var swallowed atomic.Bool
	c.ControlKey(int16(kmsg.LeaveGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
		swallowed.Store(true)
		return req.ResponseKind(), nil, true
	})
	leader.r.stop(t)
	if !swallowed.Load() {
		t.Fatal("the leader's LeaveGroup was not intercepted")
	}
	waitFor(t, standby.name+" to lead after the session timeout", func() bool { return standby.leading(t) })
	waitFor(t, standby.name+" to snapshot", func() bool { return standby.calls.Load() >= 1 })
}

func TestDefaultLeaderGroup(t *testing.T) {
	a, b := DefaultLeaderGroup("s3://bucket/prod"), DefaultLeaderGroup("s3://bucket/staging")
	if a == b || !strings.HasPrefix(a, "offsetkeeper-leader-") || a != DefaultLeaderGroup("s3://bucket/prod") {
		t.Errorf("DefaultLeaderGroup: %q, %q", a, b)
	}
}
