package capture

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestConfigReaderReadsWhatIsNew: a ConfigReader's Read fetches only the
// records written since the one before, and its view is the one
// ReadConfigs builds from the whole topic.
func TestConfigReaderReadsWhatIsNew(t *testing.T) {
	_, cl := testkit.Cluster(t)
	ctx := context.Background()
	const topic = "connect-configs"
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, topic); err != nil {
		t.Fatal(err)
	}
	write := func(kv ...string) {
		t.Helper()
		var recs []*kgo.Record
		for i := 0; i < len(kv); i += 2 {
			rec := &kgo.Record{Topic: topic, Key: []byte(kv[i])}
			if kv[i+1] != "" {
				rec.Value = []byte(kv[i+1]) // "" writes a tombstone
			}
			recs = append(recs, rec)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	write("connector-a", `{"properties":{"connector.class":"FileStreamSource","name":"a"}}`, "commit-a", `{"tasks":1}`,
		"connector-b", `{"properties":{"connector.class":"FileStreamSink","topics":"t","name":"b"}}`)
	r := NewConfigReader(cl, topic)
	var version uint64
	read := func(wantRecords int64) {
		t.Helper()
		before := r.c.stats.RecordsRead
		got, v, err := r.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.c.stats.RecordsRead - before; n != wantRecords {
			t.Errorf("Read fetched %d records, want the %d written since the last", n, wantRecords)
		}
		if (v != version) != (wantRecords > 0) {
			t.Errorf("the version went from %d to %d after %d records", version, v, wantRecords)
		}
		version = v
		whole, err := ReadConfigs(ctx, cl, topic)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(whole) {
			t.Fatalf("Read has %d connectors, ReadConfigs %d", len(got), len(whole))
		}
		for name, w := range whole {
			g := got[name]
			if g.TargetState != w.TargetState || g.Tasks != w.Tasks || len(g.Config) != len(w.Config) {
				t.Errorf("%s: Read %+v, ReadConfigs %+v", name, g, w)
			}
		}
	}
	read(3)
	read(0)
	write("target-state-a", `{"state":"PAUSED","state.v2":"STOPPED"}`, "commit-a", `{"tasks":0}`)
	read(2)
	write("connector-b", "")
	read(1)
}
