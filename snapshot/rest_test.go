package snapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// A snapshot captured through the Connect REST API encodes its captured
// and connect_url fields as encoding/json would, decodes them back, and
// answers ConnectREST with the offsets it holds; a snapshot without them
// (every v1 fixture) encodes as before, with neither field.
func TestCapturedConnectRESTRoundTrip(t *testing.T) {
	s := &Snapshot{
		Version: Version, ID: "20261202T120000.000000Z-abcdef", CreatedAt: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC),
		ClusterID: "lkc-1", Reason: ReasonManual, Captured: CapturedConnectREST, ConnectURL: "http://connect:8083",
		Topics: []Topic{},
		Connectors: []Connector{
			{Name: "src", Type: TypeSource, HasConfig: true, TargetState: StateStopped},
			{Name: "sink", Type: TypeSink, HasConfig: true, TargetState: StateStopped, Group: "connect-sink"},
		},
		src: NewSourceTable([]SourceOffset{
			{Topic: "", Partition: NoPartition, Offset: -1, Key: Bytes(`["src",{"filename":"a"}]`), Value: Bytes(`{"position":4}`), Connector: "src"},
			{Topic: "", Partition: NoPartition, Offset: -1, Key: Bytes(`["src",{"filename":"b"}]`), Value: Bytes(`null`), Connector: "src"},
		}),
		SinkGroups: []SinkGroup{{Group: "connect-sink", Connector: "sink", Offsets: []SinkOffset{{Topic: "t", Partition: 0, Offset: 3, LeaderEpoch: -1}}}},
	}
	var got bytes.Buffer
	if err := s.Encode(&got); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("Encode\n%s\nencoding/json\n%s", got.String(), want.String())
	}
	back, err := Decode(got.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !back.ViaREST() || back.ConnectURL != s.ConnectURL {
		t.Errorf("decoded captured %q, connect_url %q", back.Captured, back.ConnectURL)
	}
	for name, want := range map[string]string{
		"src":  `{"offsets":[{"partition":{"filename":"a"},"offset":{"position":4}},{"partition":{"filename":"b"},"offset":null}]}`,
		"sink": `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"t"},"offset":{"kafka_offset":3}}]}`,
	} {
		body, err := back.ConnectREST(name)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != want {
			t.Errorf("ConnectREST(%s) = %s, want %s", name, body, want)
		}
	}
	for _, tc := range []struct {
		p           int32
		topic, want string
	}{{NoPartition, "", "rest"}, {NoPartition, "own", "own/rest"}, {3, "connect-offsets", "connect-offsets/3"}} {
		if got := Where(tc.topic, tc.p); got != tc.want {
			t.Errorf("Where(%q, %d) = %q, want %q", tc.topic, tc.p, got, tc.want)
		}
	}

	old, err := os.ReadFile("testdata/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	v1, err := Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if v1.ViaREST() || v1.ConnectURL != "" {
		t.Errorf("a v1 fixture decodes as captured %q", v1.Captured)
	}
	var again bytes.Buffer
	if err := v1.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(again.Bytes(), []byte(`"captured"`)) || bytes.Contains(again.Bytes(), []byte(`"connect_url"`)) {
		t.Error("a snapshot read from the Kafka topics encodes captured or connect_url")
	}
}
