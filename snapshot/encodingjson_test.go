package snapshot_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestDocumentUnchangedByOneSourceForm: a Snapshot holding its source
// offsets in a SourceTable (not an exported SourceOffsets field) encodes
// to the document encoding/json wrote for the struct with that field, byte
// for byte, null and [] kept apart; decodes back to what it was; and
// json.Marshal of it is that document (HTML escaped, as encoding/json
// escapes). Regression guard for issue #38's one source-offset form: the
// snapshot format is a contract.
func TestDocumentUnchangedByOneSourceForm(t *testing.T) {
	fixture, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	v1, err := snapshot.Decode(fixture)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rest := (&snapshot.Snapshot{Version: snapshot.Version, ID: "x", CreatedAt: at, Captured: snapshot.CapturedConnectREST, ConnectURL: "http://c:8083",
		Topics: []snapshot.Topic{}, Connectors: []snapshot.Connector{}, SinkGroups: []snapshot.SinkGroup{}}).
		WithSourceOffsets([]snapshot.SourceOffset{{Topic: "", Partition: snapshot.NoPartition, Offset: -1,
			Key: snapshot.Bytes(`["src",{"f":"<a&b>"}]`), Value: snapshot.Bytes(`{"p":1}`), Connector: "src",
			SourcePartition: json.RawMessage(`{"f":"<a&b>"}`), SourceOffset: json.RawMessage(`{"p":1}`)}})
	for name, s := range map[string]*snapshot.Snapshot{
		"fixture":            v1,
		"rest":               rest,
		"zero":               {},
		"empty, not null":    (&snapshot.Snapshot{Version: snapshot.Version, CreatedAt: at}).WithSourceOffsets([]snapshot.SourceOffset{}),
		"null set as null":   (&snapshot.Snapshot{Version: snapshot.Version, CreatedAt: at}).WithSourceOffsets(nil),
		"built by appending": func() *snapshot.Snapshot { c := *rest; c.AppendSourceOffsets(*rest.SourceTable().At(0)); return &c }(),
	} {
		want, err := testkit.EncodingJSON(*s, s.SourceTable().Collect())
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := s.Encode(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: Encode\n%s\nencoding/json of the old struct\n%s", name, got.Bytes(), want)
		}
		if s.Version != 0 { // a version Decode reads
			back, err := snapshot.Decode(got.Bytes())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if again, _ := testkit.EncodingJSON(*back, back.SourceTable().Collect()); !bytes.Equal(again, want) {
				t.Errorf("%s: decoded and encoded again\n%s\nwant\n%s", name, again, want)
			}
			if back.SourceTable().Null() != s.SourceTable().Null() {
				t.Errorf("%s: null %v decoded as null %v", name, s.SourceTable().Null(), back.SourceTable().Null())
			}
		}
		marshalled, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var escaped bytes.Buffer
		if err := json.Compact(&escaped, want); err != nil {
			t.Fatal(err)
		}
		if html := htmlEscaped(escaped.Bytes()); !bytes.Equal(marshalled, html) {
			t.Errorf("%s: json.Marshal\n%s\nwant\n%s", name, marshalled, html)
		}
	}
	// The fixture's bytes are the document Encode writes of it.
	var again bytes.Buffer
	if err := v1.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), fixture) {
		t.Error("testdata/v1.json does not encode back to its bytes")
	}
}

// htmlEscaped is b with <, > and & escaped as json.Marshal escapes them.
func htmlEscaped(b []byte) []byte {
	var out bytes.Buffer
	json.HTMLEscape(&out, b)
	return out.Bytes()
}
