package connectjson

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParseKey checks that ParseKey never panics and that what it accepts
// behaves: what PlainKey accepts it accepts with the same connector and raw
// partition; rawPartition lies inside the key and parses to the same partition,
// and writing a key and reading it back reaches a fixed point after one round
// (one, not zero: "-1e-400" is read as -0.0, written as -0.0 and then read as
// 0.0, exactly as Connect does). The seed corpus is in
// testdata/fuzz/FuzzParseKey.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte(`["source-file-01",{"filename":"/data/testdata.txt"}]`))
	f.Add([]byte(`["eu->us.MirrorSourceConnector",{"topic":"t","partition":0,"cluster":"eu"}]`))
	f.Fuzz(func(t *testing.T, key []byte) {
		conn, part, raw, err := ParseKey(key)
		if name, plainRaw, ok := PlainKey(key); ok && (err != nil || conn != string(name) || !bytes.Equal(raw, plainRaw)) {
			t.Fatalf("PlainKey(%q) = %q, %q; ParseKey: %q, %q, %v", key, name, plainRaw, conn, raw, err)
		}
		if err != nil {
			if conn != "" || part != nil || raw != nil {
				t.Fatalf("ParseKey(%q) returned values with error %v", key, err)
			}
			return
		}
		if !isSubslice(key, raw) {
			t.Fatalf("ParseKey(%q): rawPartition %q is not a sub-slice of the key", key, raw)
		}
		fromRaw, err := ParseMap(raw)
		if err != nil || !bytes.Equal(Marshal(fromRaw), Marshal(part)) {
			t.Fatalf("ParseKey(%q): rawPartition %q parses to %s, %v; partition is %s", key, raw, Marshal(fromRaw), err, Marshal(part))
		}
		if !Equal(part, part) {
			t.Fatalf("Equal(p, p) is false for %s", Marshal(part))
		}
		// MarshalKey and CanonicalKey output parse, and converge after one round.
		for _, write := range []func(string, Map) []byte{MarshalKey, CanonicalKey} {
			once := write(conn, part)
			c1, p1, _, err := ParseKey(once)
			if err != nil || c1 != conn {
				t.Fatalf("ParseKey(%s) = %q, %v; want connector %q", once, c1, err, conn)
			}
			if !Equal(p1, part) && !changesOnRewrite(part) {
				t.Fatalf("key %q: written %s, read back as a different partition %s", key, once, Marshal(p1))
			}
			twice := write(c1, p1)
			c2, p2, _, err := ParseKey(twice)
			if err != nil {
				t.Fatalf("ParseKey(%s): %v", twice, err)
			}
			if thrice := write(c2, p2); !bytes.Equal(twice, thrice) {
				t.Fatalf("key %q: no fixed point:\n%s\n%s", key, twice, thrice)
			}
		}
		if !bytes.Equal(RESTMap(part), Marshal(connectMap(part))) {
			t.Fatalf("RESTMap(%s) differs from the canonical partition", Marshal(part))
		}
	})
}

// changesOnRewrite reports whether m holds a double that Connect decodes
// differently once it has written it: a zero (a parsed -0.0 from an
// underflowing literal becomes +0.0) or an infinity (from a literal such as
// 1e400, written as the string "Infinity").
func changesOnRewrite(m Map) bool {
	for _, f := range m {
		if valueChangesOnRewrite(f.Value) {
			return true
		}
	}
	return false
}

func valueChangesOnRewrite(v Value) bool {
	switch v.kind {
	case KindDouble:
		return v.dbl == 0 || math.IsInf(v.dbl, 0)
	case KindObject:
		return changesOnRewrite(v.obj)
	case KindArray:
		for _, e := range v.arr {
			if valueChangesOnRewrite(e) {
				return true
			}
		}
	}
	return false
}
