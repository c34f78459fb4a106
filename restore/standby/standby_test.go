package standby_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// pair is a primary seeded with connectdemo's connectors (data topics
// with distinct timestamps) and a standby with Connect's worker topics and
// MirrorMaker 2's copies of the data topics (aliases a -> b).
type pair struct {
	acl, bcl *kgo.Client
	mirrored *connectdemo.Mirrored
	spec     connectdemo.Spec
}

func newPair(t *testing.T) *pair {
	t.Helper()
	ctx := context.Background()
	_, acl := testkit.Cluster(t, kfake.ClusterID("primary"))
	_, bcl := testkit.Cluster(t, kfake.ClusterID("standby"))
	spec, fill := connectdemo.MigrationSpec(time.Now().Add(-time.Hour).Truncate(time.Second))
	exp, err := connectdemo.Seed(t.Context(), acl, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	if err := fill(ctx, acl); err != nil {
		t.Fatal(err)
	}
	if err := connectdemo.CreateTopics(ctx, bcl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(bcl).CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	m, err := connectdemo.MirrorTopics(ctx, acl, bcl, connectdemo.Mirror{
		SourceAlias: "a", TargetAlias: "b",
		Topics:       []string{"orders", "clicks", "invoices", "legacy.customers"},
		Shift:        func(topic string, p int32) int64 { return 100 + 7*int64(p) },
		SyncEvery:    10,
		Checkpointed: []string{connectdemo.GroupSinkES},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &pair{acl: acl, bcl: bcl, mirrored: m, spec: spec}
}

// capt captures cl's cluster; the exactly-once connector's own offsets
// topic is named, for the standby, which has no config naming it.
func capt(t *testing.T, cl *kgo.Client) *snapshot.Snapshot {
	t.Helper()
	snap, err := capture.Capture(context.Background(), cl, capture.Options{OffsetsTopics: []string{connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// sourceBytes is every live source key of snap on its murmur2 partition
// (a copy on another partition is a stray the restore leaves alone), of a
// connector (no connector reads the others), as
// topic/partition/key -> value.
func sourceBytes(snap *snapshot.Snapshot) map[string]string {
	out := map[string]string{}
	parts := map[string]int32{}
	for _, t := range snap.Topics {
		parts[t.Name] = int32(len(t.Partitions))
	}
	for _, o := range snap.SourceTable().Collect() {
		if o.Connector == "" || o.Partition != snapshot.PartitionFor(o.Key, parts[o.Topic]) {
			continue
		}
		out[fmt.Sprintf("%s/%d/%s", o.Topic, o.Partition, o.Key)] = string(o.Value)
	}
	return out
}

func endOffsets(t *testing.T, cl *kgo.Client, topics ...string) map[string]int64 {
	t.Helper()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topics...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = o.Offset })
	return out
}

// TestSync: the primary's state lands on the standby byte for byte, each
// key on the partition it is on at the primary (both have 25 partitions,
// murmur2), the sink group MM2 checkpointed translated; a second sync and
// a new syncer (a restart) find it in step and write nothing; one change
// on the primary is one record on the standby.
func TestSync(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	state := capt(t, p.acl)
	s, err := standby.New(standby.Config{Client: p.bcl, Translate: standby.TranslateMM2, MM2SourceAlias: "a"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sync(ctx, state, time.Now())
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if rep.Applied == nil || rep.Applied.SourceWrites == 0 {
		t.Fatalf("first sync wrote nothing: %+v", rep)
	}
	t.Logf("warnings %q running %+v outofstep %+v", rep.Warnings, rep.Running, rep.OutOfStep)
	got, want := sourceBytes(capt(t, p.bcl)), sourceBytes(state)
	if len(got) != len(want) {
		t.Errorf("standby holds %d source keys, primary %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("standby %s = %q, primary %q", k, got[k], v)
		}
	}
	// The checkpointed group: at MM2's translated offsets.
	fetched, err := kadm.NewClient(p.bcl).FetchOffsets(ctx, connectdemo.GroupSinkES)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for topic, parts := range p.mirrored.Checkpoints[connectdemo.GroupSinkES] {
		for part, off := range parts {
			n++
			if o, ok := fetched.Lookup(topic, part); !ok || o.At != off {
				t.Errorf("standby group %s %s/%d at %+v, want the checkpoint's %d", connectdemo.GroupSinkES, topic, part, o, off)
			}
		}
	}
	if n == 0 {
		t.Fatal("no checkpoint to compare with")
	}

	before := endOffsets(t, p.bcl, connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic)
	for _, fresh := range []bool{false, true} {
		if fresh {
			if s, err = standby.New(standby.Config{Client: p.bcl, Translate: standby.TranslateMM2, MM2SourceAlias: "a"}); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := s.Sync(ctx, state, time.Now())
		if err != nil || rep.Applied != nil || rep.Counts.Writes() != 0 {
			t.Fatalf("sync again (new syncer %v): %v, applied %+v, counts %+v", fresh, err, rep.Applied, rep.Counts)
		}
	}
	if after := endOffsets(t, p.bcl, connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a sync in step wrote to the offsets topics: %v -> %v", before, after)
	}

	// One key changes on the primary: one record on the standby.
	var o snapshot.SourceOffset
	for _, so := range state.SourceTable().Collect() {
		if so.Connector == connectdemo.ConnFile {
			o = so
		}
	}
	newValue := []byte(`{"position":424242}`)
	testkit.Produce(t, p.acl, &kgo.Record{Topic: o.Topic, Partition: o.Partition, Key: o.Key, Value: newValue})
	state = capt(t, p.acl)
	rep, err = s.Sync(ctx, state, time.Now())
	if err != nil || rep.Applied == nil || rep.Applied.SourceWrites != 1 || rep.Applied.Tombstones != 0 {
		t.Fatalf("sync one change: %v, %+v", err, rep.Applied)
	}
	got = sourceBytes(capt(t, p.bcl))
	if k := fmt.Sprintf("%s/%d/%s", o.Topic, o.Partition, o.Key); got[k] != string(newValue) {
		t.Fatalf("standby %s = %q after the change, want %q", k, got[k], newValue)
	}
}

// TestSyncRefusedWhileRunning: a connector in scope that runs on the
// standby stops every write: the offsets topics and groups are as they
// were, and the report names it.
func TestSyncRefusedWhileRunning(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	state := capt(t, p.acl)
	testkit.Produce(t, p.bcl,
		&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-" + connectdemo.ConnFile),
			Value: []byte(`{"properties":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","name":"` + connectdemo.ConnFile + `"}}`)},
		&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-" + connectdemo.ConnFile), Value: []byte(`{"tasks":1}`)})
	before := endOffsets(t, p.bcl, connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic)
	s, err := standby.New(standby.Config{Client: p.bcl})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sync(ctx, state, time.Now())
	var re *standby.RunningError
	if !errors.Is(err, standby.ErrRunning) || !errors.As(err, &re) {
		t.Fatalf("Sync with %s running on the standby: %v, want ErrRunning", connectdemo.ConnFile, err)
	}
	if len(rep.Running) != 1 || rep.Running[0].Connector != connectdemo.ConnFile || rep.Applied != nil {
		t.Fatalf("report %+v", rep)
	}
	if after := endOffsets(t, p.bcl, connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused sync wrote: %v -> %v", before, after)
	}
	groups, err := kadm.NewClient(p.bcl).ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 0 {
		t.Fatalf("a refused sync committed groups: %v", groups.Groups())
	}
}
