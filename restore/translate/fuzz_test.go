package translate

import (
	"bytes"
	"testing"
)

// FuzzParseCheckpoint: MirrorMaker 2's checkpoint and offset-sync records
// (read from a cluster the operator points at) decode or are refused, and
// a decoded record encodes back to the bytes it was read from.
func FuzzParseCheckpoint(f *testing.F) {
	c := Checkpoint{Group: "connect-s3", Topic: "clicks", Partition: 3, Upstream: 90, Downstream: 45, Metadata: ""}
	f.Add(c.AppendKey(nil), c.AppendValue(nil))
	s := OffsetSync{Topic: "clicks", Partition: 1, Upstream: 10, Downstream: 7}
	f.Add(s.AppendKey(nil), s.AppendValue(nil))
	f.Add([]byte{0, 1}, []byte{0, 1, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if c, err := ParseCheckpoint(key, value); err == nil {
			if k := c.AppendKey(nil); !bytes.HasPrefix(key, k) {
				t.Fatalf("checkpoint key %x re-encodes as %x", key, k)
			}
			if v := c.AppendValue(nil); !bytes.HasPrefix(value, v) {
				t.Fatalf("checkpoint value %x re-encodes as %x", value, v)
			}
		}
		if s, err := ParseOffsetSync(key, value); err == nil {
			if v := s.AppendValue(nil); !bytes.HasPrefix(value, v) {
				t.Fatalf("offset sync value %x re-encodes as %x", value, v)
			}
		}
	})
}
