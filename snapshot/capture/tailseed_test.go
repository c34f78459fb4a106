package capture

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// epochTopicsFor is what EpochTopicsOf returns for snap, without the
// cluster's topic IDs.
func epochTopicsFor(snap *snapshot.Snapshot) []journal.EpochTopic {
	var out []journal.EpochTopic
	for _, t := range snap.Topics {
		et := journal.EpochTopic{Name: t.Name, Role: t.Role, Partitions: len(t.Partitions)}
		for _, p := range t.Partitions {
			et.Start = append(et.Start, journal.PartitionNext{Partition: p.Partition, Next: p.EndOffset})
		}
		out = append(out, et)
	}
	return out
}

// TestGetWithSeedSink checks the store's path: a Tail over the snapshot
// GetWith reads with a SeedSink keeps the same last values as
// one over a plain GetWith's, for the partitions it tails only, and the
// same sink groups; the snapshot seeds one Tail only.
func TestGetWithSeedSink(t *testing.T) {
	ctx := context.Background()
	st := store.NewStore(memblob.OpenBucket(nil))
	t.Cleanup(func() { st.Close() })
	// The format's fixture, as the snapshot package's golden file holds it.
	doc, err := os.ReadFile(filepath.Join("..", "testdata", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = ""
	// A key in a partition the epoch does not tail: dropped by both.
	snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: "connect-offsets", Partition: 999, Offset: 1,
		Key: snapshot.Bytes(`["c",{"f":1}]`), Value: snapshot.Bytes(`{"position":1}`), Connector: "c"})
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := &SeedSink{S: NewTailSeed()}
	got, _, err := st.Snapshots().GetWith(ctx, info.ID, sink)
	if err != nil {
		t.Fatal(err)
	}
	seed := sink.S
	if got.SourceTable().Collect() != nil || seed == nil || !reflect.DeepEqual(got.Topics, want.Topics) || !reflect.DeepEqual(got.SinkGroups, want.SinkGroups) {
		t.Fatal("GetWith's snapshot with a SeedSink differs from GetWith's but for its source offsets")
	}
	topics := epochTopicsFor(want)
	gt := NewTail(nil, Options{}, got, seed, topics, got.CreatedAt)
	wt := NewTail(nil, Options{}, want, nil, topics, want.CreatedAt)
	tailed := 0
	for _, et := range topics {
		if et.Role != snapshot.RoleOffsets {
			continue
		}
		if len(gt.last[et.Name]) != len(et.Start) || len(wt.last[et.Name]) != len(et.Start) {
			t.Fatalf("%s: last values of %d and %d partitions, the epoch tails %d", et.Name, len(gt.last[et.Name]), len(wt.last[et.Name]), len(et.Start))
		}
		for p, lv := range wt.last[et.Name] {
			tailed += lv.Len()
			if g := gt.last[et.Name][p]; g.Len() != lv.Len() || g.Live != lv.Live {
				t.Fatalf("%s/%d: %d keys, %d bytes; want %d, %d", et.Name, p, g.Len(), g.Live, lv.Len(), lv.Live)
			}
		}
	}
	if tailed == 0 || tailed != want.SourceKeys()-1 {
		t.Fatalf("%d keys tailed, want %d", tailed, want.SourceKeys()-1)
	}
	for _, o := range want.SourceTable().Collect() {
		lv := wt.last[o.Topic][o.Partition]
		if lv == nil {
			continue
		}
		gv, gok := gt.last[o.Topic][o.Partition].Get(o.Key)
		wv, wok := lv.Get(o.Key)
		if gok != wok || !bytes.Equal(gv, wv) {
			t.Fatalf("%s/%d key %q: %q, want %q", o.Topic, o.Partition, o.Key, gv, wv)
		}
	}
	if !reflect.DeepEqual(gt.groups, wt.groups) || len(gt.groups) == 0 {
		t.Fatal("the tails' sink groups differ")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a second NewTail over the seed GetForTail read did not panic")
		}
	}()
	NewTail(nil, Options{}, got, seed, topics, got.CreatedAt)
}
