package journal

import (
	"testing"
	"time"
)

// FuzzParseSegmentKey: any object name under the journal's prefix (a
// bucket may hold anything) parses or is ignored; what parses is the name
// SegmentKey writes for it.
func FuzzParseSegmentKey(f *testing.F) {
	last := time.Date(2026, 12, 7, 2, 15, 42, 123e6, time.UTC)
	f.Add(SegmentKey("20261207T021500.000Z-abcd", 0, 1, 9, last))
	f.Add(SegmentKey("20261207T021500.000Z-abcd", 1, 10, 200, last))
	f.Add(JournalPrefix + "x/0/0000000000000001-0000000000000009-1765073742123" + segmentSuffix)
	f.Add(JournalPrefix + "20261207T021500.000Z-abcd/0/0000000000000001.claim")
	f.Fuzz(func(t *testing.T, key string) {
		si, ok := ParseSegmentKey(key)
		if !ok {
			return
		}
		if got := SegmentKey(si.Epoch, si.Level, si.FirstSeq, si.LastSeq, si.LastTime); got != key {
			t.Fatalf("ParseSegmentKey(%q) = %+v, which SegmentKey writes as %q", key, si, got)
		}
	})
}
