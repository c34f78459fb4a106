package connectjson

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func str(s string) Value { return StringValue(s) }

// Verified vectors from docs/connect-offsets.md §1–3 ([run] against Connect).
func TestMarshalKeyVerifiedVectors(t *testing.T) {
	tests := []struct {
		name      string
		connector string
		m         Map
		want      string
	}{
		{"FileStreamSource", "source-file-01", Map{{"filename", str("/data/testdata.txt")}},
			`["source-file-01",{"filename":"/data/testdata.txt"}]`},
		{"Debezium", "inventory-connector", Map{{"server", str("dbserver1")}},
			`["inventory-connector",{"server":"dbserver1"}]`},
		{"Strimzi MM2 name keeps -> raw", "eu->us.MirrorSourceConnector",
			Map{{"cluster", str("eu")}, {"partition", LongValue(0)}, {"topic", str("orders")}},
			`["eu->us.MirrorSourceConnector",{"cluster":"eu","partition":0,"topic":"orders"}]`},
		{"JDBC v1 canonical", "jdbc", Map{{"protocol", str("1")}, {"table", str("db.tbl")}},
			`["jdbc",{"protocol":"1","table":"db.tbl"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MarshalKey(tt.connector, tt.m)
			if string(got) != tt.want {
				t.Fatalf("MarshalKey = %s, want %s", got, tt.want)
			}
			// The same key parses back to the same connector and partition.
			conn, part, raw, err := ParseKey(got)
			if err != nil || conn != tt.connector || !Equal(part, tt.m) {
				t.Fatalf("ParseKey(%s) = %q, %s, %v", got, conn, part, err)
			}
			if string(raw) != string(Marshal(tt.m)) {
				t.Errorf("rawPartition = %s, want %s", raw, Marshal(tt.m))
			}
		})
	}
}

func TestHashMapOrder(t *testing.T) {
	tests := []struct {
		name       string
		keys, want []string
	}{
		{"JDBC", []string{"table", "protocol"}, []string{"protocol", "table"}},
		{"MM2 MirrorSource", []string{"topic", "partition", "cluster"}, []string{"cluster", "partition", "topic"}},
		{"MM2 Checkpoint", []string{"group", "topic", "partition"}, []string{"partition", "topic", "group"}},
		{"MM2 Heartbeat", []string{"sourceClusterAlias", "targetClusterAlias"}, []string{"sourceClusterAlias", "targetClusterAlias"}},
		{"Debezium SQL Server", []string{"server", "database"}, []string{"server", "database"}},
		{"Debezium MongoDB", []string{"server_id", "rs"}, []string{"rs", "server_id"}},
		{"empty", nil, []string{}},
		{"one", []string{"filename"}, []string{"filename"}},
		{"repeated key keeps its first position", []string{"topic", "partition", "topic", "cluster"}, []string{"cluster", "partition", "topic"}},
		// "Aa" and "BB" have the same String.hashCode: one bucket, insertion order.
		{"colliding Aa first", []string{"Aa", "BB"}, []string{"Aa", "BB"}},
		{"colliding BB first", []string{"BB", "Aa"}, []string{"BB", "Aa"}},
		// 13 keys: the table grows from 16 to 32 buckets (Java, JDK 17 and 25).
		{"resize at 13 keys",
			[]string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12"},
			[]string{"k0", "k1", "k2", "k3", "k4", "k5", "k11", "k6", "k10", "k7", "k8", "k12", "k9"}},
		{"resize at 25 keys",
			[]string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13", "k14",
				"k15", "k16", "k17", "k18", "k19", "k20", "k21", "k22", "k23", "k24"},
			[]string{"k11", "k10", "k13", "k12", "k15", "k14", "k17", "k16", "k19", "k18", "k0", "k1", "k2", "k3",
				"k20", "k4", "k5", "k22", "k6", "k21", "k7", "k24", "k8", "k23", "k9"}},
		// A 9th key in one bucket makes a small table grow (treeifyBin), which
		// moves "partition" before "topic" although there are only 11 keys.
		{"bucket of 9 colliding keys resizes",
			[]string{"AaAaBBBB", "AaBBBBBB", "BBBBBBBB", "BBAaBBAa", "AaAaBBAa", "BBAaBBBB", "BBAaAaAa", "AaBBBBAa", "BBBBAaAa", "topic", "partition"},
			[]string{"AaAaBBBB", "AaBBBBBB", "BBBBBBBB", "BBAaBBAa", "AaAaBBAa", "BBAaBBBB", "BBAaAaAa", "AaBBBBAa", "BBBBAaAa", "partition", "topic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HashMapOrder(tt.keys); !slices.Equal(got, tt.want) {
				t.Errorf("HashMapOrder(%q) = %q, want %q", tt.keys, got, tt.want)
			}
		})
	}
}

// The wanted hashes are what Java's String.hashCode printed.
func TestJavaStringHash(t *testing.T) {
	tests := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"Aa", 2112},
		{"BB", 2112},
		{"topic", 110546223},
		{"partition", -1799810326}, // wraps around int32
		{"😀", 1772899},             // two UTF-16 units: 0xD83D*31 + 0xDE00
		{"\xed\xa0\x80", 0xD800},   // a lone surrogate held as WTF-8
	}
	for _, tt := range tests {
		if got := javaStringHash(tt.s); got != tt.want {
			t.Errorf("javaStringHash(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestMarshalEscaping(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"html characters stay raw", "<>&", `"<>&"`},
		{"slash stays raw", "/data/x", `"/data/x"`},
		{"arrow stays raw", "eu->us", `"eu->us"`},
		{"U+2028 and U+2029 raw UTF-8", "a\u2028b\u2029", "\"a\xe2\x80\xa8b\xe2\x80\xa9\""},
		{"non-ASCII BMP raw", "café 中", `"café 中"`},
		{"U+FFFF raw", "\uffff", "\"\xef\xbf\xbf\""},
		{"supplementary as upper-case surrogate escapes", "😀", `"\uD83D\uDE00"`},
		{"U+10FFFF", "\U0010FFFF", `"\uDBFF\uDFFF"`},
		{"short escapes", "\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"other controls upper-case hex", "\x00\x01\x0b\x1f", `"\u0000\u0001\u000B\u001F"`},
		{"DEL raw", "\x7f", "\"\x7f\""},
		{"quote and backslash", `"\`, `"\"\\"`},
		{"space is not escaped", " ", `" "`},
		{"lone surrogate (WTF-8) escaped", "a\xed\xa0\x80", `"a\uD800"`},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", "\"a\xef\xbf\xbdb\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := str(tt.in).String(); got != tt.want {
				t.Errorf("StringValue(%q) = %s, want %s", tt.in, got, tt.want)
			}
			// Keys are escaped the same way.
			if got, want := string(Marshal(Map{{tt.in, LongValue(1)}})), "{"+tt.want+":1}"; got != want {
				t.Errorf("Marshal key %q = %s, want %s", tt.in, got, want)
			}
		})
	}
}

func TestFormatDouble(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{100, "100.0"},
		{1e7, "1.0E7"},
		{1e-4, "1.0E-4"},
		{1e21, "1.0E21"},
		{0.1, "0.1"},
		{1.234e-5, "1.234E-5"},
		{1e-3, "0.001"},
		{0.00099, "9.9E-4"},
		{9999999, "9999999.0"},
		{1234567.5, "1234567.5"},
		{12345678, "1.2345678E7"},
		{1, "1.0"},
		{-1.5, "-1.5"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1.0 / 3, "0.3333333333333333"},
		{0.30000000000000004, "0.30000000000000004"},
		{1e23, "1.0E23"},     // JDK 17 prints 9.999999999999999E22
		{2e23, "2.0E23"},     // JDK 17 as well
		{5e-324, "4.9E-324"}, // one digit would do; Java picks the closer of two
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.MaxInt64, "9.223372036854776E18"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tt := range tests {
		if got := FormatDouble(tt.f); got != tt.want {
			t.Errorf("FormatDouble(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestMarshalValues(t *testing.T) {
	m := Map{
		{"long", LongValue(-9223372036854775808)},
		{"double", DoubleValue(100)},
		{"nan", DoubleValue(math.NaN())}, // WRITE_NAN_AS_STRINGS, on by default
		{"inf", DoubleValue(math.Inf(-1))},
		{"bool", BoolValue(true)},
		{"no", BoolValue(false)},
		{"null", NullValue()},
		{"nested", ObjectValue(Map{{"b", LongValue(1)}, {"a", ArrayValue(str("x"), NullValue())}})},
		{"empty", ObjectValue(nil)},
		{"list", ArrayValue()},
	}
	want := `{"long":-9223372036854775808,"double":100.0,"nan":"NaN","inf":"-Infinity","bool":true,"no":false,` +
		`"null":null,"nested":{"b":1,"a":["x",null]},"empty":{},"list":[]}`
	if got := string(Marshal(m)); got != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", got, want)
	}
	if got := string(Marshal(nil)); got != "{}" {
		t.Errorf("Marshal(nil) = %s, want {}", got)
	}
	if got := m.String(); got != want {
		t.Errorf("Map.String = %s", got)
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		name, key     string
		wantConnector string
		wantRaw       string
		wantPartition string // Marshal of the parsed partition
		wantErr       error
		wantMsg       string
	}{
		{name: "file source", key: `["source-file-01",{"filename":"/data/testdata.txt"}]`,
			wantConnector: "source-file-01", wantRaw: `{"filename":"/data/testdata.txt"}`, wantPartition: `{"filename":"/data/testdata.txt"}`},
		{name: "white space kept in raw", key: " \n[ \"c\" ,\t{ \"b\" : 1 , \"a\":\"\\u00e9\" } ]\r\n",
			wantConnector: "c", wantRaw: `{ "b" : 1 , "a":"\u00e9" }`, wantPartition: `{"b":1,"a":"é"}`},
		{name: "byte order mark", key: "\ufeff[\"c\",{}]", wantConnector: "c", wantRaw: `{}`, wantPartition: `{}`},
		{name: "data after the array is ignored, as Jackson does", key: `["c",{"p":1}]garbage`,
			wantConnector: "c", wantRaw: `{"p":1}`, wantPartition: `{"p":1}`},
		{name: "escaped connector", key: `["eu-\u003eus",{}]`, wantConnector: "eu->us", wantRaw: `{}`, wantPartition: `{}`},
		{name: "duplicate keys kept", key: `["c",{"a":1,"a":2}]`, wantConnector: "c", wantRaw: `{"a":1,"a":2}`, wantPartition: `{"a":1,"a":2}`},
		{name: "leading zeros (Kafka 3.6+)", key: `["c",{"a":007,"b":-00.5}]`, wantConnector: "c", wantRaw: `{"a":007,"b":-00.5}`, wantPartition: `{"a":7,"b":-0.5}`},

		{name: "empty", key: "", wantErr: ErrNotSourceKey, wantMsg: "key is empty"},
		{name: "white space only", key: " \n", wantErr: ErrNotSourceKey, wantMsg: "key is empty"},
		{name: "string", key: `"c"`, wantErr: ErrNotSourceKey, wantMsg: "key is a JSON string, not [connector, {partition}]"},
		{name: "object", key: `{"a":1}`, wantErr: ErrNotSourceKey, wantMsg: "key is a JSON object, not [connector, {partition}]"},
		{name: "number", key: `12`, wantErr: ErrNotSourceKey, wantMsg: "key is a JSON number, not [connector, {partition}]"},
		{name: "null", key: `null`, wantErr: ErrNotSourceKey, wantMsg: "key is null, not [connector, {partition}]"},
		{name: "three elements", key: `["c",{},{}]`, wantErr: ErrNotSourceKey, wantMsg: "key array has 3 elements, not 2"},
		{name: "one element", key: `["c"]`, wantErr: ErrNotSourceKey, wantMsg: "key array has 1 elements, not 2"},
		{name: "number connector", key: `[1,{}]`, wantErr: ErrNotSourceKey, wantMsg: "key connector is a JSON number, not a string"},
		{name: "null partition", key: `["c",null]`, wantErr: ErrNotSourceKey, wantMsg: "key partition is null"},
		{name: "array partition", key: `["c",[]]`, wantErr: ErrNotSourceKey, wantMsg: "key partition is a JSON array, not an object"},
		{name: "truncated", key: `["c",{"a":1}`, wantErr: ErrSyntax, wantMsg: "key is not valid JSON: unexpected end of input, want ',' or ']'"},
		{name: "trailing comma", key: `["c",{"a":1,}]`, wantErr: ErrSyntax, wantMsg: `key is not valid JSON: unexpected '}', want a field name at offset 12`},
		{name: "single quotes", key: `['c',{}]`, wantErr: ErrSyntax, wantMsg: `key is not valid JSON: unexpected '\'', want a value at offset 1`},
		{name: "NaN literal", key: `["c",{"a":NaN}]`, wantErr: ErrSyntax},
		{name: "raw control character", key: "[\"c\\\n\",{}]", wantErr: ErrSyntax},
		{name: "raw tab in string", key: "[\"c\t\",{}]", wantErr: ErrSyntax, wantMsg: "key is not valid JSON: raw control character U+0009 in string at offset 3"},
		{name: "bad escape", key: `["\x",{}]`, wantErr: ErrSyntax, wantMsg: `key is not valid JSON: invalid escape \x at offset 3`},
		{name: "short unicode escape", key: `["\u12",{}]`, wantErr: ErrSyntax},
		{name: "plus sign", key: `["c",{"a":+1}]`, wantErr: ErrSyntax},
		{name: "bare decimal point", key: `["c",{"a":1.}]`, wantErr: ErrSyntax},
		{name: "invalid UTF-8", key: "[\"\x80\",{}]", wantErr: ErrSyntax, wantMsg: "key is not valid JSON: invalid UTF-8 in string at offset 2"},
		{name: "UTF-16 is not detected", key: "\x00[\x00]", wantErr: ErrSyntax},
		// What follows a root-level scalar: Jackson checks numbers and literals.
		{name: "root number runs on", key: `0["c",{}]`, wantErr: ErrSyntax,
			wantMsg: `key is not valid JSON: unexpected '[' after a root-level number, want white space at offset 1`},
		{name: "root number then space", key: `0 ["c",{}]`, wantErr: ErrNotSourceKey, wantMsg: "key is a JSON number, not [connector, {partition}]"},
		{name: "root literal runs on", key: `truex`, wantErr: ErrSyntax, wantMsg: `key is not valid JSON: unrecognized token "truex" at offset 4`},
		{name: "root literal then quote", key: `true"`, wantErr: ErrNotSourceKey},
		{name: "invalid UTF-8 in a field name", key: "[\"c\",{\"a\xffb\":1}]", wantErr: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, part, raw, err := ParseKey([]byte(tt.key))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseKey(%q) error = %v, want %v", tt.key, err, tt.wantErr)
				}
				if tt.wantMsg != "" && err.Error() != tt.wantMsg {
					t.Errorf("error message = %q, want %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", tt.key, err)
			}
			if conn != tt.wantConnector || string(raw) != tt.wantRaw || string(Marshal(part)) != tt.wantPartition {
				t.Errorf("ParseKey(%q) = %q, %s, raw %s; want %q, %s, raw %s",
					tt.key, conn, Marshal(part), raw, tt.wantConnector, tt.wantPartition, tt.wantRaw)
			}
		})
	}
}

func TestParseKeyRawPartitionAliasesKey(t *testing.T) {
	key := []byte(`  ["c",{"b":1,"a":2}]  `)
	_, _, raw, err := ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if !isSubslice(key, raw) || string(raw) != `{"b":1,"a":2}` {
		t.Fatalf("raw = %q, not the partition's sub-slice of the key", raw)
	}
	if cap(raw) != len(raw) {
		t.Errorf("cap(raw) = %d: appending to raw would overwrite the key", cap(raw))
	}
}

func TestParseNesting(t *testing.T) {
	nested := func(depth int) []byte { // the key array is level 1, the partition level 2
		return []byte(`["c",{"a":` + strings.Repeat("[", depth-2) + strings.Repeat("]", depth-2) + `}]`)
	}
	if _, _, _, err := ParseKey(nested(maxDepth)); err != nil {
		t.Errorf("depth %d: %v", maxDepth, err)
	}
	_, _, _, err := ParseKey(nested(maxDepth + 1))
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "nesting deeper than 1000") {
		t.Errorf("depth %d: error = %v", maxDepth+1, err)
	}
}

func TestParseMap(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    string
		wantErr error
		wantMsg string
	}{
		{name: "offset", in: []byte(`{"offset":5}`), want: `{"offset":5}`},
		{name: "Debezium MySQL", in: []byte(`{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"snapshot":true}`),
			want: `{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"snapshot":true}`},
		{name: "empty object", in: []byte(` {} `), want: `{}`},
		{name: "data after the object is ignored", in: []byte(`{"a":1}x`), want: `{"a":1}`},
		{name: "tombstone", in: nil, wantErr: ErrTombstone, wantMsg: "value is a tombstone"},
		{name: "JSON null", in: []byte(`null`), wantErr: ErrNullOffset, wantMsg: "value is null"},
		{name: "empty, not nil", in: []byte{}, wantErr: ErrNullOffset, wantMsg: "value is empty"},
		{name: "array", in: []byte(`[1]`), wantErr: ErrNotObject, wantMsg: "value is a JSON array, not an object"},
		{name: "string", in: []byte(`"5"`), wantErr: ErrNotObject, wantMsg: "value is a JSON string, not an object"},
		{name: "syntax", in: []byte(`{"a":}`), wantErr: ErrSyntax, wantMsg: "value is not valid JSON: unexpected '}', want a value at offset 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMap(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || err.Error() != tt.wantMsg {
					t.Fatalf("ParseMap(%q) error = %v, want %q (%v)", tt.in, err, tt.wantMsg, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMap(%q): %v", tt.in, err)
			}
			if m == nil {
				t.Errorf("ParseMap(%q) = nil Map", tt.in)
			}
			if got := string(Marshal(m)); got != tt.want {
				t.Errorf("ParseMap(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	m, err := ParseMap([]byte(`{"s":"a\"\u00e9\ud83d\ude00","l":-42,"d":1.50,"e":1E2,"z":-0.0,"u":-1e-400,` +
		`"big":-0012345678901234567890,"t":true,"f":false,"n":null,"o":{"x":1},"a":[1,"b"],"inf":1e400}`))
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) Value {
		v, ok := m.Get(k)
		if !ok {
			t.Fatalf("no field %q", k)
		}
		return v
	}
	if v := get("s"); v.Kind() != KindString || v.Str() != "a\"é😀" || string(v.Raw()) != `"a\"\u00e9\ud83d\ude00"` {
		t.Errorf("s = %v %q raw %s", v.Kind(), v.Str(), v.Raw())
	}
	if v := get("l"); v.Kind() != KindLong || v.Long() != -42 {
		t.Errorf("l = %v %d", v.Kind(), v.Long())
	}
	if v := get("d"); v.Kind() != KindDouble || v.Double() != 1.5 || string(v.Raw()) != "1.50" || v.String() != "1.5" {
		t.Errorf("d = %v %v raw %s", v.Kind(), v.Double(), v.Raw())
	}
	if v := get("e"); v.Kind() != KindDouble || v.String() != "100.0" {
		t.Errorf("e = %v %s", v.Kind(), v)
	}
	// Connect reads decimals through BigDecimal, which has no negative zero.
	if v := get("z"); v.Kind() != KindDouble || math.Signbit(v.Double()) || v.String() != "0.0" {
		t.Errorf("z = %v %s", v.Kind(), v)
	}
	if v := get("u"); v.Kind() != KindDouble || !math.Signbit(v.Double()) || v.String() != "-0.0" {
		t.Errorf("u = %v %s", v.Kind(), v)
	}
	if v := get("big"); v.Kind() != KindBigInt || v.Str() != "-12345678901234567890" || v.Long() != 6101065172474983726 {
		t.Errorf("big = %v %q %d", v.Kind(), v.Str(), v.Long())
	}
	if v := get("t"); v.Kind() != KindBool || !v.Bool() {
		t.Errorf("t = %v", v)
	}
	if v := get("f"); v.Kind() != KindBool || v.Bool() {
		t.Errorf("f = %v", v)
	}
	if v := get("n"); v.Kind() != KindNull || v.String() != "null" {
		t.Errorf("n = %v", v)
	}
	if v := get("o"); v.Kind() != KindObject || v.Object().String() != `{"x":1}` || string(v.Raw()) != `{"x":1}` {
		t.Errorf("o = %v", v)
	}
	if v := get("a"); v.Kind() != KindArray || len(v.Array()) != 2 || v.String() != `[1,"b"]` {
		t.Errorf("a = %v", v)
	}
	if v := get("inf"); v.Kind() != KindDouble || !math.IsInf(v.Double(), 1) || v.String() != `"Infinity"` {
		t.Errorf("inf = %v", v)
	}
	if _, ok := m.Get("missing"); ok {
		t.Error("Get of a missing key reported ok")
	}
}

func TestBigIntLong(t *testing.T) {
	tests := []struct {
		lit  string
		want int64
	}{
		{"9223372036854775808", math.MinInt64},
		{"-9223372036854775809", math.MaxInt64},
		{"18446744073709551616", 0},
		{"18446744073709551617", 1},
		{"-18446744073709551617", -1},
	}
	for _, tt := range tests {
		m, err := ParseMap([]byte(`{"n":` + tt.lit + `}`))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := m.Get("n")
		if v.Kind() != KindBigInt || v.Long() != tt.want {
			t.Errorf("%s: kind %v, Long() = %d, want %d", tt.lit, v.Kind(), v.Long(), tt.want)
		}
	}
	// The int64 extremes stay longs.
	m, _ := ParseMap([]byte(`{"a":-9223372036854775808,"b":9223372036854775807}`))
	if a, _ := m.Get("a"); a.Kind() != KindLong || a.Long() != math.MinInt64 {
		t.Errorf("min int64 = %v %d", a.Kind(), a.Long())
	}
}

func TestCanonicalKey(t *testing.T) {
	tests := []struct {
		name, key, want string
	}{
		{"JDBC built in insertion order table, protocol", `["jdbc",{"table":"db.tbl","protocol":"1"}]`,
			`["jdbc",{"protocol":"1","table":"db.tbl"}]`},
		{"JDBC already canonical", `["jdbc",{"protocol":"1","table":"db.tbl"}]`,
			`["jdbc",{"protocol":"1","table":"db.tbl"}]`},
		{"MM2 source", `["eu->us.MirrorSourceConnector",{"topic":"orders","partition":3,"cluster":"eu"}]`,
			`["eu->us.MirrorSourceConnector",{"cluster":"eu","partition":3,"topic":"orders"}]`},
		{"MM2 checkpoint", `["c",{"group":"g","topic":"t","partition":0}]`, `["c",{"partition":0,"topic":"t","group":"g"}]`},
		{"Debezium MongoDB", `["mongo",{"server_id":"m1","rs":"rs0"}]`, `["mongo",{"rs":"rs0","server_id":"m1"}]`},
		{"escaping and white space normalized", ` [ "eu-\u003eus" , { "s" : "\u00e9\/\ud83d\ude00\u001f" } ] `,
			`["eu->us",{"s":"é/\uD83D\uDE00\u001F"}]`},
		{"numbers normalized", `["c",{"a":1.50,"b":1E7,"c":007,"d":-0.0}]`, `["c",{"a":1.5,"b":1.0E7,"c":7,"d":0.0}]`},
		{"duplicate key: first position, last value", `["c",{"b":1,"a":2,"b":3}]`, `["c",{"a":2,"b":3}]`},
		{"big integer keeps its low 64 bits", `["c",{"n":18446744073709551617}]`, `["c",{"n":1}]`},
		{"nested maps are HashMaps too", `["c",{"o":{"table":"t","protocol":"1"},"l":[{"topic":"t","cluster":"c"}]}]`,
			`["c",{"l":[{"cluster":"c","topic":"t"}],"o":{"protocol":"1","table":"t"}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, part, _, err := ParseKey([]byte(tt.key))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(CanonicalKey(conn, part)); got != tt.want {
				t.Errorf("CanonicalKey = %s, want %s", got, tt.want)
			}
			// A canonical key is its own canonical form.
			conn, part, _, err = ParseKey([]byte(tt.want))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(CanonicalKey(conn, part)); got != tt.want {
				t.Errorf("CanonicalKey of the canonical key = %s", got)
			}
		})
	}
}

// A task's own Java Double goes through one write and one read. The HashMap
// order inf, negzero, x, nan is what Java printed.
func TestCanonicalKeyConstructedDoubles(t *testing.T) {
	m := Map{
		{"nan", DoubleValue(math.NaN())},
		{"inf", DoubleValue(math.Inf(1))},
		{"negzero", DoubleValue(math.Copysign(0, -1))},
		{"x", DoubleValue(0.5)},
	}
	if got, want := string(MarshalKey("c", m)), `["c",{"nan":"NaN","inf":"Infinity","negzero":-0.0,"x":0.5}]`; got != want {
		t.Errorf("MarshalKey = %s, want %s", got, want)
	}
	if got, want := string(CanonicalKey("c", m)), `["c",{"inf":"Infinity","negzero":0.0,"x":0.5,"nan":"NaN"}]`; got != want {
		t.Errorf("CanonicalKey = %s, want %s", got, want)
	}
	if got, want := string(RESTMap(m)), `{"inf":"Infinity","negzero":0.0,"x":0.5,"nan":"NaN"}`; got != want {
		t.Errorf("RESTMap = %s, want %s", got, want)
	}
	// Read back, they are strings and +0.0.
	if !Equal(m, Map{{"nan", str("NaN")}, {"inf", str("Infinity")}, {"negzero", DoubleValue(0)}, {"x", DoubleValue(0.5)}}) {
		t.Error("Equal: a written NaN should equal the string \"NaN\"")
	}
}

func TestRESTMap(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"topic":"orders","partition":3,"cluster":"eu"}`, `{"cluster":"eu","partition":3,"topic":"orders"}`},
		{`{"offset":42}`, `{"offset":42}`},
		{`{"pos":154,"file":"mysql-bin.000003","ts_sec":1700000000,"snapshot":true,"row":1}`,
			`{"ts_sec":1700000000,"file":"mysql-bin.000003","pos":154,"row":1,"snapshot":true}`},
		{`{"a":1e400,"b":null,"c":"<>"}`, `{"a":"Infinity","b":null,"c":"<>"}`},
	}
	for _, tt := range tests {
		m, err := ParseMap([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(RESTMap(m)); got != tt.want {
			t.Errorf("RESTMap(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1}`, `{"a":1.0}`, false},   // Long 1 != Double 1.0
		{`{"a":1}`, `{"a":"1"}`, false},   // String "1" != Long 1
		{`{"a":1.0}`, `{"a":1E0}`, true},  // the same Double
		{`{"a":1}`, `{"a":001}`, true},    // the same Long
		{`{"a":0.0}`, `{"a":-0.0}`, true}, // BigDecimal has no -0
		{`{"a":0.0}`, `{"a":-1e-400}`, false},
		{`{"a":true}`, `{"a":"true"}`, false},
		{`{"a":null}`, `{}`, false}, // a null value is not an absent key
		{`{"a":null}`, `{"a":null}`, true},
		{`{"s":"\u00e9"}`, `{"s":"é"}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true}, // Jackson keeps the last value
		{`{"a":1,"a":2}`, `{"a":1}`, false},
		{`{"a":18446744073709551617}`, `{"a":1}`, true}, // BigInteger.longValue
		{`{"o":{"x":1,"y":2}}`, `{"o":{"y":2,"x":1}}`, true},
		{`{"l":[1,2]}`, `{"l":[2,1]}`, false},
		{`{}`, `{}`, true},
	}
	for _, tt := range tests {
		a, err := ParseMap([]byte(tt.a))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseMap([]byte(tt.b))
		if err != nil {
			t.Fatal(err)
		}
		if got := Equal(a, b); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if Equal(b, a) != Equal(a, b) {
			t.Errorf("Equal(%s, %s) is not symmetric", tt.a, tt.b)
		}
	}
}

func TestKindString(t *testing.T) {
	if KindBigInt.String() != "big integer" || Kind(200).String() != "Kind(200)" {
		t.Errorf("Kind.String: %q %q", KindBigInt, Kind(200))
	}
}

// randomFlatMap returns a flat map as a task might build it. Doubles are
// finite: NaN and the infinities are written as strings.
func randomFlatMap(r *rand.Rand) Map {
	runes := []rune("abcXYZ09_-./:<>&\"\\ \t\n\x00\x01\x1f\x7fé中\u2028\u2029\uffff😀𝄞")
	text := func() string {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteRune(runes[r.IntN(len(runes))])
		}
		return sb.String()
	}
	m := Map{}
	for range r.IntN(8) {
		var v Value
		switch r.IntN(6) {
		case 0:
			v = StringValue(text())
		case 1:
			v = LongValue(int64(r.Uint64()) >> r.IntN(64))
		case 2:
			f := math.Float64frombits(r.Uint64())
			if math.IsNaN(f) || math.IsInf(f, 0) {
				f = r.NormFloat64()
			}
			if f == 0 {
				f = 0 // Connect reads -0.0 back as 0.0
			}
			v = DoubleValue(f)
		case 3:
			v = DoubleValue(math.Round(r.NormFloat64()*1e6) / math.Pow(10, float64(r.IntN(12))))
		case 4:
			v = BoolValue(r.IntN(2) == 0)
		default:
			v = NullValue()
		}
		m = append(m, Field{Key: text(), Value: v})
	}
	return m
}

// sameMap reports whether a and b hold the same fields in the same order,
// with identical values (ignoring Raw).
func sameMap(a, b Map) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i].Value, b[i].Value
		if a[i].Key != b[i].Key || x.kind != y.kind || x.str != y.str || x.num != y.num ||
			math.Float64bits(x.dbl) != math.Float64bits(y.dbl) {
			return false
		}
	}
	return true
}

func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 5000 {
		m := randomFlatMap(r)
		b := Marshal(m)
		got, err := ParseMap(b)
		if err != nil {
			t.Fatalf("case %d: ParseMap(Marshal(%#v)) = %v", i, m, err)
		}
		if !sameMap(got, m) || !Equal(got, m) {
			t.Fatalf("case %d: ParseMap(%s) = %s, not the map marshalled", i, b, Marshal(got))
		}
		if b2 := Marshal(got); !bytes.Equal(b, b2) {
			t.Fatalf("case %d: re-Marshal differs:\n%s\n%s", i, b, b2)
		}
		// The same holds for keys, and the canonical key is stable.
		conn := strconv.Itoa(i) + "->x"
		k := MarshalKey(conn, m)
		c, p, raw, err := ParseKey(k)
		if err != nil || c != conn || !sameMap(p, m) || !bytes.Equal(raw, b) {
			t.Fatalf("case %d: ParseKey(%s) = %q, %s, %s, %v", i, k, c, Marshal(p), raw, err)
		}
		canon := CanonicalKey(c, p)
		c2, p2, _, err := ParseKey(canon)
		if err != nil || !bytes.Equal(CanonicalKey(c2, p2), canon) || !Equal(p2, m) {
			t.Fatalf("case %d: CanonicalKey is not stable: %s", i, canon)
		}
		if !bytes.Equal(canon[len(`[""`)+len(conn)+1:len(canon)-1], RESTMap(m)) {
			t.Fatalf("case %d: CanonicalKey %s does not hold RESTMap %s", i, canon, RESTMap(m))
		}
	}
}

func TestValueAccessorsOnOtherKinds(t *testing.T) {
	vals := []Value{NullValue(), StringValue("s"), LongValue(1), DoubleValue(1), BoolValue(true),
		ObjectValue(Map{{"a", LongValue(1)}}), ArrayValue(LongValue(1))}
	for _, v := range vals {
		k := v.Kind()
		if (v.Str() != "") != (k == KindString) || (v.Long() != 0) != (k == KindLong) ||
			(v.Double() != 0) != (k == KindDouble) || v.Bool() != (k == KindBool) ||
			(v.Object() != nil) != (k == KindObject) || (v.Array() != nil) != (k == KindArray) || v.Raw() != nil {
			t.Errorf("%v value %s: accessors for other kinds should return zero values", k, v)
		}
	}
	// Values of different kinds are never equal, whatever their payload.
	for i, a := range vals {
		for j, b := range vals {
			if got := Equal(Map{{"k", a}}, Map{{"k", b}}); got != (i == j) {
				t.Errorf("Equal(%s, %s) = %v", a, b, got)
			}
		}
	}
}

func TestRenameKey(t *testing.T) {
	for _, tc := range []struct{ key, name, want string }{
		{`["old",{"filename":"/data/a.txt"}]`, "new", `["new",{"filename":"/data/a.txt"}]`},
		// The partition's bytes stay as they are: field order, escapes,
		// numbers, even white space inside the object.
		{`["old",{"b":1.0E7,"a":"\u00e9\/"}]`, "n", `["n",{"b":1.0E7,"a":"\u00e9\/"}]`},
		{`[ "old" , { "x" : 1 } ]`, "n", `["n",{ "x" : 1 }]`},
		// The name as Jackson writes it: raw <>&, U+2028 and non-ASCII,
		// escaped quotes and backslashes, surrogate pairs in upper case.
		{`["old",{"a":1}]`, "a->b.Mirror<&>\u2028é", "[\"a->b.Mirror<&>\u2028é\",{\"a\":1}]"},
		{`["old",{"a":1}]`, `q"b\` + "\U0001F600", `["q\"b\\\uD83D\uDE00",{"a":1}]`},
	} {
		got, err := RenameKey([]byte(tc.key), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("RenameKey(%s, %q) = %s, want %s", tc.key, tc.name, got, tc.want)
		}
		if n, _, _, err := ParseKey(got); err != nil || n != tc.name {
			t.Errorf("renamed key %s parses to %q, %v", got, n, err)
		}
	}
	if _, err := RenameKey([]byte(`"not a key"`), "n"); err == nil {
		t.Error("a key that is not [name, {map}] was renamed")
	}
}
