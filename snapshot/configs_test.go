package snapshot

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"testing"
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
