package restore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestFailedCommitAdvice: whatever the broker answers a restore's commit,
// the advice never makes things worse. The loser of two restores of the
// same offsets topic is told another restore took over, that nothing of
// it was written and not to restore its undo snapshot, whether the broker
// says INVALID_TXN_STATE, PRODUCER_FENCED or something else while another
// producer holds its transactional id with a newer epoch; a commit that
// fails on its own writes nothing and says there is nothing to roll back.
// None says "to roll back".
func TestFailedCommitAdvice(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int16
		takeOver bool
		want     string
	}{
		{"invalid txn state", kerr.InvalidTxnState.Code, false, "another restore took over; nothing of this restore was written; do not restore its undo snapshot"},
		{"producer fenced", kerr.ProducerFenced.Code, false, "another restore took over; nothing of this restore was written; do not restore its undo snapshot"},
		{"newer epoch", kerr.UnknownServerError.Code, true, "another restore took over; nothing of this restore was written; do not restore its undo snapshot"},
		{"failed alone", kerr.UnknownServerError.Code, false, "nothing of this restore was written, so there is nothing to undo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			kc, cl := testkit.Cluster(t)
			snap := smallSnapshot(t, cl)
			txnID := restore.TransactionalIDPrefix + snapshot.DefaultOffsetsTopic
			kc.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
				r := req.(*kmsg.EndTxnRequest)
				if r.TransactionalID != txnID || !r.Commit {
					kc.KeepControl()
					return nil, nil, false
				}
				if tc.takeOver {
					kc.SleepControl(func() {
						other, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.TransactionalID(txnID))
						if err != nil {
							t.Error(err)
							return
						}
						defer other.Close()
						if _, _, err := other.ProducerID(ctx); err != nil {
							t.Errorf("the other producer: %v", err)
						}
					})
				}
				resp := r.ResponseKind().(*kmsg.EndTxnResponse)
				resp.ErrorCode = tc.code
				return resp, nil, true
			})
			sto, err := store.OpenStore(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer sto.Close()
			var out bytes.Buffer
			rep, err := restore.Run(ctx, restore.Env{Client: cl, Store: sto, Out: &out}, restore.Request{Snapshot: snap})
			if err == nil {
				t.Fatalf("Run: no error\n%s", out.String())
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "to roll back") || rep.Undo == "" {
				t.Errorf("Run: %v (undo %q)\nwant %q and no \"to roll back\"", err, rep.Undo, tc.want)
			}
		})
	}
}

// smallSnapshot creates the worker topics on cl's cluster and returns a
// snapshot of one source key to restore.
func smallSnapshot(t *testing.T, cl *kgo.Client) *snapshot.Snapshot {
	t.Helper()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	if _, err := adm.CreateTopic(ctx, 1, -1, compact, snapshot.DefaultConfigTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 4, -1, compact, snapshot.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	key := []byte(`["c1",{"file":"a"}]`)
	return (&snapshot.Snapshot{
		Version: snapshot.Version, ID: "20240101T000000.000000Z-000001", ClusterID: connectdemo.DefaultClusterID,
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, 4)}},
		Connectors: []snapshot.Connector{{Name: "c1", Type: snapshot.TypeSource, Tasks: -1}},
	}).WithSourceOffsets([]snapshot.SourceOffset{{Topic: snapshot.DefaultOffsetsTopic, Partition: snapshot.PartitionFor(key, 4),
		Key: key, Value: []byte(`{"pos":1}`), Connector: "c1"}})
}

// TestPartialWriteAdvice: a restore that committed its offsets topic and
// then failed on a sink group says exactly what it wrote and prints the
// restore of its undo snapshot, in both forms, with the settings given.
func TestPartialWriteAdvice(t *testing.T) {
	ctx := context.Background()
	kc, cl := testkit.Cluster(t)
	snap := smallSnapshot(t, cl)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	snap.Connectors = append(snap.Connectors, snapshot.Connector{Name: "s1", Type: snapshot.TypeSink, Tasks: -1})
	snap.SinkGroups = []snapshot.SinkGroup{{Group: "connect-s1", Connector: "s1", Offsets: []snapshot.SinkOffset{{Topic: "t", Partition: 0, Offset: 5, LeaderEpoch: -1}}}}
	kc.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.UnknownServerError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	sto, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sto.Close()
	settings := restore.CommandSettings{Flags: []string{"--store", "s3://b/p"}}
	rep, err := restore.Run(ctx, restore.Env{Client: cl, Store: sto}, restore.Request{Snapshot: snap, Commands: settings})
	if err == nil || rep.Undo == "" {
		t.Fatalf("Run: %v, undo %q", err, rep.Undo)
	}
	undo := settings.Snapshot(rep.Undo)
	// What was written is named once (Apply's "already written"), then
	// the undo.
	want := "(already written: topic " + snapshot.DefaultOffsetsTopic + " (1 record)); to roll back what it wrote: " + undo.Run + " (check first: " + undo.DryRun + ")"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Run: %v\nwant %q", err, want)
	}
}
