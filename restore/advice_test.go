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
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
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
			kc, err := connectdemo.NewCluster()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(kc.Close)
			cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cl.Close)
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
			store, err := snapshot.OpenStore(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			var out bytes.Buffer
			rep, err := restore.Run(ctx, restore.Env{Client: cl, Store: store, Out: &out}, restore.Request{Snapshot: snap})
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
	return &snapshot.Snapshot{
		Version: snapshot.Version, ID: "20240101T000000.000000Z-000001", ClusterID: connectdemo.DefaultClusterID,
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, 4)}},
		Connectors: []snapshot.Connector{{Name: "c1", Type: snapshot.TypeSource, Tasks: -1}},
		SourceOffsets: []snapshot.SourceOffset{{Topic: snapshot.DefaultOffsetsTopic, Partition: snapshot.PartitionFor(key, 4),
			Key: key, Value: []byte(`{"pos":1}`), Connector: "c1"}},
	}
}
