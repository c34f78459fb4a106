package snapshot

import (
	"fmt"
	"testing"
)

// TestSeedSinkDecoded: a document the streamed decoder did not take was
// decoded whole; Decoded (which the store's GetWith calls) then puts its
// source offsets into the seed and drops them from the snapshot, as the
// store's GetForTail did before it became GetWith with a SeedSink. After a
// streamed decode it changes nothing.
func TestSeedSinkDecoded(t *testing.T) {
	want := fixtureSnapshot()
	for i := range 20 {
		want.SourceOffsets = append(want.SourceOffsets, SourceOffset{Topic: "connect-offsets", Partition: int32(i % 3), Offset: int64(100 + i),
			Key: Bytes(fmt.Sprintf(`["c",{"f":%d}]`, i%7)), Value: Bytes(fmt.Sprintf(`{"position":%d}`, i)), Connector: "c"})
	}
	whole := *want
	whole.SourceOffsets = append([]SourceOffset(nil), want.SourceOffsets...)
	sink := &SeedSink{S: NewTailSeed()}
	sink.Decoded(&whole)
	if whole.SourceOffsets != nil || !sink.Done {
		t.Fatalf("after Decoded: SourceOffsets %v, done %v", whole.SourceOffsets != nil, sink.Done)
	}
	if d := sameSeed(want, sink.S.Last, oldSeed(want)); d != "" {
		t.Fatal(d)
	}
	seed := sink.S
	sink.Decoded(&whole)
	if sink.S != seed {
		t.Error("a second Decoded replaced the seed")
	}
}
