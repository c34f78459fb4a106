package restore

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestSinksMatchInBatches: the quick verify reads the groups a batch at a
// time; it vouches for groups over several batches that hold what their
// plans leave, and not once one group of the last batch differs, nor
// when a group the plan left without offsets has one.
func TestSinksMatchInBatches(t *testing.T) {
	ctx := t.Context()
	_, cl := testkit.Cluster(t)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "sink-data"); err != nil {
		t.Fatal(err)
	}
	commit := func(group string, part int32, at int64, meta string) {
		t.Helper()
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "sink-data", Partition: part, At: at, LeaderEpoch: -1, Metadata: meta})
		resp, err := adm.CommitOffsets(ctx, group, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	n := 2*verifyGroups + 7
	p := &Plan{}
	for i := range n {
		sp := &SinkPlan{Group: fmt.Sprintf("connect-sink-%03d", i)}
		for part := range int32(3) {
			at := int64(100*i) + int64(part)
			meta := ""
			if part == 1 {
				meta = "m" // metadata is compared too
			}
			sp.add(SinkChange{Action: Added, Topic: "sink-data", Partition: part, Old: -1, New: at, LeaderEpoch: -1, Metadata: meta})
			commit(sp.Group, part, at, meta)
		}
		p.Connectors = append(p.Connectors, ConnectorPlan{Name: fmt.Sprintf("sink-%03d", i), Sink: sp})
	}
	empty := &SinkPlan{Group: "connect-sink-empty"}
	p.Connectors = append(p.Connectors, ConnectorPlan{Name: "sink-empty", Sink: empty})
	if !sinksMatch(ctx, cl, p) {
		t.Fatalf("%d groups holding what their plans leave: not vouched for", n)
	}
	last := p.Connectors[n-1].Sink
	commit(last.Group, 2, 1, "")
	if sinksMatch(ctx, cl, p) {
		t.Fatal("a group of the last batch differs: vouched for")
	}
	commit(last.Group, 2, last.Change(2).New, "")
	if !sinksMatch(ctx, cl, p) {
		t.Fatal("put back: not vouched for")
	}
	commit(last.Group, 1, last.Change(1).New, "other")
	if sinksMatch(ctx, cl, p) {
		t.Fatal("metadata differs: vouched for")
	}
	commit(last.Group, 1, last.Change(1).New, "m")
	commit(empty.Group, 0, 5, "")
	if sinksMatch(ctx, cl, p) {
		t.Fatal("an offset in a group the plan leaves empty: vouched for")
	}
}
