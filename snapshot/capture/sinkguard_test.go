package capture_test

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestCaptureSinkTopics: a snapshot keeps each sink topic's ID as Kafka
// prints it and each partition's log start and end at capture, and each
// sink group's protocol type.
func TestCaptureSinkTopics(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	if _, err := adm.DeleteRecords(ctx, kadm.Offsets{"clicks": {1: {Topic: "clicks", Partition: 1, At: 56}}}); err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, g := range snap.SinkGroups {
		for _, o := range g.Offsets {
			want[o.Topic] = true
		}
	}
	if len(want) == 0 || len(snap.SinkTopics) != len(want) {
		t.Fatalf("sink topics %+v, want one for each of %v", snap.SinkTopics, want)
	}
	td, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, "clicks")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range snap.SinkTopics {
		if st.ID != capture.TopicIDString(td[st.Name].ID) || len(st.ID) != 22 {
			t.Errorf("topic %s: ID %q, want %q", st.Name, st.ID, capture.TopicIDString(td[st.Name].ID))
		}
		if len(st.Partitions) != len(td[st.Name].Partitions) {
			t.Errorf("topic %s: %d partitions recorded, %d exist", st.Name, len(st.Partitions), len(td[st.Name].Partitions))
		}
	}
	st, ok := snap.SinkTopic("clicks")
	if !ok {
		t.Fatal("no record of sink topic clicks")
	}
	e, _ := ends.Lookup("clicks", 1)
	if p := st.Partitions[1]; p.Partition != 1 || p.StartOffset != 56 || p.EndOffset != e.Offset {
		t.Errorf("clicks/1 recorded as %+v, want start 56, end %d", p, e.Offset)
	}
	for _, g := range snap.SinkGroups {
		if g.Members > 0 && g.ProtocolType != "consumer" {
			t.Errorf("group %s with members has protocol type %q", g.Group, g.ProtocolType)
		}
	}
}
