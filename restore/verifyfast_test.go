package restore

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestVerifyQuickAgrees holds verifyQuick to the full comparison it stands
// in for: after a restore it finds everything matching, as a new plan
// does; after each change behind the restore's back that a new plan finds
// (a value changed, a key removed, a new key of a connector in scope, a
// copy off its murmur2 partition) or that changes where keys go (a config
// naming another offsets topic), it does not vouch; a key of a connector
// out of scope changes nothing. Each time the full Verify's plan puts the
// state back.
func TestVerifyQuickAgrees(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	kc, cl := testkit.Cluster(t)
	manual, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	ctx := context.Background()
	if _, err := connectdemo.Seed(ctx, cl, spec); err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Two source connectors without an own topic, with keys on their
	// murmur2 partitions of the worker topic: one in scope, one out.
	parts := snap.PartitionCount(snapshot.DefaultOffsetsTopic)
	var in, out string
	var key snapshot.SourceOffset
	for _, c := range snap.Connectors {
		if c.Type != snapshot.TypeSource || c.OffsetsTopic != "" || !c.HasConfig {
			continue
		}
		ks := snap.SourceOffsetsOf(c.Name)
		if len(ks) == 0 || ks[0].Topic != snapshot.DefaultOffsetsTopic || ks[0].Partition != snapshot.PartitionFor(ks[0].Key, parts) {
			continue
		}
		switch {
		case in == "":
			in, key = c.Name, ks[0]
		case out == "":
			out = c.Name
		}
	}
	if out == "" {
		t.Fatal("the default spec has no two plain source connectors")
	}
	write := func(c *kgo.Client, r *kgo.Record) {
		t.Helper()
		if err := c.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Damage it, so that the restore writes something.
	write(cl, &kgo.Record{Topic: key.Topic, Key: key.Key, Value: []byte(`{"damaged":1}`)})
	opts := Options{Options: capture.Options{Connectors: []string{in}}, SourceOnly: true}
	plan, err := NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	// agrees checks verifyQuick against a new plan: quick when nothing
	// differs (and so Verify makes no plan), not quick when wantQuick is
	// false; then puts the snapshot's state back.
	agrees := func(what string, wantQuick, wantDiffs bool) {
		t.Helper()
		quick := verifyQuick(ctx, cl, plan)
		again, err := NewPlan(ctx, cl, snap, opts)
		if err != nil {
			t.Fatal(err)
		}
		diffs := again.Differences()
		if quick != wantQuick || (len(diffs) > 0) != wantDiffs {
			t.Fatalf("%s: quick %v (want %v), a new plan's differences %q (want some: %v)", what, quick, wantQuick, diffs, wantDiffs)
		}
		if quick && len(diffs) > 0 {
			t.Fatalf("%s: quick, but a new plan differs: %q", what, diffs)
		}
		v, err := Verify(ctx, cl, plan)
		if (err != nil) != wantDiffs || (v.Plan == nil) != quick {
			t.Fatalf("%s: Verify: %v, plan made %v", what, err, v.Plan != nil)
		}
		if wantDiffs {
			if _, err := Apply(ctx, cl, v.Plan); err != nil {
				t.Fatal(err)
			}
		}
		if !verifyQuick(ctx, cl, plan) {
			t.Fatalf("%s: not quick once put back", what)
		}
	}
	agrees("after the restore", true, false)

	write(cl, &kgo.Record{Topic: key.Topic, Key: key.Key, Value: []byte(`{"behind":2}`)})
	agrees("a value changed", false, true)

	write(cl, &kgo.Record{Topic: key.Topic, Key: key.Key})
	agrees("a key removed", false, true)

	extra := []byte(`["` + in + `",{"extra":"key"}]`)
	write(cl, &kgo.Record{Topic: key.Topic, Key: extra, Value: []byte(`{"x":1}`)})
	agrees("a new key", false, true)

	off := (snapshot.PartitionFor(key.Key, parts) + 1) % parts
	write(manual, &kgo.Record{Topic: key.Topic, Partition: off, Key: key.Key, Value: key.Value})
	agrees("a copy off its murmur2 partition", false, true)

	other := []byte(`["` + out + `",{"other":"key"}]`)
	write(cl, &kgo.Record{Topic: key.Topic, Key: other, Value: []byte(`{"y":1}`)})
	agrees("a key out of scope", true, false)

	// A config naming an own offsets topic that does not exist: a new
	// plan fails, and verifyQuick must not vouch.
	cfg := []byte(`{"properties":{"connector.class":"FileStreamSource","offsets.storage.topic":"elsewhere"}}`)
	write(cl, &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("connector-" + in), Value: cfg})
	if verifyQuick(ctx, cl, plan) {
		t.Fatal("quick although the connector's config names another offsets topic now")
	}
}

// TestVerifyQuickAgreesOnGroups: the same for a sink connector's group: a
// committed offset changed, and one committed for a partition the
// snapshot does not have, are not vouched for; after the restore, and once
// put back, everything is.
func TestVerifyQuickAgreesOnGroups(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	ctx := context.Background()
	_, cl := seededDemo(t, spec)
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var g snapshot.SinkGroup
	for _, sg := range snap.SinkGroups {
		if sg.Connector != "" && sg.Members == 0 && len(sg.Offsets) > 0 {
			if c, ok := snap.Connector(sg.Connector); ok && c.HasConfig && c.Type == snapshot.TypeSink {
				g = sg
				break
			}
		}
	}
	if g.Group == "" {
		t.Fatal("the default spec has no sink connector with committed offsets")
	}
	adm := kadm.NewClient(cl)
	commit := func(topic string, part int32, at int64) {
		t.Helper()
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: topic, Partition: part, At: at, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, g.Group, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	o := g.Offsets[0]
	commit(o.Topic, o.Partition, o.Offset+7)
	opts := Options{Options: capture.Options{Connectors: []string{g.Connector}}}
	plan, err := NewPlan(ctx, cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Counts(); c.SinkCommits == 0 {
		t.Fatalf("plan %+v, want a sink commit", c)
	}
	if _, err := Apply(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	agrees := func(what string, wantQuick bool) {
		t.Helper()
		quick := verifyQuick(ctx, cl, plan)
		again, err := NewPlan(ctx, cl, snap, opts)
		if err != nil {
			t.Fatal(err)
		}
		diffs := again.Differences()
		if quick != wantQuick || (len(diffs) == 0) != wantQuick {
			t.Fatalf("%s: quick %v (want %v), a new plan's differences %q", what, quick, wantQuick, diffs)
		}
		v, err := Verify(ctx, cl, plan)
		if (err == nil) != wantQuick || (v.Plan == nil) != quick {
			t.Fatalf("%s: Verify: %v, plan made %v", what, err, v.Plan != nil)
		}
		if !wantQuick {
			if _, err := Apply(ctx, cl, v.Plan); err != nil {
				t.Fatal(err)
			}
			if !verifyQuick(ctx, cl, plan) {
				t.Fatalf("%s: not quick once put back", what)
			}
		}
	}
	agrees("after the restore", true)
	commit(o.Topic, o.Partition, o.Offset+3)
	agrees("an offset changed", false)
	commit(snapshot.DefaultOffsetsTopic, 0, 5) // a partition the snapshot's group does not have
	agrees("an offset the snapshot lacks", false)
}
