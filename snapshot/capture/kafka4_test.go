package capture_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// kafka4World is a cluster answering DescribeGroups as Kafka 4.x does, a
// sink topic with records, and a client.
func kafka4World(t *testing.T) (*kfake.Cluster, *kgo.Client, *kadm.Client) {
	t.Helper()
	c, cl := testkit.Cluster(t)
	testkit.Kafka4Groups(t, c)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(context.Background(), 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{snapshot.DefaultOffsetsTopic, snapshot.DefaultConfigTopic} {
		if _, err := adm.CreateTopic(context.Background(), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, topic); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		testkit.Produce(t, cl, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: []byte("v")})
	}
	return c, cl, adm
}

// wantCommitted is what a member that consumed all of orders committed:
// the end offset of each partition that has records.
func wantCommitted(t *testing.T, adm *kadm.Client) map[int32]int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			out[o.Partition] = o.Offset
		}
	})
	return out
}

func checkGroup(t *testing.T, snap *snapshot.Snapshot, group, state string, members int, want map[int32]int64) {
	t.Helper()
	for _, g := range snap.SinkGroups {
		if g.Group != group {
			continue
		}
		if g.Type != capture.GroupTypeConsumer || g.State != state || g.Members != members {
			t.Errorf("group %s: type %q state %q members %d, want consumer %s %d", group, g.Type, g.State, g.Members, state, members)
		}
		got := map[int32]int64{}
		for _, o := range g.Offsets {
			if o.Topic != "orders" {
				t.Errorf("group %s: offset of topic %q", group, o.Topic)
			}
			got[o.Partition] = o.Offset
		}
		if len(got) != len(want) {
			t.Errorf("group %s: offsets %v, want %v", group, got, want)
		}
		for p, o := range want {
			if got[p] != o {
				t.Errorf("group %s: partition %d offset %d, want %d", group, p, got[p], o)
			}
		}
		return
	}
	t.Errorf("group %s is not in the snapshot (groups %+v, unread %+v, warnings %q)", group, snap.SinkGroups, snap.Unread, snap.Warnings)
}

// TestKafka4ConsumerGroupCaptured: on a cluster that answers as Kafka 4.x,
// a sink group using the consumer protocol (KIP-848) answers DescribeGroups
// GROUP_ID_NOT_FOUND ("not a classic group"), which the capture once read
// as gone and dropped in silence. It is captured exactly, as a consumer
// group, with its member while it runs and Empty once stopped; a classic
// group beside it still reads as classic.
func TestKafka4ConsumerGroupCaptured(t *testing.T) {
	c, cl, adm := kafka4World(t)
	ctx := context.Background()
	m := testkit.JoinConsumerGroup(t, c, "connect-orders-sink", "orders")
	var classic kadm.Offsets
	classic.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 2, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "connect-classic-sink", classic); err != nil {
		t.Fatal(err)
	}
	// The cluster answers as Kafka 4.x does: this is what hid the group.
	d, err := adm.DescribeGroups(ctx, "connect-orders-sink")
	if err != nil {
		t.Fatal(err)
	}
	if g := d["connect-orders-sink"]; !errors.Is(g.Err, kerr.GroupIDNotFound) || g.ErrMessage != "Group connect-orders-sink is not a classic group." || g.State != "Dead" {
		t.Fatalf("DescribeGroups of a consumer group: err %v message %q state %q, want Kafka 4.x's answer", g.Err, g.ErrMessage, g.State)
	}
	want := wantCommitted(t, adm)

	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkGroup(t, snap, "connect-orders-sink", "Stable", 1, want)
	if len(snap.Unread) != 0 {
		t.Errorf("unread groups %+v", snap.Unread)
	}
	var sawClassic bool
	for _, g := range snap.SinkGroups {
		if g.Group == "connect-classic-sink" {
			sawClassic = g.Type == capture.GroupTypeClassic && g.State == "Empty" && len(g.Offsets) == 1 && g.Offsets[0].Offset == 2
		}
	}
	if !sawClassic {
		t.Errorf("classic group not read as one: %+v", snap.SinkGroups)
	}

	m.Leave()
	snap, err = capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkGroup(t, snap, "connect-orders-sink", "Empty", 0, want)

	// The document holds the type and reads back the same.
	var buf strings.Builder
	if err := snap.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"group":"connect-orders-sink","connector":"orders-sink","type":"consumer","state":"Empty"`) {
		t.Errorf("document lacks the group's type:\n%.3000s", buf.String())
	}
	back, err := snapshot.Decode([]byte(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	checkGroup(t, back, "connect-orders-sink", "Empty", 0, want)
}

// TestKafka4UndescribableGroupNamed: a sink group the capture cannot
// describe (its ConsumerGroupDescribe refused) is named in the snapshot's
// unread groups with the reason, never dropped, and the rest is captured.
func TestKafka4UndescribableGroupNamed(t *testing.T) {
	c, cl, _ := kafka4World(t)
	testkit.JoinConsumerGroup(t, c, "connect-orders-sink", "orders")
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ConsumerGroupDescribe}, Err: kerr.GroupAuthorizationFailed, Count: -1})
	t.Cleanup(h.Remove)
	snap, err := capture.Capture(context.Background(), cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Hits() == 0 {
		t.Fatal("the fault never fired: the test proves nothing")
	}
	for _, g := range snap.SinkGroups {
		if g.Group == "connect-orders-sink" {
			t.Fatalf("a group that could not be described is in the snapshot as read: %+v", g)
		}
	}
	if len(snap.Unread) != 1 {
		t.Fatalf("unread groups %+v, want connect-orders-sink", snap.Unread)
	}
	u := snap.Unread[0]
	if u.Group != "connect-orders-sink" || u.Connector != "orders-sink" || u.Type != capture.GroupTypeConsumer ||
		!strings.Contains(u.Reason, "GROUP_AUTHORIZATION_FAILED") {
		t.Errorf("unread %+v", u)
	}
}
