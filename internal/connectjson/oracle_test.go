package connectjson

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The golden files in testdata/java were written by Oracle.java: real Jackson
// 2.14 configured as Kafka Connect's JsonConverter, and JDK 25 and JDK 17 for
// Double.toString. testdata/java/gen.sh regenerates them from the *.in files.

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "java", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// readPairs returns the lines of NAME.in and NAME.golden side by side.
func readPairs(t *testing.T, name string) [][2]string {
	t.Helper()
	in, golden := readLines(t, name+".in"), readLines(t, name+".golden")
	if len(in) != len(golden) || len(in) == 0 {
		t.Fatalf("%s: %d inputs, %d golden lines", name, len(in), len(golden))
	}
	out := make([][2]string, len(in))
	for i := range in {
		out[i] = [2]string{in[i], golden[i]}
	}
	return out
}

func unb64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOracleKeys(t *testing.T) {
	reasons := map[string]error{
		"SYNTAX": ErrSyntax, "NOTLIST": ErrNotSourceKey, "SIZE": ErrNotSourceKey, "NAME": ErrNotSourceKey,
		"PARTITION": ErrNotSourceKey, "NULLPARTITION": ErrNotSourceKey,
	}
	for i, p := range readPairs(t, "keys") {
		key := unb64(t, p[0])
		want := strings.Split(p[1], "\t")
		conn, part, raw, err := ParseKey(key)
		if want[0] == "REJECT" {
			if !errors.Is(err, reasons[want[1]]) {
				t.Errorf("line %d: ParseKey(%q) error = %v, Connect: %s", i+1, key, err, want[1])
			}
			continue
		}
		if err != nil {
			t.Errorf("line %d: ParseKey(%q): %v; Connect accepts it", i+1, key, err)
			continue
		}
		if !isSubslice(key, raw) {
			t.Errorf("line %d: rawPartition %q is not a sub-slice of the key", i+1, raw)
		}
		if got, want := CanonicalKey(conn, part), unb64(t, want[1]); !bytes.Equal(got, want) {
			t.Errorf("line %d: key %q\nCanonicalKey = %q\nConnect      = %q", i+1, key, got, want)
		}
		if got, want := RESTMap(part), unb64(t, want[2]); !bytes.Equal(got, want) {
			t.Errorf("line %d: key %q\nRESTMap = %q\nConnect = %q", i+1, key, got, want)
		}
	}
}

func TestOracleValues(t *testing.T) {
	for i, p := range readPairs(t, "values") {
		var in []byte
		if p[0] != "nil" {
			in = unb64(t, p[0])
		}
		m, err := ParseMap(in)
		want := strings.Split(p[1], "\t")
		var wantErr error
		switch want[0] {
		case "OK":
			if err != nil {
				t.Errorf("line %d: ParseMap(%q): %v; Connect accepts it", i+1, in, err)
			} else if got, want := RESTMap(m), unb64(t, want[1]); !bytes.Equal(got, want) {
				t.Errorf("line %d: value %q\nRESTMap = %q\nConnect = %q", i+1, in, got, want)
			}
			continue
		case "TOMBSTONE":
			wantErr = ErrTombstone
		case "NULL":
			wantErr = ErrNullOffset
		case "NOTOBJECT":
			wantErr = ErrNotObject
		default:
			wantErr = ErrSyntax
		}
		if !errors.Is(err, wantErr) {
			t.Errorf("line %d: ParseMap(%q) error = %v, want %v", i+1, in, err, wantErr)
		}
	}
}

func TestOraclePairs(t *testing.T) {
	for i, p := range readPairs(t, "pairs") {
		keys := strings.Split(p[0], "\t")
		_, a, _, err := ParseKey(unb64(t, keys[0]))
		if err != nil {
			t.Fatal(err)
		}
		_, b, _, err := ParseKey(unb64(t, keys[1]))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := Equal(a, b), p[1] == "true"; got != want {
			t.Errorf("line %d: Equal(%s, %s) = %v, Java's Map.equals = %v", i+1, a, b, got, want)
		}
		if Equal(a, b) != Equal(b, a) {
			t.Errorf("line %d: Equal is not symmetric", i+1)
		}
	}
}

// parseStrings parses a JSON array of strings.
func parseStrings(t *testing.T, s string) []string {
	t.Helper()
	p := parser{in: []byte(s)}
	v, _, err := p.parseDocument()
	if err != nil || v.Kind() != KindArray {
		t.Fatalf("parse %q: %v", s, err)
	}
	var out []string
	for _, e := range v.Array() {
		out = append(out, e.Str())
	}
	return out
}

func TestOracleHashMap(t *testing.T) {
	skipped := 0
	for i, p := range readPairs(t, "hashmap") {
		keys, want := parseStrings(t, p[0]), parseStrings(t, p[1])
		got, treeified := hashMapOrder(keys)
		if treeified {
			skipped++
			continue
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("line %d: HashMapOrder(%q)\n= %q\nJava %q", i+1, keys, got, want)
		}
	}
	// Only the 11 and 12 colliding keys of hashmap.in get treeified.
	if skipped != 4 {
		t.Errorf("%d sets skipped as treeified, want 4", skipped)
	}
}

func TestOracleDoubles(t *testing.T) {
	jdk17Differs := 0
	for i, p := range readPairs(t, "doubles") {
		bits, err := strconv.ParseUint(p[0], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(bits)
		want := strings.Split(p[1], "\t") // JDK 25 Double.toString, Jackson's bytes, JDK 17 Double.toString
		if got := FormatDouble(f); got != want[0] {
			t.Errorf("line %d: FormatDouble(%v) = %s, Java %s", i+1, f, got, want[0])
		}
		if got := DoubleValue(f).String(); got != want[1] {
			t.Errorf("line %d: DoubleValue(%v) = %s, Jackson %s", i+1, f, got, want[1])
		}
		if want[0] != want[2] {
			jdk17Differs++
		}
	}
	t.Logf("JDK 17's Double.toString differs from JDK 19+ for %d of the values", jdk17Differs)
}

// isSubslice reports whether inner shares outer's memory and lies within it.
func isSubslice(outer, inner []byte) bool {
	if len(inner) == 0 {
		return true
	}
	for i := range outer {
		if &outer[i] == &inner[0] {
			return i+len(inner) <= len(outer)
		}
	}
	return false
}
