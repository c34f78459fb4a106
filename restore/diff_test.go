package restore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// offsetsSnap is a snapshot of one connector's keys in connect-offsets of
// n partitions, each on its murmur2 partition unless at says otherwise.
func offsetsSnap(n int32, values map[string]string, at map[string][]int32) *snapshot.Snapshot {
	s := &snapshot.Snapshot{
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, n)}},
		Connectors: []snapshot.Connector{{Name: "c", Type: snapshot.TypeSource, Tasks: -1}},
	}
	for k, v := range values {
		key := []byte(fmt.Sprintf(`["c",{"file":%q}]`, k))
		parts := at[k]
		if parts == nil {
			parts = []int32{snapshot.PartitionFor(key, n)}
		}
		for _, p := range parts {
			s.AppendSourceOffsets(snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic, Partition: p, Key: key, Value: []byte(v), Connector: "c"})
		}
	}
	s.Normalize()
	return s
}

// TestDiffByKeyWherever: diff compares a source key wherever it lives in
// its topic, as a worker reads it: keys that only moved partition (25
// partitions to 10) are unchanged; a changed value is one change; a key
// with copies in two other partitions is one stray; a copy both sides hold
// is no difference.
func TestDiffByKeyWherever(t *testing.T) {
	values := map[string]string{}
	for i := range 40 {
		values[fmt.Sprintf("f%d", i)] = fmt.Sprintf(`{"pos":%d}`, i)
	}
	a := offsetsSnap(25, values, nil)
	b := offsetsSnap(10, values, nil)
	moved := 0
	for i := range a.SourceTable().Collect() {
		if a.SourceTable().At(int32(i)).Partition != snapshot.PartitionFor(a.SourceTable().At(int32(i)).Key, 10) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no key moved partition: the test proves nothing")
	}
	if c := restore.Compare(a, b, nil); len(c.Changes) != 0 || c.Unchanged != 40 {
		t.Fatalf("re-partitioned, same values: %+v, want no change and 40 unchanged", c)
	}

	changed := map[string]string{}
	for k, v := range values {
		changed[k] = v
	}
	changed["f1"] = `{"pos":99}`
	key3 := fmt.Sprintf(`["c",{"file":%q}]`, "f3")
	home := snapshot.PartitionFor([]byte(key3), 10)
	b = offsetsSnap(10, changed, map[string][]int32{"f3": {home, (home + 1) % 10, (home + 2) % 10}})
	c := restore.Compare(a, b, nil)
	if len(c.Changes) != 2 || c.Unchanged != 39 {
		t.Fatalf("changes %+v (unchanged %d), want f1 changed and f3 one stray", c.Changes, c.Unchanged)
	}
	kinds := map[string]string{}
	for _, ch := range c.Changes {
		kinds[string(ch.Key)] = ch.Kind
	}
	if kinds[fmt.Sprintf(`["c",{"file":%q}]`, "f1")] != restore.KindChanged || kinds[key3] != restore.KindStray {
		t.Errorf("kinds %v", kinds)
	}
	var sb strings.Builder
	if err := restore.PrintChanges(&sb, c.Changes); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "stray copy") || !strings.Contains(sb.String(), "1 changed, 0 appeared, 0 vanished, 1 stray copy;") {
		t.Errorf("PrintChanges:\n%s", sb.String())
	}

	// The same stray copy on both sides is no difference; a key only on a
	// wrong partition of b is a stray, its value compared.
	if c := restore.Compare(b, b, nil); len(c.Changes) != 0 {
		t.Errorf("b with itself: %+v", c.Changes)
	}
	b = offsetsSnap(10, values, map[string][]int32{"f3": {(home + 1) % 10}})
	if c := restore.Compare(a, b, nil); len(c.Changes) != 1 || c.Changes[0].Kind != restore.KindStray || c.Unchanged != 40 {
		t.Errorf("key only off its partition: %+v", c)
	}
}
