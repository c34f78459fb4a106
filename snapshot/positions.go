package snapshot

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// PositionFields are the source offset fields known to be positions that
// only move forward while a connector runs, most telling first: the
// journal judges a source rewind by the first of them that both values
// hold, and the page plots and compares the same ones in the same order,
// so the two never disagree about one offset.
//
// An event time comes before a log position because a position alone can
// go back without a rewind: Debezium MySQL's pos restarts at every new
// binlog file (file+pos is the position; ts_sec moves on), and Postgres's
// lsn and ts_usec move together. Debezium (ts_sec, ts_usec, ts_ms, lsn,
// commit_lsn, change_lsn), JDBC (incrementing, timestamp,
// timestamp_nanos), MirrorMaker 2 (offset), FileStream (position), and
// Debezium MySQL's pos last.
var PositionFields = []string{"ts_sec", "ts_usec", "ts_ms", "lsn", "commit_lsn", "change_lsn", "incrementing", "timestamp", "timestamp_nanos", "offset", "position", "pos"}

// Movement is how a source offset value moved from was to now, judged as
// the journal's events and the page's diffs judge it: by the first of
// PositionFields that both values hold (equal there means no move: a
// Debezium MySQL pos that restarted with a new binlog file in the same
// ts_sec is no rewind), else, without a known field, by the top-level
// numbers both hold: backwards when any of them decreased (the first in
// name order decides), else forwards by the first that increased. field
// is the field that decided and delta its change (now minus was); ok is
// false when both are not JSON objects or no field decides.
func Movement(was, now []byte) (field string, delta float64, ok bool) {
	a, ok1 := numericFields(was)
	b, ok2 := numericFields(now)
	if !ok1 || !ok2 {
		return "", 0, false
	}
	for _, f := range PositionFields {
		x, okx := a[f]
		y, oky := b[f]
		if okx && oky {
			return f, y - x, y != x
		}
	}
	names := make([]string, 0, len(a))
	for f := range a {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		if y, ok := b[f]; ok && y < a[f] {
			return f, y - a[f], true
		}
	}
	for _, f := range names {
		if y, ok := b[f]; ok && y > a[f] {
			return f, y - a[f], true
		}
	}
	return "", 0, false
}

// numericFields are the top-level numbers of the JSON object v.
func numericFields(v []byte) (map[string]float64, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, false
	}
	out := map[string]float64{}
	for k, x := range m {
		if n, ok := x.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(n), 64); err == nil {
				out[k] = f
			}
		}
	}
	return out, true
}
