package snapshot

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// PositionFields are the source offset fields known to be positions that
// only move forward while a connector runs, most telling first: the
// journal judges a source rewind by comparing them in this order, field
// by field, until one that both values hold differs, and the page plots
// and compares the same ones in the same order, so the two never disagree
// about one offset.
//
// An event time comes before a log position because a position alone can
// go back without a rewind: Debezium MySQL's pos restarts at every new
// binlog file, so its file (by the number after its last dot,
// mysql-bin.000124 after mysql-bin.000123) comes before pos, and a pos
// that went back in the same file and ts_sec is a rewind; Postgres's lsn
// and ts_usec move together. Debezium (ts_sec, ts_usec, ts_ms, lsn,
// commit_lsn, change_lsn), JDBC (incrementing, timestamp,
// timestamp_nanos), MirrorMaker 2 (offset), FileStream (position), and
// Debezium MySQL's file and pos last.
var PositionFields = []string{"ts_sec", "ts_usec", "ts_ms", "lsn", "commit_lsn", "change_lsn", "incrementing", "timestamp", "timestamp_nanos", "offset", "position", "file", "pos"}

// Movement is how a source offset value moved from was to now, judged as
// the journal's events and the page's diffs judge it: by PositionFields in
// order, the first that both values hold and that differs deciding (all
// equal means no move), else, without a known field both hold, by the
// top-level numbers both hold: backwards when any of them decreased (the
// first in name order decides), else forwards by the first that
// increased. field is the field that decided and delta its change (now
// minus was); ok is false when both are not JSON objects or no field
// decides.
func Movement(was, now []byte) (field string, delta float64, ok bool) {
	a, ok1 := numericFields(was)
	b, ok2 := numericFields(now)
	if !ok1 || !ok2 {
		return "", 0, false
	}
	known := false
	for _, f := range PositionFields {
		x, okx := a[f]
		y, oky := b[f]
		if okx && oky {
			if y != x {
				return f, y - x, true
			}
			known = true
		}
	}
	if known {
		return "", 0, false
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
	// Debezium MySQL's binlog file, by its sequence number.
	if s, ok := m["file"].(string); ok {
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			if f, err := strconv.ParseUint(s[i+1:], 10, 64); err == nil {
				out["file"] = float64(f)
			}
		}
	}
	return out, true
}
