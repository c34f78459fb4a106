package connectjson

import (
	"errors"
	"testing"
)

// FuzzDecodeOffsets: a Connect REST offsets body (from a worker, or a file
// an operator hands to restore) decodes or is refused with an
// *OffsetsError; what decodes encodes and decodes again to entries that
// render the same.
func FuzzDecodeOffsets(f *testing.F) {
	f.Add([]byte(`{"offsets":[{"partition":{"file":"/var/log/a"},"offset":{"position":42}}]}`), false)
	f.Add([]byte(`{"offsets":[{"partition":{"kafka_topic":"clicks","kafka_partition":0},"offset":{"kafka_offset":90}}]}`), true)
	f.Add([]byte(`{"offsets":[{"partition":{"server":"db1"},"offset":null},{"partition":null}]}`), false)
	f.Add([]byte(`{"offsets":[{"partition":{"table":"t"},"offset":{"timestamp_nanos":0,"incrementing":207,"timestamp":1733900000000}}],"extra":1}`), true)
	f.Add([]byte(`{"offsets":[{"partition":{"a":[1,2.5e3,true,{"b":null}]},"offset":{"x":-9223372036854775808}}]}`), false)
	f.Fuzz(func(t *testing.T, body []byte, strict bool) {
		entries, err := DecodeOffsets(body, DecodeOptions{DisallowUnknownFields: strict})
		if err != nil {
			var oe *OffsetsError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v is not an *OffsetsError", err)
			}
			return
		}
		again, err := DecodeOffsets(EncodeOffsets(entries), DecodeOptions{DisallowUnknownFields: true})
		if err != nil {
			t.Fatalf("re-encoded body does not decode: %v\n%s", err, EncodeOffsets(entries))
		}
		if len(again) != len(entries) {
			t.Fatalf("%d entries re-decode as %d", len(entries), len(again))
		}
		// Compared as rendered: a number beyond a double (1e400) decodes
		// as Infinity and is written back as the string "Infinity", so
		// Equal tells them apart while Connect's rendering does not.
		for i := range entries {
			if a, b := string(RESTMap(entries[i].Partition)), string(RESTMap(again[i].Partition)); a != b {
				t.Fatalf("entry %d: partition %s re-decodes as %s", i, a, b)
			}
		}
	})
}
