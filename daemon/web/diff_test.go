package web

import (
	"fmt"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// TestDiffIsRestoreCompare: the page's diff is offsetkeeper diff's
// comparison, row for change, in its vocabulary: a re-partitioned offsets
// topic with the same values shows nothing, a key with copies in two
// other partitions is one stray row, a sink offset gone is "vanished".
func TestDiffIsRestoreCompare(t *testing.T) {
	mk := func(n int32, extra map[int32]bool, sink bool) *snapshot.Snapshot {
		s := &snapshot.Snapshot{
			Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, n)}},
			Connectors: []snapshot.Connector{{Name: "c", Type: snapshot.TypeSource, Tasks: -1}, {Name: "s", Type: snapshot.TypeSink, Group: "connect-s", Tasks: -1}},
		}
		for i := range 30 {
			key := []byte(fmt.Sprintf(`["c",{"file":"f%d"}]`, i))
			home := snapshot.PartitionFor(key, n)
			o := snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic, Partition: home, Key: key, Value: []byte(fmt.Sprintf(`{"pos":%d}`, i)), Connector: "c", SourcePartition: []byte(fmt.Sprintf(`{"file":"f%d"}`, i))}
			s.AppendSourceOffsets(o)
			if i == 0 {
				for p := range extra {
					if p != home {
						o.Partition = p
						s.AppendSourceOffsets(o)
					}
				}
			}
		}
		if sink {
			s.SinkGroups = []snapshot.SinkGroup{{Group: "connect-s", Connector: "s", Offsets: []snapshot.SinkOffset{{Topic: "orders", Partition: 0, Offset: 5, LeaderEpoch: -1}}}}
		}
		s.Normalize()
		return s
	}
	a := diffSide{snap: mk(25, nil, true)}
	if d := diff(a, diffSide{snap: mk(10, nil, true)}, ""); len(d.Connectors) != 0 || d.Unchanged != 31 {
		t.Errorf("re-partitioned, same values: %+v", d)
	}
	b := diffSide{snap: mk(10, map[int32]bool{1: true, 2: true, 3: true}, false)}
	d := diff(a, b, "")
	cmp := restore.Compare(a.snap, b.snap, nil)
	rows := 0
	for _, c := range d.Connectors {
		rows += len(c.Rows)
	}
	if rows != len(cmp.Changes) || d.Unchanged != cmp.Unchanged || d.Counts[Stray] != 1 || d.Counts[Vanished] != 1 || len(d.Counts) != 2 {
		t.Errorf("page %+v (counts %v), restore.Compare %+v", d.Connectors, d.Counts, cmp)
	}
}

// TestPositionFieldsAreTheJournals holds the page's reading of a source
// offset against the journal's: for a Debezium MySQL offset across a
// binlog rotation (pos goes back, ts_sec on), neither calls it a rewind,
// and for a real rewind (ts_sec back) both do.
func TestPositionFieldsAreTheJournals(t *testing.T) {
	for _, c := range []struct {
		name     string
		was, now string
		rewound  bool
	}{
		{"binlog rotation", `{"ts_sec":1700000000,"file":"mysql-bin.000002","pos":98213,"row":1}`, `{"ts_sec":1700000060,"file":"mysql-bin.000003","pos":154}`, false},
		{"rewind", `{"ts_sec":1700000060,"file":"mysql-bin.000003","pos":154}`, `{"ts_sec":1690000000,"file":"mysql-bin.000001","pos":4}`, true},
		{"postgres forward", `{"ts_usec":1700000000000000,"lsn":33227720,"txId":565}`, `{"ts_usec":1700000001000000,"lsn":33228000,"txId":566}`, false},
		// A rotation within one second: ts_sec equal decides, pos is not read.
		{"rotation in the same second", `{"ts_sec":1700000000,"file":"mysql-bin.000002","pos":98213}`, `{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154}`, false},
		// No known field: any number that went back is a rewind.
		{"unknown fields back", `{"seq":10,"page":3}`, `{"seq":11,"page":1}`, true},
		{"unknown fields on", `{"seq":10,"page":3}`, `{"seq":11,"page":3}`, false},
	} {
		byJournal := journal.Rewound([]byte(c.was), []byte(c.now))
		row := sourceRow(srcOff{value: []byte(c.was)}, srcOff{value: []byte(c.now)})
		page := row.Verdict == MovedBackward
		if byJournal != c.rewound || page != c.rewound {
			t.Errorf("%s: the journal says rewound %v, the page %q by %s; want rewound %v", c.name, byJournal, row.Verdict, row.Field, c.rewound)
		}
		if f, _, _ := snapshot.Movement([]byte(c.was), []byte(c.now)); row.Field != f && !(f == "ts_sec" && row.Verdict == Changed) {
			t.Errorf("%s: the page compared %s", c.name, row.Field)
		}
	}
}
