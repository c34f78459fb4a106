package snapshot

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/memblob"
)

// fixtureConfigs are the configs of testdata/v1-configs.json, the
// fixture of a snapshot that keeps connector configs.
var fixtureConfigs = map[string]map[string]string{
	"jdbc-orders": {
		"connector.class":     "io.confluent.connect.jdbc.JdbcSourceConnector",
		"name":                "jdbc-orders",
		"connection.url":      "jdbc:postgresql://db:5432/shop",
		"connection.password": "${file:/etc/kafka/secrets.properties:db.password}",
		"table.whitelist":     "shop.orders",
		"tasks.max":           "1",
		"note":                "<>&\u2028 \"quoted\"",
	},
	"s3-sink": {
		"connector.class":       "io.confluent.connect.s3.S3SinkConnector",
		"name":                  "s3-sink",
		"topics":                "orders",
		"aws.secret.access.key": "plain-text-secret",
		"key.converter":         "org.apache.kafka.connect.storage.StringConverter",
		"tasks.max":             "4",
	},
}

// fixtureSnapshotConfigs is fixtureSnapshot with its connectors' configs.
func fixtureSnapshotConfigs() *Snapshot {
	s := fixtureSnapshot()
	for i := range s.Connectors {
		s.Connectors[i].Config = fixtureConfigs[s.Connectors[i].Name]
	}
	return s
}

// TestFixtureConfigs: the document with configs decodes to the configs
// written, encodes to the same bytes, and keeps them through a store (Get
// and GetForRestore); the fixtures without configs decode as before, with
// none.
func TestFixtureConfigs(t *testing.T) {
	path := filepath.Join("testdata", "v1-configs.json")
	if *update {
		var b bytes.Buffer
		if err := fixtureSnapshotConfigs().Encode(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(doc)
	if err != nil {
		t.Fatalf("Decode(v1-configs.json): %v", err)
	}
	checkFixtureV1(t, s)
	checkConfigs := func(t *testing.T, s *Snapshot) {
		t.Helper()
		for _, c := range s.Connectors {
			if want := fixtureConfigs[c.Name]; !maps.Equal(c.Config, want) || (want == nil) != (c.Config == nil) {
				t.Errorf("connector %s config = %v, want %v", c.Name, c.Config, want)
			}
		}
	}
	checkConfigs(t, s)
	var again bytes.Buffer
	if err := s.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), doc) {
		t.Errorf("encoded again:\n%s\nwant\n%s", again.Bytes(), doc)
	}
	ctx := context.Background()
	st := NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	if _, err := st.Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, _, err := st.Get(ctx, "latest")
	if err != nil {
		t.Fatal(err)
	}
	checkConfigs(t, got)
	forRestore, _, err := st.GetForRestore(ctx, "latest", []string{"s3-sink"}, RestoreRead{})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := forRestore.Connector("s3-sink"); !ok || !maps.Equal(c.Config, fixtureConfigs["s3-sink"]) {
		t.Errorf("GetForRestore: s3-sink = %+v", c)
	}

	// The fixtures of a build that kept no configs still decode: no config.
	old, err := os.ReadFile(filepath.Join("testdata", "v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	oldSnap, err := Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range oldSnap.Connectors {
		if c.Config != nil {
			t.Errorf("v1.json: connector %s has config %v", c.Name, c.Config)
		}
	}
}

// TestJournalConfigs: a state rebuilt from journal entries decoded from a
// segment (no Conn.Config) has each connector's config, also after a
// merge whose last entry of the connector is a target state.
func TestJournalConfigs(t *testing.T) {
	conn := &Connector{Type: TypeSource, HasConfig: true, TargetState: StateStarted, Tasks: -1}
	stopped := &Connector{Type: TypeSource, HasConfig: true, TargetState: StateStopped, Tasks: -1}
	entries := []Entry{
		{Kind: EntryConfig, Offset: 1, Time: 1, Key: []byte("connector-a"), Value: []byte(`{"properties":{"name":"a","tasks.max":"1"}}`), Connector: "a", Conn: conn},
		{Kind: EntryConfig, Offset: 2, Time: 2, Key: []byte("connector-a"), Value: []byte(`{"properties":{"name":"a","tasks.max":"2"}}`), Connector: "a", Conn: conn},
		{Kind: EntryConfig, Offset: 3, Time: 3, Key: []byte("target-state-a"), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`), Connector: "a", Conn: stopped},
	}
	decoded, err := DecodeEntries(EncodeEntries(entries), len(entries))
	if err != nil {
		t.Fatal(err)
	}
	m := newMerger(LevelMinute)
	m.add(&Segment{Entries: decoded})
	merged, err := DecodeEntries(EncodeEntries(m.entries()), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"name": "a", "tasks.max": "2"}
	for name, es := range map[string][]Entry{"raw": decoded, "merged": merged} {
		st := newReplayState(&Snapshot{})
		st.apply(es, 10, &StateInfo{})
		c := st.conns["a"]
		if !maps.Equal(c.Config, want) || c.TargetState != StateStopped {
			t.Errorf("%s: connector a = %+v, want config %v, STOPPED", name, c, want)
		}
	}
}
