package snapshot

import "testing"

// TestMovement holds the one rule for a source offset's move: the
// position fields both values hold, in order, the first that differs
// deciding (all equal: no move), else any number that went back, else the
// first that went on.
func TestMovement(t *testing.T) {
	for _, c := range []struct {
		name, was, now string
		field          string
		delta          float64
		ok             bool
	}{
		{"ts_sec on, pos back (binlog rotation)", `{"ts_sec":10,"pos":900}`, `{"ts_sec":11,"pos":4}`, "ts_sec", 1, true},
		// Regression: only the first field both held was compared, so a
		// Debezium MySQL pos rewound within one ts_sec was no rewind.
		{"ts_sec equal, pos back", `{"ts_sec":10,"pos":900}`, `{"ts_sec":10,"pos":4}`, "pos", -896, true},
		{"same file and ts_sec, pos back", `{"ts_sec":10,"file":"mysql-bin.000003","pos":900,"row":1}`, `{"ts_sec":10,"file":"mysql-bin.000003","pos":4,"row":1}`, "pos", -896, true},
		{"next binlog file in the same ts_sec", `{"ts_sec":10,"file":"mysql-bin.000003","pos":900}`, `{"ts_sec":10,"file":"mysql-bin.000004","pos":4}`, "file", 1, true},
		{"earlier binlog file", `{"ts_sec":10,"file":"mysql-bin.000010","pos":4}`, `{"ts_sec":10,"file":"mysql-bin.000009","pos":900}`, "file", -1, true},
		{"all known fields equal", `{"ts_sec":10,"file":"mysql-bin.000003","pos":900}`, `{"ts_sec":10,"file":"mysql-bin.000003","pos":900}`, "", 0, false},
		{"lsn back", `{"lsn":100}`, `{"lsn":40}`, "lsn", -60, true},
		{"known field only on one side", `{"lsn":100,"seq":2}`, `{"offset":3,"seq":1}`, "seq", -1, true},
		{"unknown numbers, one back", `{"a":5,"b":3}`, `{"a":6,"b":1}`, "b", -2, true},
		{"unknown numbers on", `{"a":5,"b":3}`, `{"a":6,"b":3}`, "a", 1, true},
		{"not objects", `5`, `4`, "", 0, false},
		{"tombstone", `{"lsn":1}`, ``, "", 0, false},
	} {
		f, d, ok := Movement([]byte(c.was), []byte(c.now))
		if f != c.field || d != c.delta || ok != c.ok {
			t.Errorf("%s: Movement = %q, %v, %v; want %q, %v, %v", c.name, f, d, ok, c.field, c.delta, c.ok)
		}
	}
}
