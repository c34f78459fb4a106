package reliability

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// fired counts the requests an injected fault acted on; a fault that never
// fired proves nothing, so every test checks it.
type fired struct{ n atomic.Int64 }

func (f *fired) hit()         { f.n.Add(1) }
func (f *fired) count() int64 { return f.n.Load() }

// control installs a kfake control on key (-1: every request) that calls
// act on each request until act has marked n of them with f.hit (n < 0:
// for as long as the test runs). act returns what a control returns;
// handled false lets the broker answer normally. The control drops itself
// once done or once the test ends.
func control(t testing.TB, kc *kfake.Cluster, key kmsg.Key, n int, act func(req kmsg.Request, f *fired) (kmsg.Response, error, bool)) *fired {
	t.Helper()
	f := &fired{}
	var active atomic.Bool
	active.Store(true)
	t.Cleanup(func() { active.Store(false) })
	kc.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if !active.Load() || (n >= 0 && f.count() >= int64(n)) {
			kc.DropControl()
			return nil, nil, false
		}
		resp, err, handled := act(req, f)
		if handled {
			kc.KeepControl()
		}
		return resp, err, handled
	})
	return f
}

// dropConnection is a control action that closes the client's connection
// instead of answering, as a broker that crashes or a network blip does.
func dropConnection(_ kmsg.Request, f *fired) (kmsg.Response, error, bool) {
	f.hit()
	return nil, errors.New("injected: connection dropped"), true
}

// topicNames maps the topic IDs of the cluster to their names: Fetch
// requests name topics by ID only. A control function cannot ask the
// cluster itself (the cluster waits for it), so this is read before.
func topicNames(t testing.TB, c *cluster) map[[16]byte]string {
	t.Helper()
	md, err := c.adm.Metadata(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[[16]byte]string{}
	for _, td := range md.Topics {
		names[td.ID] = td.Topic
	}
	return names
}

// connectCLIClient opens a Kafka client the way the CLI does.
func connectCLIClient(t testing.TB, c *cluster, retry time.Duration) *kgo.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafkaconf.Config{Brokers: c.kc.ListenAddrs(), RetryTimeout: retry}.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestSnapshotBrokerFaultsRetried: transient broker faults during a
// snapshot (errors a broker answers while leadership or coordinators move,
// dropped connections, a partition whose leader changes mid-read) are
// retried, and the snapshot stored is identical to one taken without
// faults.
func TestSnapshotBrokerFaultsRetried(t *testing.T) {
	t.Parallel() // mostly waits on retries
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	want := canonical(t, c.capture())
	off := connectdemo.DefaultOffsetsTopic

	for _, tc := range []struct {
		name   string
		inject func(t *testing.T) func() int64 // returns how often the fault fired
	}{
		{"fetch NOT_LEADER_FOR_PARTITION", func(t *testing.T) func() int64 {
			h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: off, Err: kerr.NotLeaderForPartition, Count: 3})
			t.Cleanup(h.Remove)
			return func() int64 { return int64(h.Hits()) }
		}},
		{"fetch UNKNOWN_TOPIC_OR_PARTITION", func(t *testing.T) func() int64 {
			h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: off, Err: kerr.UnknownTopicOrPartition, Count: 2})
			t.Cleanup(h.Remove)
			return func() int64 { return int64(h.Hits()) }
		}},
		{"fetch connection dropped", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.Fetch, 3, dropConnection).count
		}},
		// Regression: kgo does not retry a connection closed on its
		// first request by default (it suspects missing SASL), and one
		// dropped connection failed the snapshot ("is SASL missing?").
		{"metadata connection dropped", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.Metadata, 2, dropConnection).count
		}},
		{"a broker restarts (every connection to it dropped once)", func(t *testing.T) func() int64 {
			var seen sync.Map // first request per key
			return control(t, c.kc, -1, 6, func(req kmsg.Request, f *fired) (kmsg.Response, error, bool) {
				if c.kc.CurrentNode() != 1 {
					return nil, nil, false
				}
				if _, dup := seen.LoadOrStore(req.Key(), true); dup {
					return nil, nil, false
				}
				return dropConnection(req, f)
			}).count
		}},
		// Regression: kgo retries ListOffsets once on fresh metadata;
		// a second NOT_LEADER failed the snapshot.
		{"list offsets NOT_LEADER_FOR_PARTITION", func(t *testing.T) func() int64 {
			h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: off, Err: kerr.NotLeaderForPartition, Count: 2})
			t.Cleanup(h.Remove)
			return func() int64 { return int64(h.Hits()) }
		}},
		{"list offsets connection dropped", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.ListOffsets, 2, dropConnection).count
		}},
		{"leader of a partition moves mid-read", func(t *testing.T) func() int64 {
			names := topicNames(t, c)
			return control(t, c.kc, kmsg.Fetch, 2, func(req kmsg.Request, f *fired) (kmsg.Response, error, bool) {
				r := req.(*kmsg.FetchRequest)
				for _, rt := range r.Topics {
					topic := cmp.Or(rt.Topic, names[rt.TopicID])
					if topic != off {
						continue
					}
					f.hit()
					for _, rp := range rt.Partitions {
						to := (c.kc.CurrentNode() + 1) % 3
						if err := c.kc.MoveTopicPartition(topic, rp.Partition, to); err != nil {
							t.Errorf("move %s/%d: %v", topic, rp.Partition, err)
						}
					}
				}
				return nil, nil, false // the old leader now answers NOT_LEADER
			}).count
		}},
		{"every leader changes mid-read", func(t *testing.T) func() int64 {
			names := topicNames(t, c)
			return control(t, c.kc, kmsg.Fetch, 1, func(req kmsg.Request, f *fired) (kmsg.Response, error, bool) {
				for _, rt := range req.(*kmsg.FetchRequest).Topics {
					if cmp.Or(rt.Topic, names[rt.TopicID]) == off {
						f.hit()
						c.kc.ShufflePartitionLeaders()
						break
					}
				}
				return nil, nil, false
			}).count
		}},
		// OffsetFetch: a capture describes only the groups not listed
		// Empty (TestSnapshotDescribeFaultsRetried has one with a member).
		{"group coordinators move", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.OffsetFetch, 1, func(_ kmsg.Request, f *fired) (kmsg.Response, error, bool) {
				f.hit()
				c.kc.RehashCoordinators()
				return nil, nil, false
			}).count
		}},
		{"offset fetch NOT_COORDINATOR", func(t *testing.T) func() int64 {
			h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Err: kerr.NotCoordinator, Count: 2})
			t.Cleanup(h.Remove)
			return func() int64 { return int64(h.Hits()) }
		}},
		{"offset fetch connection dropped", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.OffsetFetch, 1, dropConnection).count
		}},
		// Regression: kgo does not retry a FindCoordinator whose
		// connection drops while it shards DescribeGroups, and the
		// snapshot failed with "describe 3 consumer groups: ... EOF".
		{"find coordinator connection dropped", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.FindCoordinator, 1, dropConnection).count
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { snapshotRetried(t, c, want, tc.inject) })
	}
}

// snapshotRetried takes a snapshot of c with the fault inject installs,
// checks that the fault fired, and that the snapshot, stored and read
// back, is want (canonical).
func snapshotRetried(t *testing.T, c *cluster, want string, inject func(t *testing.T) func() int64) {
	t.Helper()
	cl := connectCLIClient(t, c, 20*time.Second)
	hits := inject(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatalf("snapshot under a transient fault failed: %v", err)
	}
	if hits() == 0 {
		t.Fatal("the fault never fired: the test proves nothing")
	}
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	stored, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := canonical(t, stored); got != want {
		t.Errorf("snapshot taken under the fault differs from one taken without:\n got %.2000s\nwant %.2000s", got, want)
	}
}

// TestSnapshotDescribeFaultsRetried: with a sink group that has a member
// (so a capture describes it: groups listed Empty are not), a
// DescribeGroups answered COORDINATOR_LOAD_IN_PROGRESS or on a dropped
// connection is retried, and the snapshot is identical to one taken
// without faults.
func TestSnapshotDescribeFaultsRetried(t *testing.T) {
	t.Parallel() // mostly waits on retries
	c := newCluster(t, nil)
	spec := connectdemo.DefaultSpec()
	spec.LiveSinkMember = true
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	exp, err := connectdemo.Seed(ctx, c.cl, spec) // the member runs until the test ends
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	base := c.capture()
	members := 0
	for _, g := range base.SinkGroups {
		members += g.Members
	}
	if members == 0 {
		t.Fatalf("no sink group has a member (live group %q): no DescribeGroups to fault", exp.LiveMemberGroup)
	}
	want := canonical(t, base)
	for _, tc := range []struct {
		name   string
		inject func(t *testing.T) func() int64
	}{
		{"describe groups COORDINATOR_LOAD_IN_PROGRESS", func(t *testing.T) func() int64 {
			h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeGroups}, Err: kerr.CoordinatorLoadInProgress, Count: 2})
			t.Cleanup(h.Remove)
			return func() int64 { return int64(h.Hits()) }
		}},
		{"describe groups connection dropped", func(t *testing.T) func() int64 {
			return control(t, c.kc, kmsg.DescribeGroups, 1, dropConnection).count
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { snapshotRetried(t, c, want, tc.inject) })
	}
}

// TestSnapshotBrokerFaultsFail: a fault that does not go away fails the
// snapshot with an error naming what failed, exit code 1, and leaves
// nothing in the store. Run through the binary, as an operator runs it.
func TestSnapshotBrokerFaultsFail(t *testing.T) {
	t.Parallel() // mostly waits on timeouts
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	off := connectdemo.DefaultOffsetsTopic

	for _, tc := range []struct {
		name   string
		inject func(t *testing.T) func() int64
		args   []string
		want   []string // in stderr
		not    []string // not in stderr
	}{
		{
			name: "fetch TOPIC_AUTHORIZATION_FAILED",
			inject: func(t *testing.T) func() int64 {
				h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: off, Err: kerr.TopicAuthorizationFailed, Count: -1})
				t.Cleanup(h.Remove)
				return func() int64 { return int64(h.Hits()) }
			},
			want: []string{"read offsets topics", "connect-offsets/", "TOPIC_AUTHORIZATION_FAILED"},
		},
		{
			name: "fetch NOT_LEADER_FOR_PARTITION until the timeout",
			inject: func(t *testing.T) func() int64 {
				h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: off, Err: kerr.NotLeaderForPartition, Count: -1})
				t.Cleanup(h.Remove)
				return func() int64 { return int64(h.Hits()) }
			},
			args: []string{"--timeout", "3s"},
			// Regression: this said "the Kafka brokers did not answer in
			// time: check --brokers", hiding the error retried.
			want: []string{"read offsets topics", "while retrying: fetch connect-offsets/", "NOT_LEADER_FOR_PARTITION"},
			not:  []string{"did not answer in time", "check --brokers"},
		},
		{
			name: "list offsets UNKNOWN_SERVER_ERROR",
			inject: func(t *testing.T) func() int64 {
				h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: off, Err: kerr.UnknownServerError, Count: -1})
				t.Cleanup(h.Remove)
				return func() int64 { return int64(h.Hits()) }
			},
			want: []string{"connect-offsets", "UNKNOWN_SERVER_ERROR"},
		},
		{
			name: "offset fetch GROUP_AUTHORIZATION_FAILED",
			inject: func(t *testing.T) func() int64 {
				h := c.kc.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Err: kerr.GroupAuthorizationFailed, Count: -1})
				t.Cleanup(h.Remove)
				return func() int64 { return int64(h.Hits()) }
			},
			want: []string{"consumer group", "GROUP_AUTHORIZATION_FAILED"},
		},
		{
			name: "every fetch connection dropped",
			inject: func(t *testing.T) func() int64 {
				return control(t, c.kc, kmsg.Fetch, -1, dropConnection).count
			},
			args: []string{"--timeout", "3s"},
			want: []string{"context deadline exceeded (while retrying: fetch from broker"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := t.TempDir()
			hits := tc.inject(t)
			args := append([]string{"snapshot", "--store", st}, tc.args...)
			r := runBin(t, c.env(), args...)
			if r.code != 1 {
				t.Fatalf("want exit 1, got %s", r)
			}
			if hits() == 0 {
				t.Fatal("the fault never fired: the test proves nothing")
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(r.stderr, w) {
					t.Errorf("stderr says %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("stderr shows a panic:\n%s", r.stderr)
			}
			if l := runBin(t, c.env(), "list", "--store", st, "--output", "json"); l.code != 0 || strings.TrimSpace(l.stdout) != "[]" {
				t.Errorf("a failed snapshot left something listed: %s", l)
			}
		})
	}
}
