package drill

import (
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// A key living in two partitions (a kcat -p by hand): a worker may read
// either copy, so Connect showing the stray copy's value is a note; a
// value of neither copy is a failure.
func TestCompleteStrayCopy(t *testing.T) {
	key := snapshot.Bytes(`["src",{"filename":"a"}]`)
	home := snapshot.PartitionFor(key, 5)
	parts := make([]snapshot.TopicPartition, 5)
	state := (&snapshot.Snapshot{
		Topics:     []snapshot.Topic{{Name: "connect-offsets", Role: snapshot.RoleOffsets, Partitions: parts}},
		Connectors: []snapshot.Connector{{Name: "src", Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStopped}},
	}).WithSourceOffsets([]snapshot.SourceOffset{
		{Topic: "connect-offsets", Partition: home, Key: key, Value: snapshot.Bytes(`{"position":10}`), Connector: "src"},
		{Topic: "connect-offsets", Partition: (home + 1) % 5, Key: key, Value: snapshot.Bytes(`{"position":3}`), Connector: "src"},
	})
	for _, tc := range []struct {
		connect  string
		failures int
		note     bool
	}{
		{`{"position":10}`, 0, false},
		{`{"position":3}`, 0, true},
		{`{"position":7}`, 1, false},
	} {
		view := (&snapshot.Snapshot{
			Captured:   snapshot.CapturedConnectREST,
			Connectors: []snapshot.Connector{{Name: "src", Type: snapshot.TypeSource, HasConfig: true, TargetState: snapshot.StateStopped}},
		}).WithSourceOffsets([]snapshot.SourceOffset{{Partition: snapshot.NoPartition, Key: key, Value: snapshot.Bytes(tc.connect), Connector: "src"}})
		var f findings
		n := compareWithConnect(offsetsIn(state, map[string]int32{"connect-offsets": 5}), offsetsIn(view, nil), &f)
		note := strings.Contains(strings.Join(f.notes, "\n"), "stray copy")
		if n != 1 || len(f.failures) != tc.failures || note != tc.note {
			t.Errorf("Connect %s: %d compared, failures %+v, notes %v", tc.connect, n, f.failures, f.notes)
		}
		if tc.failures == 1 && f.failures[0].Cause != CauseOffsetDiffers {
			t.Errorf("Connect %s: cause %s, want %s", tc.connect, f.failures[0].Cause, CauseOffsetDiffers)
		}
	}
}
