package connectjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPlainKey: PlainKey accepts only plain ["name",{flat object}] keys, and
// for those agrees with ParseKey; on every key of the Java oracle too.
func TestPlainKey(t *testing.T) {
	for key, want := range map[string]string{
		`["c",{}]`: `{}`,
		`["source-file-01",{"filename":"/data/testdata.txt"}]`:                 `{"filename":"/data/testdata.txt"}`,
		`["eu->us.Mirror",{"topic":"t","partition":0,"cluster":"eu","x":-12}]`: `{"topic":"t","partition":0,"cluster":"eu","x":-12}`,
		`["c",{"a":true,"b":false,"c":null,"d":123456789012345678}]`:           `{"a":true,"b":false,"c":null,"d":123456789012345678}`,
		`["c",{"a":1}] `:                  "", // white space
		`["c", {"a":1}]`:                  "",
		`["c",{"a":1.5}]`:                 "", // not an integer
		`["c",{"a":01}]`:                  "", // leading zero (Jackson reads it; the fast path leaves it to ParseKey)
		`["c",{"a":1234567890123456789}]`: "", // 19 digits
		`["c",{"a":"\u00e9"}]`:            "", // escape
		`["c\"",{"a":1}]`:                 "",
		`["c",{"a":{"b":1}}]`:             "", // nested
		`["c",{"a":[1]}]`:                 "",
		`["c",{"a":1},1]`:                 "",
		`["c",{"a":1}`:                    "",
		`["c",{"a":1,}]`:                  "",
		`["c",{"a":tru}]`:                 "",
		`["c",{"a":-}]`:                   "",
		"[\"c\",{\"a\":\"\x7f\"}]":        "",
		`[1,{"a":1}]`:                     "",
		`"c"`:                             "",
	} {
		name, raw, ok := PlainKey([]byte(key))
		if ok != (want != "") || string(raw) != want {
			t.Errorf("PlainKey(%s) = %q, %q, %v; want raw %q", key, name, raw, ok, want)
			continue
		}
		if !ok {
			continue
		}
		conn, _, praw, err := ParseKey([]byte(key))
		if err != nil || conn != string(name) || !bytes.Equal(praw, raw) {
			t.Errorf("PlainKey(%s) = %q, %q; ParseKey = %q, %q, %v", key, name, raw, conn, praw, err)
		}
		if !json.Valid(raw) {
			t.Errorf("PlainKey(%s): %s is not valid JSON for encoding/json", key, raw)
		}
	}
	for i, p := range readPairs(t, "keys") {
		key := unb64(t, p[0])
		name, raw, ok := PlainKey(key)
		if !ok {
			continue
		}
		conn, _, praw, err := ParseKey(key)
		if err != nil || conn != string(name) || !bytes.Equal(praw, raw) {
			t.Errorf("line %d: PlainKey(%q) = %q, %q; ParseKey = %q, %q, %v", i+1, key, name, raw, conn, praw, err)
		}
	}
}

// plainByte is what plainString accepts inside a string.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' }

// plainWord finds every byte value that is not plain at every place of the
// word, among plain bytes of every value and among other such bytes.
func TestPlainWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var plain []byte
	for c := 0; c < 256; c++ {
		if plainByte(byte(c)) {
			plain = append(plain, byte(c))
		}
	}
	w := make([]byte, 8)
	for n := 0; n < 2000; n++ {
		for i := range w {
			w[i] = plain[rng.IntN(len(plain))]
		}
		if !plainWord(binary.LittleEndian.Uint64(w)) {
			t.Fatalf("plainWord(%q) = false", w)
		}
		for k := range w {
			for c := 0; c < 256; c++ {
				v := slices.Clone(w)
				v[k] = byte(c)
				if rng.IntN(4) == 0 { // and another byte of any value
					v[rng.IntN(8)] = byte(rng.IntN(256))
				}
				want := true
				for _, b := range v {
					want = want && plainByte(b)
				}
				if plainWord(binary.LittleEndian.Uint64(v)) != want {
					t.Fatalf("plainWord(%q) = %v", v, !want)
				}
			}
		}
	}
}

// plainString, eight bytes at a time, ends where reading a byte at a time
// ends, wherever the quote or the byte that is not plain is.
func TestPlainStringAsBytewise(t *testing.T) {
	bytewise := func(b []byte, i int) int {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		for j := i + 1; j < len(b); j++ {
			switch c := b[j]; {
			case c == '"':
				return j + 1
			case !plainByte(c):
				return -1
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const alphabet = "abcXYZ/-_.:{} 019"
	for n := 0; n < 200000; n++ {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if len(b) > 0 {
			b[0] = '"'
		}
		for k := rng.IntN(3); k > 0 && len(b) > 1; k-- {
			b[1+rng.IntN(len(b)-1)] = []byte{'"', '\\', 0x1f, 0x7f, 0x80, 0xff, 0x00, '\n', 0xc3}[rng.IntN(9)]
		}
		if got, want := plainString(b, 0), bytewise(b, 0); got != want {
			t.Fatalf("plainString(%q) = %d, want %d", b, got, want)
		}
	}
}

func BenchmarkPlainKey(b *testing.B) {
	key := []byte(`["file-bulk-0042",{"filename":"/data/bulk/file-bulk-0042/part-000017.log"}]`)
	for b.Loop() {
		PlainKey(key)
	}
}

// PrintableASCII agrees with reading a byte at a time, whatever the length
// and wherever the byte that is not printable is.
func TestPrintableASCII(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 100000; n++ {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5f))
		}
		for k := rng.IntN(3); k > 0 && len(b) > 0; k-- {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		want := true
		for _, c := range b {
			want = want && c >= 0x20 && c < 0x7f
		}
		if PrintableASCII(b) != want {
			t.Fatalf("PrintableASCII(%q) = %v", b, !want)
		}
	}
}
