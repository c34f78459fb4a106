package capture_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// checkAgainst compares a snapshot with what the seeder wrote.
func checkAgainst(t *testing.T, snap *snapshot.Snapshot, exp *connectdemo.Expected) {
	t.Helper()
	if snap.ClusterID != connectdemo.DefaultClusterID {
		t.Errorf("cluster id %q, want %q", snap.ClusterID, connectdemo.DefaultClusterID)
	}
	// Source offsets: exactly the live keys of every offsets topic, byte for byte.
	got := map[string]map[int32]map[string][]byte{}
	for _, o := range snap.SourceTable().Collect() {
		if got[o.Topic] == nil {
			got[o.Topic] = map[int32]map[string][]byte{}
		}
		if got[o.Topic][o.Partition] == nil {
			got[o.Topic][o.Partition] = map[string][]byte{}
		}
		got[o.Topic][o.Partition][string(o.Key)] = o.Value
	}
	for _, topic := range exp.OffsetsTopics {
		want := exp.LiveKeys(topic)
		n := 0
		for p, keys := range want {
			for k, v := range keys {
				n++
				g, ok := got[topic][p][k]
				if !ok {
					t.Errorf("%s/%d: key %q missing from snapshot", topic, p, k)
					continue
				}
				if !bytes.Equal(g, v) {
					t.Errorf("%s/%d: key %q value %q, want %q", topic, p, k, g, v)
				}
			}
		}
		m := 0
		for _, keys := range got[topic] {
			m += len(keys)
		}
		if m != n {
			t.Errorf("topic %s: %d keys in snapshot, want %d", topic, m, n)
		}
	}
	if u := snap.Unparsed(); u != exp.UnparsedKeys {
		t.Errorf("unparsed keys %d, want %d", u, exp.UnparsedKeys)
	}
	// Connectors.
	for name, want := range exp.Connectors {
		c, ok := snap.Connector(name)
		if !ok {
			t.Errorf("connector %q missing", name)
			continue
		}
		if c.HasConfig != want.HasConfig || (want.HasConfig && (c.TargetState != want.TargetState || c.Tasks != want.Tasks || c.Class != want.Class || c.Type != want.Type || c.Group != want.Group || c.OffsetsTopic != want.OffsetsTopic || c.ExactlyOnce != want.ExactlyOnce)) {
			t.Errorf("connector %q:\n got %+v\nwant %+v", name, c, want)
		}
	}
	// Groups: every captured one, exact offsets; never a foreign one.
	groups := map[string]snapshot.SinkGroup{}
	for _, g := range snap.SinkGroups {
		groups[g.Group] = g
	}
	for name, want := range exp.Groups {
		g, ok := groups[name]
		if !want.Captured {
			if ok {
				t.Errorf("foreign group %q captured", name)
			}
			continue
		}
		if !ok {
			t.Errorf("group %q missing", name)
			continue
		}
		if want.Connector != "" && g.Connector != want.Connector {
			t.Errorf("group %q connector %q, want %q", name, g.Connector, want.Connector)
		}
		var gotOffs, wantOffs []string
		for _, o := range g.Offsets {
			gotOffs = append(gotOffs, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
		}
		for _, o := range want.Offsets {
			wantOffs = append(wantOffs, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
		}
		slices.Sort(gotOffs)
		slices.Sort(wantOffs)
		if !slices.Equal(gotOffs, wantOffs) {
			t.Errorf("group %q offsets\n got %v\nwant %v", name, gotOffs, wantOffs)
		}
	}
	for _, name := range exp.NotCaptured {
		if _, ok := groups[name]; ok {
			t.Errorf("group %q must not be captured", name)
		}
	}
}

func TestCaptureMatchesSeed(t *testing.T) {
	_, cl, exp := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, snap, exp)
	if len(exp.Duplicates) > 0 {
		found := false
		for _, w := range snap.Warnings {
			if bytes.Contains([]byte(w), []byte("lives in partitions")) {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning about keys in two partitions; warnings: %q", snap.Warnings)
		}
	}
}

func TestCaptureScoped(t *testing.T) {
	_, cl, exp := testkit.Seeded(t, connectdemo.DefaultSpec())
	var src, sink string
	for name, c := range exp.Connectors {
		if c.HasConfig && c.Type == snapshot.TypeSource && c.OffsetsTopic == "" && (src == "" || name < src) {
			src = name
		}
		if c.HasConfig && c.Type == snapshot.TypeSink && (sink == "" || name < sink) {
			sink = name
		}
	}
	snap, err := capture.Capture(context.Background(), cl, capture.Options{Connectors: []string{src, sink}})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Connectors) != 2 {
		t.Fatalf("scoped capture has %d connectors, want 2: %+v", len(snap.Connectors), snap.Connectors)
	}
	for _, o := range snap.SourceTable().Collect() {
		if o.Connector != src {
			t.Errorf("scoped capture holds key of %q", o.Connector)
		}
	}
	if len(snap.SourceOffsetsOf(src)) == 0 {
		t.Errorf("no source offsets for %q", src)
	}
	if len(snap.SinkGroups) != 1 || snap.SinkGroups[0].Connector != sink {
		t.Errorf("scoped sink groups %+v", snap.SinkGroups)
	}
}

func TestCaptureMissingTopic(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	_, err := capture.Capture(context.Background(), cl, capture.Options{OffsetsTopics: []string{"no-such-topic"}})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("--offsets-topic")) {
		t.Fatalf("want an error naming --offsets-topic, got %v", err)
	}
}
