package translate_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// migration is two clusters: a, seeded with the demo's connectors and
// data topics whose records carry distinct CreateTimes, and b, holding
// MirrorMaker 2's copies a.<topic> at shifted offsets, its checkpoints of
// the es sink's group (MM2's groups.exclude left the others out) and, on
// a, its offset syncs.
type migration struct {
	a, b   *kgo.Client
	snap   *snapshot.Snapshot
	mirror *connectdemo.Mirrored
}

func newMigration(t *testing.T) *migration {
	t.Helper()
	ctx := t.Context()
	spec, fill := connectdemo.MigrationSpec(time.UnixMilli(1_700_000_000_000))
	_, a, _ := testkit.Seeded(t, spec, kfake.ClusterID("cluster-a"))
	if err := fill(ctx, a); err != nil {
		t.Fatal(err)
	}
	_, b := testkit.Cluster(t, kfake.ClusterID("cluster-b"))
	if err := connectdemo.CreateTopics(ctx, b, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(b).CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	m, err := connectdemo.MirrorTopics(ctx, a, b, connectdemo.Mirror{
		SourceAlias: "a", TargetAlias: "b",
		Topics:       []string{"orders", "clicks", "legacy.customers"},
		Shift:        func(topic string, p int32) int64 { return 3 + 2*int64(p) + int64(len(topic)%3) },
		SyncEvery:    10,
		Checkpointed: []string{connectdemo.GroupSinkES},
	})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, a, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20250101T000000.000000Z-000001"
	return &migration{a: a, b: b, snap: snap, mirror: m}
}

// record reads one record.
func record(t *testing.T, cl *kgo.Client, topic string, p int32, off int64) *kgo.Record {
	t.Helper()
	c, err := kgo.NewClient(append(cl.Opts(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(off)}}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s/%d@%d: %v", topic, p, off, err)
		}
		for _, r := range fs.Records() {
			if r.Offset == off {
				return r
			}
		}
	}
}

// groupOffsets of the snapshot, by group, topic and partition.
func groupOffsets(s *snapshot.Snapshot) map[string]map[string]map[int32]int64 {
	out := map[string]map[string]map[int32]int64{}
	for _, g := range s.SinkGroups {
		for _, o := range g.Offsets {
			if out[g.Group] == nil {
				out[g.Group] = map[string]map[int32]int64{}
			}
			if out[g.Group][o.Topic] == nil {
				out[g.Group][o.Topic] = map[int32]int64{}
			}
			out[g.Group][o.Topic][o.Partition] = o.Offset
		}
	}
	return out
}

// checkSameRecord checks that the translated offset of every sink
// partition is at the last consumed record's copy: the same key and value
// as the record before the snapshot's offset on a (re-delivered once), or
// the start of the copy for a partition nothing was consumed from.
func (m *migration) checkSameRecord(t *testing.T, out *snapshot.Snapshot, tr *translate.Translation, wantMethod string) {
	t.Helper()
	got := groupOffsets(out)
	n := 0
	for _, o := range tr.Offsets {
		if o.Untranslated {
			t.Errorf("%s %s/%d not translated: %s", o.Group, o.Topic, o.Partition, o.Why)
			continue
		}
		if o.Method != wantMethod && !(o.Old == 0 && o.Method == translate.MethodStart) {
			t.Errorf("%s %s/%d by %s, want %s", o.Group, o.Topic, o.Partition, o.Method, wantMethod)
		}
		if got[o.Group][o.NewTopic][o.Partition] != o.New {
			t.Errorf("%s %s/%d: snapshot has %d, table %d", o.Group, o.NewTopic, o.Partition, got[o.Group][o.NewTopic][o.Partition], o.New)
		}
		shift := m.mirror.Shift[o.Topic][o.Partition]
		if o.Old == 0 {
			if o.New != 0 {
				t.Errorf("%s %s/%d at 0 maps to %d, want the copy's start 0", o.Group, o.Topic, o.Partition, o.New)
			}
			continue
		}
		src := record(t, m.a, o.Topic, o.Partition, o.Old-1)
		dst := record(t, m.b, o.NewTopic, o.Partition, o.New)
		if !bytes.Equal(src.Key, dst.Key) || !bytes.Equal(src.Value, dst.Value) {
			t.Errorf("%s %s/%d: %d -> %d is record %s, want the last consumed %s", o.Group, o.Topic, o.Partition, o.Old, o.New, dst.Key, src.Key)
		}
		if o.New != o.Old-1+shift || o.Redeliver != 1 || o.Skip != 0 {
			t.Errorf("%s %s/%d: %d -> %d (re-delivers %d, skips %d), want %d re-delivering 1", o.Group, o.Topic, o.Partition, o.Old, o.New, o.Redeliver, o.Skip, o.Old-1+shift)
		}
		n++
	}
	if n < 15 {
		t.Fatalf("only %d partitions checked", n)
	}
}

func TestTranslateTimestamp(t *testing.T) {
	m := newMigration(t)
	out, tr, err := translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Method: translate.TranslateTimestamp, TopicPrefix: "a."})
	if err != nil {
		t.Fatal(err)
	}
	m.checkSameRecord(t, out, tr, translate.MethodTimestamp)
	var buf bytes.Buffer
	if err := tr.Print(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "orders/0 -> a.orders: 40 -> 42 by timestamp, re-delivers 1, skips 0") {
		t.Errorf("table:\n%s", buf.String())
	}

	// A margin re-delivers more, never skips.
	out, tr, err = translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Method: translate.TranslateTimestamp, TopicPrefix: "a.", Margin: 25 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range tr.Offsets {
		if o.Old > 2 && (o.Untranslated || o.New != o.Old-3+m.mirror.Shift[o.Topic][o.Partition] || o.Redeliver != 3) {
			t.Errorf("margin 25ms: %s %s/%d: %d -> %d re-delivering %d, want 3 records earlier", o.Group, o.Topic, o.Partition, o.Old, o.New, o.Redeliver)
		}
	}
	_ = out

	// The whole restore runs on the translated snapshot unchanged.
	out, _, err = translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Method: translate.TranslateTimestamp, TopicPrefix: "a."})
	if err != nil {
		t.Fatal(err)
	}
	restoreAll(t, m.b, out, restore.Options{AllowOtherCluster: true})
	adm := kadm.NewClient(m.b)
	for g, topics := range groupOffsets(out) {
		fetched, err := adm.FetchOffsets(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		for topic, parts := range topics {
			for p, want := range parts {
				if o, _ := fetched.Lookup(topic, p); o.At != want {
					t.Errorf("group %s %s/%d committed %d, want %d", g, topic, p, o.At, want)
				}
			}
		}
	}
}

// restoreAll runs plan, check, apply and verify.
func restoreAll(t *testing.T, cl *kgo.Client, snap *snapshot.Snapshot, opts restore.Options) {
	t.Helper()
	ctx := t.Context()
	plan, err := restore.NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Check(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Apply(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Verify(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
}

func TestTranslateMM2(t *testing.T) {
	m := newMigration(t)
	out, tr, err := translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Method: translate.TranslateMM2, SourceAlias: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got := groupOffsets(out)
	// The es sink's group: exactly the checkpointed downstream offsets,
	// never past the record the group was to read next.
	cps := m.mirror.Checkpoints[connectdemo.GroupSinkES]
	if len(cps["a.orders"]) != 6 {
		t.Fatalf("checkpoints written: %v", cps)
	}
	for p, want := range cps["a.orders"] {
		if g := got[connectdemo.GroupSinkES]["a.orders"][p]; g != want {
			t.Errorf("es a.orders/%d: %d, want the checkpoint's %d", p, g, want)
		}
	}
	for _, o := range tr.Offsets {
		if o.Group == connectdemo.GroupSinkES && (o.Method != translate.MethodCheckpoint || o.NewTopic != "a.orders") {
			t.Errorf("es %s/%d by %s into %s", o.Topic, o.Partition, o.Method, o.NewTopic)
		}
		if o.Untranslated || o.Old == 0 {
			continue
		}
		exact := o.Old + m.mirror.Shift[o.Topic][o.Partition]
		if o.New > exact {
			t.Errorf("%s %s/%d: %d -> %d is past the copy of the next record (%d)", o.Group, o.Topic, o.Partition, o.Old, o.New, exact)
		}
		if o.Group == connectdemo.GroupSinkES && (o.Redeliver != exact-o.New || o.Skip != 0) {
			t.Errorf("es %s/%d: %d -> %d re-delivers %d and skips %d, want %d and 0", o.Topic, o.Partition, o.Old, o.New, o.Redeliver, o.Skip, exact-o.New)
		}
	}
	// The others have no checkpoints: said, with MM2's setting, and
	// translated by timestamps.
	var notes string
	for _, n := range tr.Notes {
		notes += n + "\n"
	}
	if !strings.Contains(notes, `group "archive-loader" has no checkpoints`) || !strings.Contains(notes, "groups.exclude") {
		t.Errorf("notes:\n%s", notes)
	}
	for _, o := range tr.Offsets {
		if o.Group != connectdemo.GroupSinkES && o.Method != translate.MethodTimestamp {
			t.Errorf("%s %s/%d by %s, want timestamp", o.Group, o.Topic, o.Partition, o.Method)
		}
	}

	// With the source cluster, the offset syncs come first.
	_, tr, err = translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Method: translate.TranslateMM2, SourceAlias: "a", Source: m.a})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range tr.Offsets {
		if o.Group == connectdemo.GroupSinkES || o.Untranslated {
			if o.Untranslated {
				t.Errorf("%s %s/%d: %s", o.Group, o.Topic, o.Partition, o.Why)
			}
			continue
		}
		shift := m.mirror.Shift[o.Topic][o.Partition]
		// Syncs every 10 records and on the last: OffsetSyncStore's rule.
		last := map[string]int64{"clicks": 59, "orders": 39, "legacy.customers": 9}[o.Topic]
		up := min(o.Old/10*10, last)
		if o.Old >= last {
			up = last
		}
		want := up + shift
		if o.Old != up {
			want++
		}
		if o.Method != translate.MethodOffsetSync || o.New != want {
			t.Errorf("%s %s/%d: %d -> %d by %s, want %d by offset syncs", o.Group, o.Topic, o.Partition, o.Old, o.New, o.Method, want)
		}
	}
}

func TestTranslateRename(t *testing.T) {
	m := newMigration(t)
	rename := map[string]string{connectdemo.ConnFile: "file <new>", connectdemo.ConnSinkES: "es-new", connectdemo.ConnMirror: "a->b.Mirror\U0001F600"}
	out, tr, err := translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Rename: rename, TopicPrefix: "a."})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Renamed) != 3 {
		t.Errorf("renamed: %q", tr.Renamed)
	}
	n := 0
	for _, o := range m.snap.SourceTable().Collect() {
		newName, ok := rename[o.Connector]
		if !ok {
			continue
		}
		_, part, raw, err := connectjson.ParseKey(o.Key)
		if err != nil {
			t.Fatal(err)
		}
		// What a worker writes for the new name: the name Jackson-escaped,
		// the partition map as the connector built it (its bytes).
		prefix := connectjson.MarshalKey(newName, nil) // ["name",{}]
		want := append(append([]byte(nil), prefix[:len(prefix)-3]...), raw...)
		want = append(want, ']')
		if canon := connectjson.MarshalKey(newName, part); bytes.Equal(raw, connectjson.Marshal(part)) && !bytes.Equal(want, canon) {
			t.Fatalf("key %s: %s differs from the worker's %s", o.Key, want, canon)
		}
		found := false
		for _, r := range out.SourceTable().Collect() {
			if bytes.Equal(r.Key, want) && bytes.Equal(r.Value, o.Value) && r.Connector == newName {
				found = true
			}
			if r.Connector == o.Connector {
				t.Fatalf("old name %q still in the translated snapshot", o.Connector)
			}
		}
		if !found {
			t.Errorf("no key %s for %s", want, o.Key)
		}
		n++
	}
	if n < 3 {
		t.Fatalf("only %d keys renamed", n)
	}
	g, ok := out.SinkGroupOf("es-new")
	if !ok || g.Group != "connect-es-new" {
		t.Fatalf("es-new's group: %+v", g)
	}
	// A new connector whose config on the target names its group gets it.
	if err := m.b.ProduceSync(t.Context(), &kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-es-new"),
		Value: []byte(`{"properties":{"connector.class":"io.confluent.connect.elasticsearch.ElasticsearchSinkConnector","topics":"a.orders","consumer.override.group.id":"es-custom","name":"es-new"}}`)},
		// Created stopped (KIP-980), as the runbook says.
		&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("commit-es-new"), Value: []byte(`{"tasks":0}`)},
		&kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("target-state-es-new"), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	custom, _, err := translate.Translate(t.Context(), m.b, m.snap, translate.TranslateOptions{Rename: rename, TopicPrefix: "a."})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := custom.SinkGroupOf("es-new"); !ok || g.Group != "es-custom" {
		t.Fatalf("es-new's group with its config naming es-custom: %+v", g)
	}
	restoreAll(t, m.b, custom, restore.Options{AllowOtherCluster: true})
	if got, err := kadm.NewClient(m.b).FetchOffsets(t.Context(), "es-custom"); err != nil || len(got["a.orders"]) != 6 {
		t.Fatalf("group es-custom after the restore: %v, %v", got, err)
	}
	live, err := restore.CaptureLive(t.Context(), m.b, out, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(live.SourceOffsetsOf("file <new>")) == 0 || len(live.SourceOffsetsOf(connectdemo.ConnFile)) != 0 {
		t.Errorf("after the restore: %d keys of the new name, %d of the old", len(live.SourceOffsetsOf("file <new>")), len(live.SourceOffsetsOf(connectdemo.ConnFile)))
	}
}

// TestTranslateRenameStrayCopy: a key the snapshot holds twice in one
// offsets topic, on its murmur2 partition (the copy the worker writes) and
// on another, lower one (written by hand, or left when partitions were
// added), is renamed with the value of its murmur2 partition: renamed,
// both copies land on one partition, and the stray one, ordered first,
// took the key over.
func TestTranslateRenameStrayCopy(t *testing.T) {
	_, b := testkit.Cluster(t, kfake.ClusterID("cluster-b"))
	const parts = 25
	var key []byte
	var right int32
	for i := 0; right == 0; i++ {
		key = []byte(`["src",{"file":"/f` + strconv.Itoa(i) + `"}]`)
		right = snapshot.PartitionFor(key, parts)
	}
	tp := make([]snapshot.TopicPartition, parts)
	for i := range tp {
		tp[i].Partition = int32(i)
	}
	snap := &snapshot.Snapshot{ID: "20260101T000000.000000Z-000001", ClusterID: "cluster-a",
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: tp}},
		Connectors: []snapshot.Connector{{Name: "src", Type: snapshot.TypeSource}},
	}
	snap.SetSourceOffsets([]snapshot.SourceOffset{
		{Topic: snapshot.DefaultOffsetsTopic, Partition: 0, Key: key, Value: []byte(`{"position":1}`), Connector: "src"},
		{Topic: snapshot.DefaultOffsetsTopic, Partition: right, Key: key, Value: []byte(`{"position":99}`), Connector: "src"},
	})
	out, tr, err := translate.Translate(t.Context(), b, snap, translate.TranslateOptions{Rename: map[string]string{"src": "dst"}})
	if err != nil {
		t.Fatal(err)
	}
	got := out.SourceOffsetsOf("dst")
	if len(got) != 1 || string(got[0].Value) != `{"position":99}` || got[0].Partition != snapshot.PartitionFor(got[0].Key, parts) {
		t.Fatalf("renamed: %+v, want one key with the value of partition %d on its murmur2 partition", got, right)
	}
	said := strings.Join(tr.Notes, "\n")
	if !strings.Contains(said, "is in partitions "+strconv.Itoa(int(right))+`, 0 of "`+snapshot.DefaultOffsetsTopic+`"`) || !strings.Contains(said, "the value of partition "+strconv.Itoa(int(right))) {
		t.Errorf("notes: %q", tr.Notes)
	}
}

// TestTranslateRenameOntoNewConnector: the new connector was created on
// the cluster before the restore (STOPPED, as the runbook has it), so a
// later snapshot holds it too, without offsets. Restoring only the old
// connector renames its offsets onto the new one; the snapshot's own
// entry of the new name is out of scope and left out. Restoring the whole
// snapshot would write both, and is refused with the scoped command.
func TestTranslateRenameOntoNewConnector(t *testing.T) {
	_, b := testkit.Cluster(t, kfake.ClusterID("cluster-b"))
	tp := make([]snapshot.TopicPartition, 25)
	for i := range tp {
		tp[i].Partition = int32(i)
	}
	key := []byte(`["src",{"file":"/f"}]`)
	snap := &snapshot.Snapshot{ID: "20260101T000000.000000Z-000002", ClusterID: "cluster-a",
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: tp}},
		Connectors: []snapshot.Connector{{Name: "dst", Type: snapshot.TypeSource, TargetState: snapshot.StateStopped}, {Name: "src", Type: snapshot.TypeSource}},
	}
	snap.SetSourceOffsets([]snapshot.SourceOffset{
		{Topic: snapshot.DefaultOffsetsTopic, Partition: snapshot.PartitionFor(key, 25), Key: key, Value: []byte(`{"position":7}`), Connector: "src"},
	})
	rename := map[string]string{"src": "dst"}
	out, _, err := translate.Translate(t.Context(), b, snap, translate.TranslateOptions{Rename: rename, Connectors: []string{"src"}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range out.Connectors {
		if c.Name == "dst" {
			n++
		}
	}
	if got := out.SourceOffsetsOf("dst"); n != 1 || len(got) != 1 || string(got[0].Value) != `{"position":7}` {
		t.Fatalf("renamed onto dst: %d connectors named dst, offsets %+v", n, got)
	}
	if offs := snap.SourceTable().Collect(); len(offs) != 1 || offs[0].Connector != "src" {
		t.Fatalf("the snapshot translated was changed: %+v", offs)
	}
	_, _, err = translate.Translate(t.Context(), b, snap, translate.TranslateOptions{Rename: rename})
	if err == nil || !strings.Contains(err.Error(), "--connector src") {
		t.Fatalf("the whole snapshot renamed onto a connector it holds: %v, want a refusal naming --connector src", err)
	}
}
