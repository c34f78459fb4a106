package drill

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestCompareScratchFindsEachDifference: the partition-by-partition
// read-back names a key whose value differs, a key the state does not
// hold and a key that is missing, each on its partition, and the embedded
// scratch cluster is emptied of what it compared.
func TestCompareScratchFindsEachDifference(t *testing.T) {
	ctx := t.Context()
	state := benchState(200, 0)
	opts := capture.Options{}
	opts.Defaults()
	topics := scratchTopics(state, opts)
	sc, err := startScratch(ctx, nil, topics)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.close(ctx)
	offsets := []string{snapshot.DefaultOffsetsTopic}
	if _, _, err := restoreInto(ctx, sc, state, opts, offsets, nil); err != nil {
		t.Fatal(err)
	}
	tab := state.SourceTable()
	parts := map[string]int32{snapshot.DefaultOffsetsTopic: 25}
	var f findings
	want, ignore := checkKeys(tab, parts, &f)
	if len(f.failures) != 0 || len(want) != 200 {
		t.Fatalf("checkKeys: %d keys, failures %+v", len(want), f.failures)
	}
	changed, gone := tab.Key(want[0].i), tab.Key(want[1].i)
	extra := []byte(`["file-bulk-0007",{"filename":"/not/in/the/state"}]`)
	for _, r := range []*kgo.Record{
		{Topic: snapshot.DefaultOffsetsTopic, Partition: want[0].part, Key: changed, Value: []byte(`{"position":1}`)},
		{Topic: snapshot.DefaultOffsetsTopic, Partition: want[1].part, Key: gone},
		{Topic: snapshot.DefaultOffsetsTopic, Partition: snapshot.PartitionFor(extra, 25), Key: extra, Value: []byte(`{"position":2}`)},
	} {
		if err := sc.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := compareScratch(ctx, sc, tab, want, ignore, offsets, &f); err != nil {
		t.Fatal(err)
	}
	got := map[string]Failure{}
	for _, x := range f.failures {
		got[x.Cause] = x
	}
	if len(f.failures) != 3 || got[CauseValueDiffers].Partition != want[0].part || got[CauseKeyMissing].Partition != want[1].part ||
		got[CauseUnexpectedKey].Connector != "file-bulk-0007" {
		t.Errorf("failures: %+v", f.failures)
	}
	// What was compared is gone from the embedded cluster.
	var left int
	if _, err := capture.ReadPartitions(ctx, sc.cl, snapshot.DefaultOffsetsTopic, 25, func(pk *capture.PartitionKeys) error {
		left += pk.Len()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d keys left in the scratch cluster after the read-back", left)
	}
}
