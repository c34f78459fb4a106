package capture

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
)

// TestTailConsumerGroupUnread: the journal's tail reads a consumer-protocol
// group (Kafka 4.x answers) as one, and when it cannot describe the group
// its read fails, naming it, rather than give a state without the group,
// which the journal would record as a deletion.
func TestTailConsumerGroupUnread(t *testing.T) {
	c, cl := testkit.Cluster(t)
	testkit.Kafka4Groups(t, c)
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	testkit.Produce(t, cl, &kgo.Record{Topic: "orders", Value: []byte("a")}, &kgo.Record{Topic: "orders", Value: []byte("b")})
	testkit.JoinConsumerGroup(t, c, "connect-orders-sink", "orders")
	tail := &Tail{capt: NewCapturer(cl, Options{}), conf: build.NewConfigState(), groups: map[string]snapshot.SinkGroup{}}
	gs, err := tail.readGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := gs["connect-orders-sink"]; g.Type != GroupTypeConsumer || g.Members != 1 || len(g.Offsets) == 0 {
		t.Fatalf("the tail read %+v", g)
	}
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ConsumerGroupDescribe}, Err: kerr.GroupAuthorizationFailed, Count: -1})
	t.Cleanup(h.Remove)
	gs, err = tail.readGroups(ctx)
	if err == nil || !strings.Contains(err.Error(), `"connect-orders-sink"`) || !strings.Contains(err.Error(), "GROUP_AUTHORIZATION_FAILED") {
		t.Fatalf("a tail that cannot describe the group: %v, groups %+v", err, gs)
	}
}
