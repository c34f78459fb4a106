package snapshot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// streamedDocs are documents Encode writes, of the shapes a streamed Get
// must decode exactly as Decode does: the fixture (escapes, base64 keys,
// empty values, parse errors), no source offsets, one key of 1 MiB, and
// random keys and values in several partitions.
func streamedDocs(t testing.TB) map[string][]byte {
	docs := map[string][]byte{}
	enc := func(name string, s *Snapshot) {
		var b bytes.Buffer
		if err := s.Encode(&b); err != nil {
			t.Fatal(err)
		}
		docs[name] = b.Bytes()
	}
	enc("fixture", fixtureSnapshot())
	empty := fixtureSnapshot()
	empty.SetSourceOffsets([]SourceOffset{})
	enc("no source offsets", empty)
	big := fixtureSnapshot()
	big.SetSourceOffsets(append(big.SourceTable().Collect()[:1:1], SourceOffset{Topic: "connect-offsets", Partition: 1, Offset: 5,
		Key:   Bytes(`["big",{"k":"` + strings.Repeat("x", 1<<20) + `"}]`),
		Value: Bytes(`{"position":1}`), Connector: "big"}))
	big.Normalize()
	enc("one key of 1 MiB", big)
	r := rand.New(rand.NewPCG(1, 2))
	random := fixtureSnapshot()
	random.SetSourceOffsets(nil)
	for i := range 300 {
		k := fmt.Sprintf(`["c%d",{"file":"/data/%x\"\\é"}]`, r.IntN(20), r.Uint64())
		if i%17 == 0 {
			k = string([]byte{0xff, byte(i)}) // base64
		}
		random.AppendSourceOffsets(SourceOffset{Topic: "connect-offsets", Partition: int32(r.IntN(5)),
			Offset: int64(i), Key: Bytes(k), Value: Bytes(fmt.Sprintf(`{"position":%d}`, r.Int64())), Connector: fmt.Sprintf("c%d", r.IntN(20))})
	}
	random.Normalize()
	enc("random", random)
	if v1, err := os.ReadFile("testdata/v1.json"); err == nil {
		docs["testdata/v1.json"] = v1
	} else {
		t.Fatal(err)
	}
	return docs
}

// TestDecodeStreamed checks that a document decoded out of a window of its
// stream is the one Decode makes, whatever the window and however the
// stream is cut: every entry is cut at the window's end somewhere.
func TestDecodeStreamed(t *testing.T) {
	for name, doc := range streamedDocs(t) {
		want, err := Decode(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, ahead := range []int{1, 7, 64, 1000, WindowAhead} {
			for how, r := range map[string]func() *bytes.Reader{"whole": func() *bytes.Reader { return bytes.NewReader(doc) }} {
				for _, cut := range []string{"reads as they come", "one byte per read"} {
					rd := any(r()).(interface{ Read([]byte) (int, error) })
					if cut == "one byte per read" {
						if ahead > 64 && len(doc) > 1<<20 {
							continue // slow, and the small windows cut it already
						}
						rd = iotest.OneByteReader(r())
					}
					got, ok := DecodeStreamedAhead(rd, ahead, new(offsetsCollector))
					if !ok {
						t.Fatalf("%s (%s, ahead %d, %s): not decoded streamed", name, how, ahead, cut)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s (ahead %d, %s): streamed decode differs from Decode", name, ahead, cut)
					}
				}
			}
		}
	}
}

// TestDecodeStreamedRefuses checks that what a streamed decode cannot be
// sure of goes to the whole decoder: a document cut short, a damaged
// entry, source offsets that are not an array, a second source_offsets
// field, the marker inside a nested object.
func TestDecodeStreamedRefuses(t *testing.T) {
	doc := streamedDocs(t)["fixture"]
	at := bytes.Index(doc, []byte(SoMarker))
	cases := map[string][]byte{
		"cut short":      doc[:len(doc)-10],
		"cut in offsets": doc[:at+100],
		"damaged entry":  bytes.Replace(doc, []byte(`"partition":1,"offset":12`), []byte(`"partition":1,"offset":x`), 1),
		"null":           append(append(doc[:at+len(SoMarker):at+len(SoMarker)], "null"...), doc[bytes.Index(doc, []byte(`,"sink_groups"`)):]...),
		"twice":          bytes.Replace(doc, []byte(`,"warnings"`), []byte(`,"source_offsets":[],"warnings"`), 1),
		"nested":         bytes.Replace(doc, []byte(`"cluster_id":"lkc-7q2x9"`), []byte(`"cluster_id":"lkc-7q2x9","x":{"a":1,"source_offsets":[]}`), 1),
		"no marker":      []byte(`{"version":1}`),
	}
	for name, data := range cases {
		if _, ok := DecodeStreamedAhead(bytes.NewReader(data), 16, new(offsetsCollector)); ok {
			t.Errorf("%s: decoded streamed", name)
		}
	}
}

// FuzzDecodeStreamed: whatever a streamed decode accepts, Decode decodes
// to the same Snapshot.
func FuzzDecodeStreamed(f *testing.F) {
	for _, doc := range streamedDocs(f) {
		if len(doc) < 64<<10 {
			f.Add(doc, uint16(16))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, ahead uint16) {
		got, ok := DecodeStreamedAhead(bytes.NewReader(data), int(ahead%4096)+1, new(offsetsCollector))
		if !ok {
			return
		}
		want, err := Decode(data)
		if err != nil {
			t.Fatalf("streamed decode accepted what Decode refuses: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatal("streamed decode differs from Decode")
		}
	})
}
