package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// update rewrites the fixtures of the current format version (and any
// other golden file of the package's tests): go test ./snapshot -update.
// Fixtures of older versions are never rewritten.
var update = flag.Bool("update", false, "rewrite testdata fixtures of the current format version")

func TestBytesJSON(t *testing.T) {
	tests := []struct {
		name string
		in   Bytes
		json string
	}{
		{"nil", nil, `null`},
		{"empty", Bytes{}, `""`},
		{"ascii", Bytes("abc"), `"abc"`},
		{"html not escaped", Bytes(`<>&`), `"<>&"`},
		{"arrow", Bytes(`a->b`), `"a->b"`},
		{"line separator", Bytes("a\u2028b"), `"a\u2028b"`},
		{"raw escape sequence kept as ASCII", Bytes(`\uD83D\uDE00`), `"\\uD83D\\uDE00"`},
		{"supplementary character", Bytes("😀"), `"😀"`},
		{"NUL is valid UTF-8", Bytes("\x00"), `"\u0000"`},
		{"invalid UTF-8", Bytes{0xff, 0xfe}, `{"base64":"//4="}`},
		{"encoded surrogate is invalid UTF-8", Bytes{0xed, 0xa0, 0xbd}, `{"base64":"7aC9"}`},
		{"truncated multibyte", Bytes{'a', 0xc3}, `{"base64":"YcM="}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.MarshalJSON()
			if err != nil || string(got) != tt.json {
				t.Errorf("MarshalJSON(%q) = %s, %v; want %s", []byte(tt.in), got, err, tt.json)
			}
			// json.Marshal HTML-escapes what MarshalJSON returns; Encode
			// does not. Both must decode to the same bytes.
			escaped, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatalf("Marshal(%q): %v", []byte(tt.in), err)
			}
			for _, data := range [][]byte{got, escaped} {
				var back Bytes
				if err := json.Unmarshal(data, &back); err != nil {
					t.Fatalf("Unmarshal(%s): %v", data, err)
				}
				if !bytes.Equal(back, tt.in) || (back == nil) != (tt.in == nil) {
					t.Errorf("Unmarshal(%s) = %#v, want %#v", data, back, tt.in)
				}
			}
		})
	}

	decodeOnly := []struct {
		json    string
		want    Bytes
		wantErr bool
	}{
		{json: ` null `, want: nil},
		{json: `{"base64":""}`, want: Bytes{}},
		{json: `"\ud83d\ude00"`, want: Bytes("😀")},
		{json: `"\u003c"`, want: Bytes("<")},
		{json: `123`, wantErr: true},
		{json: `[1]`, wantErr: true},
		{json: `{"b64":"AA=="}`, wantErr: true},
		{json: `{"base64":"!!"}`, wantErr: true},
	}
	for _, tt := range decodeOnly {
		var got Bytes
		err := json.Unmarshal([]byte(tt.json), &got)
		if (err != nil) != tt.wantErr || !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("Unmarshal(%s) = %#v, %v; want %#v, error %v", tt.json, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDecodeVersion(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		wantErr error
		text    string
	}{
		{name: "current", doc: `{"version":1,"id":"x","source_offsets":[{"key":{"base64":"/w=="},"value":""}]}`},
		{name: "unknown fields ignored", doc: `{"version":1,"future":true}`},
		{name: "newer", doc: `{"version":99,"id":"x"}`, wantErr: ErrUnsupportedVersion, text: "version 99"},
		{name: "zero", doc: `{"version":0}`, wantErr: ErrUnsupportedVersion, text: "version 0"},
		{name: "negative", doc: `{"version":-1}`, wantErr: ErrUnsupportedVersion, text: "-1"},
		{name: "newer with a body this build cannot read", doc: `{"version":2,"source_offsets":"moved"}`, wantErr: ErrUnsupportedVersion, text: "version 2"},
		{name: "missing", doc: `{"id":"x"}`, wantErr: ErrCorrupt, text: "no version"},
		{name: "string version", doc: `{"version":"1"}`, wantErr: ErrCorrupt},
		{name: "not JSON", doc: `PK\x03\x04`, wantErr: ErrCorrupt},
		{name: "empty", doc: ``, wantErr: ErrCorrupt},
		{name: "trailing data", doc: `{"version":1} {}`, wantErr: ErrCorrupt},
		{name: "bad bytes", doc: `{"version":1,"source_offsets":[{"key":7}]}`, wantErr: ErrCorrupt, text: "version 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Decode([]byte(tt.doc))
			if tt.wantErr == nil {
				if err != nil || s.Version != 1 {
					t.Errorf("Decode: %+v, %v", s, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(fmt.Sprint(err), tt.text) {
				t.Errorf("Decode: %v, want %v saying %q", err, tt.wantErr, tt.text)
			}
		})
	}
}

// fixtureVersions are the format versions that have fixtures under
// testdata/: v<N>.snap, a stored object exactly as Store.Put wrote it, and
// v<N>.json, its plain document. Every version ever written keeps its
// fixtures, and they must decode forever.
var fixtureVersions = []int{1}

// fixtureID is the ID of every fixture snapshot.
const fixtureID = "20261130T134920.123456Z-0a1b2c"

// fixtureSnapshot is the snapshot the current version's fixtures are
// written from with -update.
func fixtureSnapshot() *Snapshot {
	s := &Snapshot{
		Version:        Version,
		ID:             fixtureID,
		CreatedAt:      time.Date(2026, 11, 30, 13, 49, 20, 123456000, time.UTC),
		ProgramVersion: "v0.1.0-fixture",
		ClusterID:      "lkc-7q2x9",
		Reason:         ReasonScheduled,
		Topics: []Topic{
			{Name: "connect-offsets", Role: RoleOffsets, Partitions: []TopicPartition{
				{Partition: 0, StartOffset: 0, EndOffset: 1200},
				{Partition: 1, StartOffset: 17, EndOffset: 845},
			}},
			{Name: "connect-configs", Role: RoleConfig, Partitions: []TopicPartition{{Partition: 0, StartOffset: 0, EndOffset: 64}}},
		},
		Connectors: []Connector{
			{Name: "jdbc-orders", Type: TypeSource, Class: "io.confluent.connect.jdbc.JdbcSourceConnector", HasConfig: true,
				ConfigHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", TargetState: StateStopped, Tasks: 0},
			{Name: "s3-sink", Type: TypeSink, Class: "io.confluent.connect.s3.S3SinkConnector", HasConfig: true,
				TargetState: StateStarted, Tasks: 4, Group: "connect-s3-sink"},
			{Name: "gone-source", Type: TypeUnknown, Tasks: -1},
		},
		src: NewSourceTable([]SourceOffset{
			{Topic: "connect-offsets", Partition: 0, Offset: 1187,
				Key:             Bytes(`["jdbc-orders",{"protocol":"1","table":"shop.orders"}]`),
				Value:           Bytes("{\"incrementing\":98765,\"note\":\"<>&\u2028\"}"), // a raw U+2028
				Connector:       "jdbc-orders",
				SourcePartition: json.RawMessage(`{"protocol":"1","table":"shop.orders"}`),
				SourceOffset:    json.RawMessage("{\"incrementing\":98765,\"note\":\"<>&\u2028\"}")},
			{Topic: "connect-offsets", Partition: 1, Offset: 12,
				Key:        Bytes{0x00, 0xff, 0xfe, 'x', 0x80},
				Value:      Bytes{0xc3, 0x28},
				ParseError: "key is not JSON"},
			{Topic: "connect-offsets", Partition: 1, Offset: 840,
				Key:       Bytes(`["gone-source",{"k":"\uD83D\uDE00"}]`),
				Value:     Bytes{},
				Connector: "gone-source"},
		}),
		SinkGroups: []SinkGroup{{
			Group: "connect-s3-sink", Connector: "s3-sink", State: "Empty", Members: 0,
			Offsets: []SinkOffset{
				{Topic: "orders", Partition: 0, Offset: 5000, LeaderEpoch: 3},
				{Topic: "orders", Partition: 1, Offset: 4999, LeaderEpoch: -1, Metadata: "s3"},
			},
		}},
		Warnings: []string{"1 source offset key did not parse"},
	}
	s.Normalize()
	return s
}

// writeFixtures writes testdata/v<Version>.json from fixtureSnapshot; the
// store's tests write v<Version>.snap from it (go test ./snapshot/store
// -update).
func writeFixtures(t *testing.T) {
	var doc bytes.Buffer
	if err := fixtureSnapshot().Encode(&doc); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("v%d.json", Version)
	if err := os.WriteFile(filepath.Join("testdata", name), doc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s", name)
}

// TestFixtures decodes the document of every format version and checks
// it holds the fixture; the store's tests read the stored objects.
func TestFixtures(t *testing.T) {
	if *update {
		writeFixtures(t)
	}
	for _, v := range fixtureVersions {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("v%d.json", v)))
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := Decode(doc)
			if err != nil {
				t.Fatalf("Decode(v%d.json): %v", v, err)
			}
			checkFixtureV1(t, fromJSON)
		})
	}
}

// checkFixtureV1 checks exact values of the version 1 fixture; every
// later version's fixture holds the same values.
func checkFixtureV1(t *testing.T, s *Snapshot) {
	t.Helper()
	if s.Version != 1 || s.ID != fixtureID || s.ClusterID != "lkc-7q2x9" || s.Reason != ReasonScheduled {
		t.Errorf("version %d, ID %s, cluster %s, reason %s", s.Version, s.ID, s.ClusterID, s.Reason)
	}
	if want := time.Date(2026, 11, 30, 13, 49, 20, 123456000, time.UTC); !s.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt = %v, want %v", s.CreatedAt, want)
	}
	if len(s.Connectors) != 3 || s.SourceKeys() != 3 || len(s.SinkGroups) != 1 || len(s.Topics) != 2 {
		t.Fatalf("%d connectors, %d source offsets, %d sink groups, %d topics",
			len(s.Connectors), s.SourceKeys(), len(s.SinkGroups), len(s.Topics))
	}
	if c, ok := s.Connector("jdbc-orders"); !ok || !c.Stopped() || c.Type != TypeSource || c.ConfigHash[:8] != "9f86d081" {
		t.Errorf("connector jdbc-orders = %+v", c)
	}
	if c, ok := s.Connector("gone-source"); !ok || c.HasConfig || c.Tasks != -1 {
		t.Errorf("connector gone-source = %+v", c)
	}
	wantOffsets := []struct {
		partition int32
		offset    int64
		key       []byte
		value     []byte
	}{
		{0, 1187, []byte(`["jdbc-orders",{"protocol":"1","table":"shop.orders"}]`), []byte("{\"incrementing\":98765,\"note\":\"<>&\u2028\"}")},
		{1, 12, []byte{0x00, 0xff, 0xfe, 'x', 0x80}, []byte{0xc3, 0x28}},
		{1, 840, []byte(`["gone-source",{"k":"\uD83D\uDE00"}]`), []byte{}},
	}
	for i, w := range wantOffsets {
		o := *s.SourceTable().At(int32(i))
		if o.Topic != "connect-offsets" || o.Partition != w.partition || o.Offset != w.offset ||
			!bytes.Equal(o.Key, w.key) || !bytes.Equal(o.Value, w.value) || o.Value == nil {
			t.Errorf("source offset %d = %s/%d@%d key %q value %#v", i, o.Topic, o.Partition, o.Offset, o.Key, o.Value)
		}
	}
	if s.Unparsed() != 1 || s.SourceTable().At(1).ParseError != "key is not JSON" {
		t.Errorf("unparsed = %d, parse error %q", s.Unparsed(), s.SourceTable().At(1).ParseError)
	}
	g, ok := s.SinkGroupOf("s3-sink")
	if !ok || g.Group != "connect-s3-sink" || len(g.Offsets) != 2 ||
		g.Offsets[1] != (SinkOffset{Topic: "orders", Partition: 1, Offset: 4999, LeaderEpoch: -1, Metadata: "s3"}) {
		t.Errorf("sink group = %+v", g)
	}
}
