package standby_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// newStandby is a standby of acl as newPair makes it (Connect's worker
// topics, the exactly-once connector's own offsets topic, MirrorMaker 2's
// copies a -> b): MirrorTopics is deterministic, so two of them are alike.
func newStandby(t *testing.T, acl *kgo.Client) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	ctx := context.Background()
	c, bcl := testkit.Cluster(t, kfake.ClusterID("standby"))
	if err := connectdemo.CreateTopics(ctx, bcl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(bcl).CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	_, err := connectdemo.MirrorTopics(ctx, acl, bcl, connectdemo.Mirror{
		SourceAlias: "a", TargetAlias: "b",
		Topics:       []string{"orders", "clicks", "invoices", "legacy.customers"},
		Shift:        func(topic string, p int32) int64 { return 100 + 7*int64(p) },
		SyncEvery:    10,
		Checkpointed: []string{connectdemo.GroupSinkES},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, bcl
}

// logRecord is one record of an offsets topic as a worker reads it.
type logRecord struct {
	Partition int32
	Offset    int64
	Key       string
	Value     string
	Tombstone bool
}

// topicLog is every committed record of topic on c, by partition and
// offset: the bytes a worker of the standby reads, tombstones included.
func topicLog(t *testing.T, c *kfake.Cluster, topic string) []logRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := testkit.Client(t, c)
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	parts := map[string]map[int32]kgo.Offset{topic: {}}
	for p := range want {
		parts[topic][p] = kgo.NewOffset().AtStart()
	}
	cons := testkit.Client(t, c, kgo.ConsumePartitions(parts), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var out []logRecord
	last := map[int32]*kgo.Record{}
	// done: p's last record is read. A transaction's commit marker takes
	// an offset no consumer sees: the end is reached once a record is at
	// end-1, or a transactional one at end-2 (its marker at end-1).
	done := func(p int32, end int64) bool {
		r := last[p]
		return end == 0 || r != nil && (r.Offset >= end-1 || r.Offset == end-2 && r.Attrs.IsTransactional())
	}
	reached := func() bool {
		for p, end := range want {
			if !done(p, end) {
				return false
			}
		}
		return true
	}
	for !reached() {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s: %v", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, logRecord{r.Partition, r.Offset, string(r.Key), string(r.Value), r.Value == nil})
			last[r.Partition] = r
		})
	}
	slices.SortFunc(out, func(a, b logRecord) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	return out
}

// standbyGroups is every group's committed offsets on cl.
func standbyGroups(t *testing.T, cl *kgo.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range listed.Groups() {
		f, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		f.Each(func(o kadm.OffsetResponse) {
			parts = append(parts, fmt.Sprintf("%s/%d@%d", o.Topic, o.Partition, o.At))
		})
		slices.Sort(parts)
		out[g] = fmt.Sprint(parts)
	}
	return out
}

// TestSyncIncrementalEqualsFull: a Syncer kept between syncs reads only
// what was written to its standby since (LiveRead incremental) and leaves
// it byte for byte as a new Syncer each time (a full read) leaves a twin
// standby: the same records in the offsets topics (values, tombstones,
// partitions, offsets) and the same sink groups, through changes on the
// primary and writes to the standbys by someone else between syncs, which
// the next sync finds and puts back.
func TestSyncIncrementalEqualsFull(t *testing.T) {
	ctx := context.Background()
	spec, fill := connectdemo.MigrationSpec(time.Now().Add(-time.Hour).Truncate(time.Second))
	_, acl := testkit.Cluster(t, kfake.ClusterID("primary"))
	exp, err := connectdemo.Seed(t.Context(), acl, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	if err := fill(ctx, acl); err != nil {
		t.Fatal(err)
	}
	c1, b1 := newStandby(t, acl) // kept Syncer: incremental
	c2, b2 := newStandby(t, acl) // a new Syncer every sync: full
	cfg := func(cl *kgo.Client) standby.Config {
		return standby.Config{Client: cl, Translate: standby.TranslateMM2, MM2SourceAlias: "a"}
	}
	kept, err := standby.New(cfg(b1))
	if err != nil {
		t.Fatal(err)
	}
	topics := []string{connectdemo.DefaultOffsetsTopic, connectdemo.EOSOffsetsTopic}
	round := 0
	sync := func(what string, wantWrites bool) *standby.Report {
		t.Helper()
		round++
		state := capt(t, acl)
		rep, err := kept.Sync(ctx, state, time.Now())
		if err != nil {
			t.Fatalf("%s: kept syncer: %v", what, err)
		}
		fresh, err := standby.New(cfg(b2))
		if err != nil {
			t.Fatal(err)
		}
		rep2, err := fresh.Sync(ctx, state, time.Now())
		if err != nil {
			t.Fatalf("%s: new syncer: %v", what, err)
		}
		wantRead := standby.ReadIncremental
		if round == 1 {
			wantRead = standby.ReadFull
		}
		if rep.LiveRead != wantRead || rep2.LiveRead != standby.ReadFull {
			t.Errorf("%s: live reads %s and %s, want %s and full", what, rep.LiveRead, rep2.LiveRead, wantRead)
		}
		if rep.Counts != rep2.Counts || (rep.Counts.Writes() > 0) != wantWrites {
			t.Errorf("%s: counts %+v (kept) and %+v (new), want writes %v", what, rep.Counts, rep2.Counts, wantWrites)
		}
		for _, topic := range topics {
			if l1, l2 := topicLog(t, c1, topic), topicLog(t, c2, topic); !reflect.DeepEqual(l1, l2) {
				t.Fatalf("%s: %s differs between the standbys:\nincremental %v\nfull        %v", what, topic, l1, l2)
			}
		}
		if g1, g2 := standbyGroups(t, b1), standbyGroups(t, b2); !reflect.DeepEqual(g1, g2) {
			t.Fatalf("%s: the sink groups differ:\nincremental %v\nfull        %v", what, g1, g2)
		}
		if got, want := sourceBytes(capt(t, b1)), sourceBytes(state); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the standby's source offsets are not the primary's:\n got %v\nwant %v", what, got, want)
		}
		return rep
	}
	sync("first sync", true)
	sync("in step", false)

	// The primary moves on: a value changes, a key is tombstoned, a new
	// key, a sink group commits.
	state := capt(t, acl)
	var file, other snapshot.SourceOffset
	for _, o := range state.SourceTable().Collect() {
		switch {
		case o.Connector == connectdemo.ConnFile && file.Key == nil:
			file = o
		case o.Connector != connectdemo.ConnFile && o.Connector != "" && o.Topic == connectdemo.DefaultOffsetsTopic && other.Key == nil:
			other = o
		}
	}
	if file.Key == nil || other.Key == nil {
		t.Fatal("no source keys to change")
	}
	newKey := []byte(`["` + connectdemo.ConnFile + `",{"filename":"/new/file"}]`)
	testkit.Produce(t, acl,
		&kgo.Record{Topic: file.Topic, Partition: file.Partition, Key: file.Key, Value: []byte(`{"position":777}`)},
		&kgo.Record{Topic: other.Topic, Partition: other.Partition, Key: other.Key, Value: nil},
		&kgo.Record{Topic: file.Topic, Partition: snapshot.PartitionFor(newKey, state.PartitionCount(file.Topic)), Key: newKey, Value: []byte(`{"position":1}`)})
	// A sink group that no member holds commits on the primary.
	for _, g := range state.SinkGroups {
		if g.Members > 0 || len(g.Offsets) == 0 {
			continue
		}
		o := g.Offsets[0]
		moved := kadm.Offsets{}
		moved.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset - 1, LeaderEpoch: -1})
		if _, err := kadm.NewClient(acl).CommitOffsets(ctx, g.Group, moved); err != nil {
			t.Fatal(err)
		}
		break
	}
	sync("the primary changed", true)
	sync("in step after the change", false)

	// Someone else writes to both standbys: a value, a tombstone and a
	// sink group's offset. The next sync reads it and puts the
	// primary's state back.
	foreign := func(cl *kgo.Client) {
		testkit.Produce(t, cl,
			&kgo.Record{Topic: file.Topic, Partition: file.Partition, Key: file.Key, Value: []byte(`{"position":1}`)},
			&kgo.Record{Topic: file.Topic, Partition: snapshot.PartitionFor(newKey, state.PartitionCount(file.Topic)), Key: newKey, Value: nil})
		off, err := kadm.NewClient(cl).FetchOffsets(ctx, connectdemo.GroupSinkES)
		if err != nil {
			t.Fatal(err)
		}
		moved := kadm.Offsets{}
		off.Each(func(o kadm.OffsetResponse) {
			moved.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.At - 1, LeaderEpoch: -1})
		})
		if len(moved) == 0 {
			t.Fatalf("no offsets of %s on the standby", connectdemo.GroupSinkES)
		}
		if _, err := kadm.NewClient(cl).CommitOffsets(ctx, connectdemo.GroupSinkES, moved); err != nil {
			t.Fatal(err)
		}
	}
	foreign(b1)
	foreign(b2)
	rep := sync("someone else wrote to the standby", true)
	if rep.Counts.SourceWrites < 2 || rep.Counts.SinkCommits == 0 {
		t.Errorf("the foreign writes were not all found: %+v", rep.Counts)
	}
	sync("in step after the foreign writes", false)
}
