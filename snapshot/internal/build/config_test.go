package build

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
)

// slowProperties is the full decode ConfigState falls back to.
func slowProperties(v []byte) (map[string]string, bool) {
	var d struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(v, &d); err != nil || d.Properties == nil {
		return nil, false
	}
	props := make(map[string]string, len(d.Properties))
	for k, val := range d.Properties {
		if s, ok := val.(string); ok {
			props[k] = s
		} else if val != nil {
			props[k] = fmt.Sprint(val)
		}
	}
	return props, true
}

// What PlainProperties accepts it reads as the full decode does; the rest
// it leaves to the full decode.
func TestPlainProperties(t *testing.T) {
	for _, tc := range []struct {
		in    string
		plain bool
	}{
		{`{"properties":{"connector.class":"FileStreamSource","tasks.max":"1","file":"/data/a.txt"}}`, true},
		{`{"properties":{}}`, true},
		{`{"properties":{"a":"1","a":"2"}}`, true},
		{`{"properties":{"a":""}}`, true},
		{`{"properties":{"topics.regex":"a\\.b"}}`, false},
		{`{"properties":{"tasks.max":1}}`, false},
		{`{"properties":{"x":null}}`, false},
		{`{"properties":null}`, false},
		{`{"properties": {"a":"b"}}`, false},
		{`{"properties":{"a":"b"},"other":1}`, false},
		{`{"properties":{"a":"b"}`, false},
		{`{"properties":{"a":"é"}}`, false},
		{`[]`, false},
		{``, false},
	} {
		got, ok := PlainProperties([]byte(tc.in))
		if ok != tc.plain {
			t.Errorf("%s: plain %v, want %v", tc.in, ok, tc.plain)
			continue
		}
		if !ok {
			continue
		}
		want, wok := slowProperties([]byte(tc.in))
		if !wok || !maps.Equal(got, want) {
			t.Errorf("%s: %v, full decode %v (%v)", tc.in, got, want, wok)
		}
	}
}

func FuzzPlainProperties(f *testing.F) {
	f.Add([]byte(`{"properties":{"connector.class":"X","tasks.max":"1"}}`))
	f.Add([]byte(`{"properties":{"a":"1","b":2}}`))
	f.Fuzz(func(t *testing.T, v []byte) {
		got, ok := PlainProperties(v)
		if !ok {
			return
		}
		want, wok := slowProperties(v)
		if !wok || !maps.Equal(got, want) {
			t.Fatalf("%q: %v, full decode %v (%v)", v, got, want, wok)
		}
	})
}
