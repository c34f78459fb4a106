package restore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestRunToOffsetsTopic: a restore to another offsets topic
// (--to-offsets-topic) is a restore like any other: a dry run prints the
// plan and creates nothing; the run prints the plan, stores an undo
// snapshot, creates the topic compacted with the partitions of the one the
// snapshot read, writes every key on its murmur2 partition, verifies, and
// reports the topic in the JSON document; a second run is refused, the
// topic holding records, with nothing written.
func TestRunToOffsetsTopic(t *testing.T) {
	cl, snap := small(t, "compact")
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out, warn bytes.Buffer
	env := restore.Env{Client: cl, Store: st, Out: &out, Warn: &warn}
	const topic = "carried-offsets"
	req := restore.Request{Snapshot: snap, ToOffsetsTopic: topic}
	req.Connectors = []string{"c1"}
	adm := kadm.NewClient(cl)

	dry := req
	dry.DryRun = true
	rep, err := restore.Run(ctx, env, dry)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	for _, want := range []string{`would create offsets topic "carried-offsets" (4 partitions`, "c1", "dry run: nothing written"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out.String())
		}
	}
	if rep.Plan == nil || rep.Plan.Counts().SourceWrites != 1 || rep.Undo != "" || rep.OffsetsTopic == nil || !rep.OffsetsTopic.Created {
		t.Errorf("dry run report %+v", rep)
	}
	if td, err := adm.ListTopics(ctx, topic); err != nil || td.Has(topic) {
		t.Fatalf("a dry run created %s (%v)", topic, err)
	}

	out.Reset()
	rep, err = restore.Run(ctx, env, req)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	if rep.Undo == "" || rep.Applied == nil || rep.Applied.SourceWrites != 1 || rep.Verified == nil || rep.Verified.Connectors != 1 {
		t.Fatalf("report %+v", rep)
	}
	if _, _, err := st.Snapshots().GetWith(ctx, rep.Undo, nil); err != nil {
		t.Errorf("undo snapshot %s: %v", rep.Undo, err)
	}
	for _, want := range []string{`created offsets topic "carried-offsets" (4 partitions, cleanup.policy=compact)`, "undo snapshot: " + rep.Undo + "\n",
		"verified: 1 connector matches the snapshot\n", "\n  offset.storage.topic=" + topic + "\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	doc, err := json.Marshal(rep.Document(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		UndoSnapshot string                     `json:"undo_snapshot"`
		OffsetsTopic restore.OffsetsTopicReport `json:"offsets_topic"`
		Plan         struct {
			Counts struct {
				SourceWrites int `json:"source_writes"`
			}
		}
	}
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatal(err)
	}
	want := restore.OffsetsTopicReport{Topic: topic, From: snapshot.DefaultOffsetsTopic, Partitions: 4, Created: true, WorkerSetting: "offset.storage.topic=" + topic}
	if got.OffsetsTopic != want || got.UndoSnapshot != rep.Undo || got.Plan.Counts.SourceWrites != 1 {
		t.Errorf("JSON document %s", doc)
	}

	fresh, err := kgo.NewClient(cl.Opts()...) // cl's metadata cache saw the topic missing
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	moved, err := capture.Capture(ctx, fresh, capture.Options{OffsetsTopics: []string{topic}, ConfigTopic: snapshot.DefaultConfigTopic})
	if err != nil {
		t.Fatal(err)
	}
	if moved.SourceKeys() != 1 {
		t.Fatalf("topic %s holds %d keys, want 1", topic, moved.SourceKeys())
	}
	o, w := *moved.SourceTable().At(0), *snap.SourceTable().At(0)
	if string(o.Key) != string(w.Key) || string(o.Value) != string(w.Value) || o.Partition != snapshot.PartitionFor(w.Key, 4) {
		t.Errorf("carried %s=%s on partition %d, want %s=%s on %d", o.Key, o.Value, o.Partition, w.Key, w.Value, snapshot.PartitionFor(w.Key, 4))
	}
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.On(topic, nil); err != nil || !hasConfig(v.Configs, "cleanup.policy", "compact") {
		t.Errorf("topic %s configs %+v (%v): want cleanup.policy=compact", topic, v.Configs, err)
	}

	out.Reset()
	infos, _ := st.Snapshots().List(ctx)
	rep, err = restore.Run(ctx, env, req)
	if !errors.Is(err, restore.ErrRefused) || !strings.Contains(err.Error(), "already holds records") || rep.Undo != "" {
		t.Errorf("second run: %v, report %+v", err, rep)
	}
	if again, _ := st.Snapshots().List(ctx); len(again) != len(infos) {
		t.Errorf("a refused run stored %d snapshots, had %d", len(again), len(infos))
	}
}

func hasConfig(cs []kadm.Config, key, value string) bool {
	for _, c := range cs {
		if c.Key == key && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}
