package capture

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestReadGroup: a group that never existed is not found; a committed one
// reads back in Normalize's order.
func TestReadGroup(t *testing.T) {
	kc := testkit.Kfake(t, kfake.NumBrokers(1), kfake.SeedTopics(3, "t2", "t1"))
	cl := testkit.Client(t, kc)
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, found, err := ReadGroup(ctx, adm, "connect-none"); err != nil || found {
		t.Fatalf("missing group: found %v, %v", found, err)
	}
	var offs kadm.Offsets
	for _, o := range []kadm.Offset{{Topic: "t2", Partition: 0, At: 5}, {Topic: "t1", Partition: 2, At: 7}, {Topic: "t1", Partition: 0, At: 1}} {
		o.LeaderEpoch = -1
		offs.Add(o)
	}
	if err := adm.CommitAllOffsets(ctx, "connect-s", offs); err != nil {
		t.Fatal(err)
	}
	g, found, err := ReadGroup(ctx, adm, "connect-s")
	if err != nil || !found {
		t.Fatalf("committed group: found %v, %v", found, err)
	}
	want := []snapshot.SinkOffset{{Topic: "t1", Partition: 0, Offset: 1}, {Topic: "t1", Partition: 2, Offset: 7}, {Topic: "t2", Partition: 0, Offset: 5}}
	if len(g.Offsets) != len(want) {
		t.Fatalf("offsets %+v, want %+v", g.Offsets, want)
	}
	for i, o := range g.Offsets {
		if o.Topic != want[i].Topic || o.Partition != want[i].Partition || o.Offset != want[i].Offset {
			t.Errorf("offset %d: %+v, want %+v", i, o, want[i])
		}
	}
}

// TestCaptureNamesGroupAfterGroupPrefix: a sink group whose connector has
// no config here is named after the group with --group-prefix taken off.
// Regression: capture stripped the fixed "connect-" instead, so with
// GroupPrefix "sink-" the group "sink-orders" was kept with no connector,
// and a restore of connector "orders" did not find its offsets.
func TestCaptureNamesGroupAfterGroupPrefix(t *testing.T) {
	kc := testkit.Kfake(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", snapshot.DefaultOffsetsTopic, snapshot.DefaultConfigTopic))
	cl := testkit.Client(t, kc)
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	for _, g := range []string{"sink-orders", "connect-other"} {
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3, LeaderEpoch: -1})
		if err := adm.CommitAllOffsets(ctx, g, offs); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := Capture(ctx, cl, Options{GroupPrefix: "sink-"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range snap.SinkGroups {
		got = append(got, g.Group+"="+g.Connector)
	}
	if len(got) != 1 || got[0] != "sink-orders=orders" {
		t.Errorf("sink groups %v, want [sink-orders=orders] (connect-other is not under the prefix)", got)
	}
}

// A Connect worker group under the group prefix is not a sink group.
// Regression: the real worker's own group connect-cluster was captured as
// the sink connector "cluster" (a plan then offered to restore it).
func TestCaptureSkipsWorkerGroup(t *testing.T) {
	kc := testkit.Kfake(t, kfake.NumBrokers(1), kfake.SeedTopics(1, "orders", snapshot.DefaultOffsetsTopic, snapshot.DefaultConfigTopic))
	cl := testkit.Client(t, kc)
	ctx := context.Background()
	// A worker joins its group with protocol type "connect".
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = "connect-cluster"
	join.SessionTimeoutMillis = 30000
	join.RebalanceTimeoutMillis = 30000
	join.ProtocolType = "connect"
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name = "sessioned"
	proto.Metadata = []byte{0}
	join.Protocols = append(join.Protocols, proto)
	for i := 0; i < 2; i++ { // the first join answers MEMBER_ID_REQUIRED
		resp, err := join.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode == 0 {
			break
		}
		join.MemberID = resp.MemberID
	}
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed["connect-cluster"]; !ok || g.ProtocolType != "connect" {
		t.Fatalf("the worker group is not listed with protocol type connect: %+v", listed)
	}
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "connect-orders", offs); err != nil {
		t.Fatal(err)
	}
	snap, err := Capture(ctx, cl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range snap.SinkGroups {
		got = append(got, g.Group)
	}
	if len(got) != 1 || got[0] != "connect-orders" {
		t.Errorf("sink groups %v, want [connect-orders] (connect-cluster is a worker group)", got)
	}
}
