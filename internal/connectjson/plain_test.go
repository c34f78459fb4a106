package connectjson

import (
	"bytes"
	"encoding/json"
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
