package snapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestSinkGuardFixture decodes the fixture with the sink guard's fields
// (sink_topics, a group's protocol_type and empty_since): the fast path
// and encoding/json read the same document, it encodes back to the same
// bytes, and the fixture without them still reads as before.
func TestSinkGuardFixture(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("testdata", "v1-sinkguard.json"))
	if err != nil {
		t.Fatal(err)
	}
	fast, ok := decodeFast(doc)
	if !ok {
		t.Fatal("the fast path does not read the fixture")
	}
	var slow Snapshot
	if err := json.Unmarshal(doc, &slow); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast.SinkGroups, slow.SinkGroups) || !reflect.DeepEqual(fast.SinkTopics, slow.SinkTopics) {
		t.Fatalf("fast path %+v %+v, encoding/json %+v %+v", fast.SinkGroups, fast.SinkTopics, slow.SinkGroups, slow.SinkTopics)
	}
	checkFixtureV1(t, fast)
	g, _ := fast.SinkGroupOf("s3-sink")
	if want := time.Date(2026, 11, 30, 9, 12, 0, 500000000, time.UTC); g.ProtocolType != ProtocolConsumer || g.EmptySince == nil || !g.EmptySince.Equal(want) {
		t.Errorf("group guard fields: protocol type %q, empty since %v", g.ProtocolType, g.EmptySince)
	}
	st, ok := fast.SinkTopic("orders")
	if !ok || st.ID != "q8cA4gOxRkWc3i1xYz0Aaw" || len(st.Partitions) != 2 || st.Partitions[0] != (TopicPartition{0, 100, 5200}) {
		t.Errorf("sink topic orders = %+v, %v", st, ok)
	}
	var out bytes.Buffer
	if err := fast.Encode(&out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(out.Bytes()), bytes.TrimSpace(doc)) {
		t.Errorf("encoded again:\n%s\nwant\n%s", out.Bytes(), doc)
	}
	marshalled, err := json.Marshal(fast)
	if err != nil {
		t.Fatal(err)
	}
	var viaJSON Snapshot
	if err := json.Unmarshal(marshalled, &viaJSON); err != nil || !reflect.DeepEqual(viaJSON.SinkTopics, fast.SinkTopics) {
		t.Errorf("json.Marshal round trip: %v, %+v", err, viaJSON.SinkTopics)
	}
	// Filtered to the sink, the topic stays; to another connector, it goes.
	if f := fast.Filter([]string{"s3-sink"}); len(f.SinkTopics) != 1 {
		t.Errorf("Filter(s3-sink) kept %d sink topics", len(f.SinkTopics))
	}
	if f := fast.Filter([]string{"jdbc-orders"}); len(f.SinkTopics) != 0 {
		t.Errorf("Filter(jdbc-orders) kept %d sink topics", len(f.SinkTopics))
	}
}

// TestExpiryRule is Kafka's rule by group type and state, and when it
// expires a group's offsets.
func TestExpiryRule(t *testing.T) {
	empty := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	commit := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	offs := []SinkOffset{{Topic: "orders", Partition: 0, Offset: 5}, {Topic: "orders", Partition: 1, Offset: 7}}
	seen := map[string]time.Time{"orders/0": commit.Add(time.Hour), "orders/1": commit}
	tests := []struct {
		name     string
		g        SinkGroup
		consumer bool
		rule     string
		at       time.Time
		known    bool
	}{
		{"classic empty sink", SinkGroup{State: "Empty", ProtocolType: "consumer", EmptySince: &empty, Offsets: offs}, false, RuleEmptySince, empty.Add(time.Minute), true},
		{"classic empty, since unknown", SinkGroup{State: "Empty", ProtocolType: "consumer", Offsets: offs}, false, RuleEmptySince, time.Time{}, false},
		{"classic stable", SinkGroup{State: "Stable", ProtocolType: "consumer", Members: 1, Offsets: offs}, false, RuleNone, time.Time{}, false},
		{"admin-only group", SinkGroup{State: "Empty", Offsets: offs}, false, RuleCommitTime, commit.Add(time.Minute), true},
		{"consumer protocol, no members", SinkGroup{State: "Empty", Offsets: offs}, true, RuleCommitTime, commit.Add(time.Minute), true},
		{"consumer protocol, members", SinkGroup{State: "Stable", Members: 2, Offsets: offs}, true, RuleNone, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := ExpiryRule(tt.g, tt.consumer)
			if rule != tt.rule {
				t.Fatalf("rule %q, want %q", rule, tt.rule)
			}
			at, ok := ExpiresAt(tt.g, rule, time.Minute, seen)
			if ok != tt.known || !at.Equal(tt.at) {
				t.Errorf("ExpiresAt = %v %v, want %v %v", at, ok, tt.at, tt.known)
			}
		})
	}
}
