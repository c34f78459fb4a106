package restore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// planText is everything a plan shows: its printed form, its JSON
// document, its counts and differences, and every change compared.
func planText(t *testing.T, p *Plan) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.Print(&b); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(p.document())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "%s\n%+v\n%q\n", doc, p.Counts(), p.Differences())
	for _, cp := range p.Connectors {
		if cp.Source == nil {
			continue
		}
		for i, ch := range cp.Source.Changes() {
			if !reflect.DeepEqual(ch, cp.Source.Change(i)) {
				t.Fatalf("connector %s: Changes and Change(%d) differ", cp.Name, i)
			}
			fmt.Fprintf(&b, "%s %+v\n", cp.Name, ch)
		}
	}
	return b.String()
}

// TestPlanOfSourceTable: a plan of a snapshot read for a restore (its
// source offsets in a SourceTable) is the plan of the same snapshot read
// with Get (SourceOffsets): the same text, document, counts, differences
// and changes; on the demo spec, and on random snapshots over a random
// live state (keys changed, added and removed, copies off their murmur2
// partition, keys in two partitions, unparsed keys, connectors in and out
// of scope).
func TestPlanOfSourceTable(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenStore(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	both := func(t *testing.T, cl *kgo.Client, snap *snapshot.Snapshot, opts Options) {
		t.Helper()
		snap.ID = ""
		info, err := st.Snapshots().Put(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		whole, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		compact, _, err := st.Snapshots().GetWith(ctx, info.ID, store.RestoreSink(store.RestoreRead{NoSinkOffsets: opts.SourceOnly}))
		if err != nil {
			t.Fatal(err)
		}
		if !compact.CompactOffsets() {
			t.Fatal("GetForRestore kept full SourceOffsets")
		}
		pw, errw := NewPlan(ctx, cl, whole, opts)
		pc, errc := NewPlan(ctx, cl, compact, opts)
		if fmt.Sprint(errw) != fmt.Sprint(errc) {
			t.Fatalf("errors differ: %v / %v", errw, errc)
		}
		if errw != nil {
			return
		}
		strays, from := 0, 0
		for _, cp := range pw.Connectors {
			if cp.Source != nil {
				for _, ch := range cp.Source.Changes() {
					strays += map[bool]int{true: 1}[ch.Stray]
					from += map[bool]int{true: 1}[ch.From != ""]
				}
			}
		}
		t.Logf("%+v, %d warnings, %d strays, %d moved", pw.Counts(), len(pw.Warnings), strays, from)
		if w, c := planText(t, pw), planText(t, pc); w != c {
			t.Fatalf("plans differ:\n%s\n---- from the table:\n%s", w, c)
		}
	}

	t.Run("demo", func(t *testing.T) {
		spec := connectdemo.DefaultSpec()
		_, cl := seededDemo(t, spec)
		snap, err := capture.Capture(ctx, cl, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// What changed since: some keys of every topic rewritten.
		for i, o := range snap.SourceTable().Collect() {
			if i%3 == 0 {
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: o.Topic, Key: o.Key, Value: []byte(`{"changed":1}`)}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		both(t, cl, snap, Options{})
		both(t, cl, snap, Options{SourceOnly: true})
		both(t, cl, snap, Options{Options: capture.Options{Connectors: []string{snap.Connectors[0].Name}}})
	})

	t.Run("random", func(t *testing.T) {
		kc, err := connectdemo.NewCluster()
		if err != nil {
			t.Fatal(err)
		}
		defer kc.Close()
		cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		const parts = 5
		for _, tp := range []string{snapshot.DefaultConfigTopic, snapshot.DefaultOffsetsTopic, "own-offsets"} {
			if _, err := adm.CreateTopic(ctx, parts, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, tp); err != nil {
				t.Fatal(err)
			}
		}
		r := rand.New(rand.NewPCG(5, 6))
		key := func() []byte {
			if r.IntN(20) == 0 {
				return []byte(fmt.Sprintf("unparsed-%d", r.IntN(30)))
			}
			return []byte(fmt.Sprintf(`["c%d",{"file":"f%d"}]`, r.IntN(4), r.IntN(40)))
		}
		place := func(k []byte) int32 {
			if r.IntN(10) == 0 {
				return r.Int32N(parts) // by hand, anywhere
			}
			return snapshot.PartitionFor(k, parts)
		}
		for round := range 8 {
			// The live state: random records.
			for range 60 {
				k := key()
				rec := &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: k, Partition: place(k), Value: []byte(fmt.Sprintf(`{"live":%d}`, r.IntN(3)))}
				if r.IntN(8) == 0 {
					rec.Value = nil
				}
				if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			snap := (&snapshot.Snapshot{
				Version: snapshot.Version, ClusterID: connectdemo.DefaultClusterID, Reason: snapshot.ReasonManual,
				Topics: []snapshot.Topic{
					{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, parts)},
					{Name: "own-offsets", Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, parts)},
				},
				Connectors: []snapshot.Connector{
					{Name: "c0", Type: snapshot.TypeSource, Tasks: -1},
					{Name: "c1", Type: snapshot.TypeSource, Tasks: -1, OffsetsTopic: "own-offsets"},
					{Name: "c2", Type: snapshot.TypeSource, Tasks: -1},
				},
				SinkGroups: []snapshot.SinkGroup{},
			}).WithSourceOffsets([]snapshot.SourceOffset{})
			seen := map[string]bool{}
			for range 50 {
				k := key()
				topic := snapshot.DefaultOffsetsTopic
				if r.IntN(4) == 0 {
					topic = "own-offsets"
				}
				p := place(k)
				if seen[fmt.Sprint(topic, p, string(k))] {
					continue
				}
				seen[fmt.Sprint(topic, p, string(k))] = true
				conn, _ := capture.KeyConnector(k)
				snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: topic, Partition: p, Key: k,
					Value: []byte(fmt.Sprintf(`{"snap":%d}`, r.IntN(3))), Connector: string(conn)})
			}
			snap.Normalize()
			for _, opts := range []Options{{}, {SourceOnly: true}, {Options: capture.Options{Connectors: []string{"c1", "c3"}}}} {
				t.Run(fmt.Sprint(round, opts.Connectors), func(t *testing.T) { both(t, cl, snap, opts) })
			}
		}
	})
}
