package connect

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestRealWorkerConsumerProtocolSink: Connect 3.8's own sink task, with
// consumer.override.group.protocol=consumer, joins its group with the
// KIP-848 protocol on a cluster that answers DescribeGroups as Kafka 4.x
// does. offsetkeeper snapshot captures the group as a consumer group,
// with its member while it runs and exactly its commits once stopped.
func TestRealWorkerConsumerProtocolSink(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	p := newPipeline(t, realconnect.Options{}, t.TempDir()+"/store")
	testkit.Kafka4Groups(t, p.c.KC)
	const name, group = "cp-sink", "connect-cp-sink"
	p.feed(4)
	p.rest.Create(name, realconnect.FileSink(p.out, eventsT, "consumer.override.group.protocol=consumer", "consumer.override.auto.offset.reset=earliest"), "")
	p.rest.WaitState(name, "RUNNING", 1)
	want := ends(t, p.adm, eventsT)
	ctx := context.Background()
	realconnect.Eventually(t, "the consumer-protocol sink group commits every event", func() (bool, string) {
		listed, err := p.adm.ListGroups(ctx)
		if err != nil {
			return false, err.Error()
		}
		l, ok := listed[group]
		got := map[string]int64{}
		if offs, err := p.adm.FetchOffsets(ctx, group); err == nil {
			offs.Each(func(o kadm.OffsetResponse) { got[o.Topic+"/"+strconv.Itoa(int(o.Partition))] = o.At })
		}
		return ok && l.GroupType == "consumer" && mapString(got) == mapString(want),
			"listed " + l.GroupType + " " + l.State + ", committed " + mapString(got) + ", want " + mapString(want)
	})

	check := func(state string, members int) {
		t.Helper()
		id := p.snapshot()
		var snap snapshot.Snapshot
		if err := json.Unmarshal([]byte(p.bin(0, "show", id, "--output", "json").stdout), &snap); err != nil {
			t.Fatal(err)
		}
		g, ok := snap.SinkGroupOf(name)
		if !ok {
			t.Fatalf("the snapshot has no group of %s (unread %+v, warnings %q)", name, snap.Unread, snap.Warnings)
		}
		got := map[string]int64{}
		for _, o := range g.Offsets {
			got[o.Topic+"/"+strconv.Itoa(int(o.Partition))] = o.Offset
		}
		if g.Type != "consumer" || g.State != state || g.Members != members || mapString(got) != mapString(want) {
			t.Errorf("snapshot group %+v, want consumer %s with %d members at %s", g, state, members, mapString(want))
		}
	}
	check("Stable", 1)
	p.rest.Stop(name)
	realconnect.Eventually(t, "the group is empty once the connector is stopped", func() (bool, string) {
		d, err := p.adm.DescribeConsumerGroups(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		return d[group].State == "Empty", d[group].State
	})
	check("Empty", 0)
}
