package capture

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// fixtureSnapshot is the format's fixture, as the snapshot package's
// golden file holds it.
func fixtureSnapshot() *snapshot.Snapshot {
	doc, err := os.ReadFile("../testdata/v1.json")
	if err != nil {
		panic(err)
	}
	s, err := snapshot.Decode(doc)
	if err != nil {
		panic(err)
	}
	return s
}

// streamedDocs are documents Encode writes, of the shapes a streamed read
// must decode as Decode does (the snapshot package's test of the streamed
// decoder uses the same): the fixture (escapes, base64 keys, empty
// values, parse errors), no source offsets, one key of 1 MiB, and random
// keys and values in several partitions.
func streamedDocs(t testing.TB) map[string][]byte {
	docs := map[string][]byte{}
	enc := func(name string, s *snapshot.Snapshot) {
		var b bytes.Buffer
		if err := s.Encode(&b); err != nil {
			t.Fatal(err)
		}
		docs[name] = b.Bytes()
	}
	enc("fixture", fixtureSnapshot())
	empty := fixtureSnapshot()
	empty.SetSourceOffsets([]snapshot.SourceOffset{})
	enc("no source offsets", empty)
	big := fixtureSnapshot()
	big.SetSourceOffsets(append(big.SourceTable().Collect()[:1:1], snapshot.SourceOffset{Topic: "connect-offsets", Partition: 1, Offset: 5,
		Key:   snapshot.Bytes(`["big",{"k":"` + strings.Repeat("x", 1<<20) + `"}]`),
		Value: snapshot.Bytes(`{"position":1}`), Connector: "big"}))
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
		random.AppendSourceOffsets(snapshot.SourceOffset{Topic: "connect-offsets", Partition: int32(r.IntN(5)),
			Offset: int64(i), Key: snapshot.Bytes(k), Value: snapshot.Bytes(fmt.Sprintf(`{"position":%d}`, r.Int64())), Connector: fmt.Sprintf("c%d", r.IntN(20))})
	}
	random.Normalize()
	enc("random", random)
	return docs
}

// The tail's last values: set, get, overwrite and remove by key, the
// values intact across compactions, and the arena bounded under steady
// rewrites (about twice the live values, or keyview.CompactAbove).
func TestLastValues(t *testing.T) {
	lv := newLastValues(maphash.MakeSeed())
	key := func(i int) []byte { return fmt.Appendf(nil, `["conn-%d",{"file":"/data/%d"}]`, i%7, i) }
	const keys = 5000
	// Half the values held inline, half in the arena.
	value := func(round, i int) string {
		if i%2 == 0 {
			return fmt.Sprintf(`{"position":%d}`, round*keys+i)
		}
		return fmt.Sprintf(`{"file":"/data/%d","position":%d}`, i, round*keys+i)
	}
	for round := 0; round < 40; round++ {
		for i := 0; i < keys; i++ {
			lv.Set(key(i), []byte(value(round, i)))
		}
	}
	for i := 0; i < keys; i += 3 {
		lv.Remove(key(i))
	}
	lv.Set(key(1), []byte{})
	for i := 0; i < keys; i++ {
		v, ok := lv.Get(key(i))
		switch {
		case i%3 == 0:
			if ok {
				t.Fatalf("key %d removed, still has %q", i, v)
			}
		case i == 1:
			if !ok || v == nil || len(v) != 0 {
				t.Fatalf("key 1 set empty: %q %v", v, ok)
			}
		default:
			if want := value(39, i); !ok || string(v) != want {
				t.Fatalf("key %d: %q %v, want %s", i, v, ok, want)
			}
		}
	}
	if want := keys - (keys+2)/3; lv.Len() != want {
		t.Fatalf("%d keys held, want %d", lv.Len(), want)
	}
	if lv.Arena.Size > 2*lv.Live+keyview.CompactAbove+64 || lv.Live == 0 {
		t.Fatalf("arena of %d bytes for %d live bytes after 40 rewrites of every key", lv.Arena.Size, lv.Live)
	}
}

// TestLastValuesInline checks that every value comes back from get as the
// exact bytes set, null and empty ones too, whether it was held inline
// ({"name":N}, N < 2^48, as get rebuilds it) or in the arena (anything
// else: spaces, signs, leading zeros, fractions, escapes, other shapes),
// and which are inline.
func TestLastValuesInline(t *testing.T) {
	cases := []struct {
		v      string
		inline bool
	}{
		{`{"position":0}`, true},
		{`{"position":123456789}`, true},
		{`{"offset":281474976710655}`, true}, // 2^48-1
		{`{"":7}`, true},
		{`{"a b/c<>{}":1}`, true},
		{`{"offset":281474976710656}`, false}, // 2^48
		{`{"position":0123}`, false},
		{`{"position":-1}`, false},
		{`{"position":1.5}`, false},
		{`{"position":1e3}`, false},
		{`{"position": 1}`, false},
		{`{ "position":1}`, false},
		{`{"position":1 }`, false},
		{`{"position":1} `, false},
		{`{"pos\u0041":1}`, false},
		{`{"position":"1"}`, false},
		{`{"position":1,"file":"x"}`, false},
		{`{"é":1}`, false},
		{`{"position":}`, false},
		{`{"position"}`, false},
		{`{"position`, false},
		{`{"":}`, false},
		{`{}`, false},
		{`[1]`, false},
		{`12`, false},
		{``, false},
		{`{"position":1234567890123456}`, false},
	}
	lv := newLastValues(maphash.MakeSeed())
	for i, c := range cases {
		key := fmt.Appendf(nil, "k%d", i)
		lv.Set(key, []byte(c.v))
		if w, _ := lv.Index.Get(maphash.Bytes(lv.Seed, key)); (w&inlineBit != 0) != c.inline {
			t.Errorf("%q: inline %v, want %v", c.v, !c.inline, c.inline)
		}
	}
	lv.Set([]byte("nil"), nil)
	for i, c := range cases {
		got, ok := lv.Get(fmt.Appendf(nil, "k%d", i))
		if !ok || got == nil || string(got) != c.v {
			t.Errorf("get of %q: %q %v", c.v, got, ok)
		}
	}
	if got, ok := lv.Get([]byte("nil")); !ok || got == nil || len(got) != 0 {
		t.Errorf("get of a nil value: %q %v, want empty", got, ok)
	}
	// Random values round-trip, through compactions.
	lv = newLastValues(maphash.MakeSeed())
	r := rand.New(rand.NewPCG(3, 4))
	want := map[string]string{}
	for i := range 20000 {
		k := fmt.Sprintf("key-%d", r.IntN(500))
		var v string
		switch r.IntN(4) {
		case 0:
			v = fmt.Sprintf(`{"f%d":%d}`, r.IntN(3), r.Uint64()>>r.IntN(64))
		case 1:
			v = fmt.Sprintf(`{"position":%d,"i":%d}`, r.Int64(), i)
		case 2:
			b := make([]byte, r.IntN(40))
			for j := range b {
				b[j] = byte(r.IntN(256))
			}
			v = string(b)
		default:
			lv.Remove([]byte(k))
			delete(want, k)
			continue
		}
		lv.Set([]byte(k), []byte(v))
		want[k] = v
	}
	if lv.Len() != len(want) {
		t.Fatalf("%d keys held, want %d", lv.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := lv.Get([]byte(k)); !ok || string(got) != v {
			t.Fatalf("%s: %q %v, want %q", k, got, ok, v)
		}
	}
}

// oldSeed is how NewTail seeded its last values before GetForTail: every
// snapshot.SourceOffset of the state, in order, set in its partition's lastValues.
func oldSeed(state *snapshot.Snapshot) map[string]map[int32]*lastValues {
	seed := maphash.MakeSeed()
	out := map[string]map[int32]*lastValues{}
	for _, o := range state.SourceTable().Collect() {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]*lastValues{}
		}
		lv := out[o.Topic][o.Partition]
		if lv == nil {
			lv = newLastValues(seed)
			out[o.Topic][o.Partition] = lv
		}
		lv.Set(o.Key, o.Value)
	}
	return out
}

// sameSeed reports how got differs from want (seeds of their own, so
// compared by the keys of state): "" when they hold the same keys and
// values, partition by partition.
func sameSeed(state *snapshot.Snapshot, got, want map[string]map[int32]*lastValues) string {
	for topic, parts := range want {
		for p, w := range parts {
			g := got[topic][p]
			if g == nil {
				return fmt.Sprintf("%s/%d: no last values", topic, p)
			}
			if g.Len() != w.Len() || g.Live != w.Live || g.Arena.Size != w.Arena.Size {
				return fmt.Sprintf("%s/%d: %d keys, %d live bytes, arena %d; want %d, %d, %d", topic, p, g.Len(), g.Live, g.Arena.Size, w.Len(), w.Live, w.Arena.Size)
			}
		}
	}
	for topic, parts := range got {
		for p, g := range parts {
			if want[topic][p] == nil && g.Len() > 0 {
				return fmt.Sprintf("%s/%d: %d keys that the state has not", topic, p, g.Len())
			}
		}
	}
	for _, o := range state.SourceTable().Collect() {
		gv, gok := got[o.Topic][o.Partition].Get(o.Key)
		wv, wok := want[o.Topic][o.Partition].Get(o.Key)
		if gok != wok || !bytes.Equal(gv, wv) || (gv == nil) != (wv == nil) {
			return fmt.Sprintf("%s/%d key %q: %q %v, want %q %v", o.Topic, o.Partition, o.Key, gv, gok, wv, wok)
		}
	}
	return ""
}

// TestTailSeedDecode checks that a document decoded for the journal's
// tail (SeedSink) seeds exactly the last values NewTail made from Decode's
// SourceOffsets, whatever the window, and the same everything else: on
// the fixture, a key of 1 MiB, no source offsets, random keys, null and
// empty keys and values, and keys written twice in a partition (the last
// value wins). Such a snapshot has no SourceOffsets and refuses to be
// encoded.
func TestTailSeedDecode(t *testing.T) {
	docs := streamedDocs(t)
	enc := func(s *snapshot.Snapshot) []byte {
		var b bytes.Buffer
		if err := s.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	s := fixtureSnapshot()
	s.AppendSourceOffsets(snapshot.SourceOffset{Topic: "connect-offsets", Partition: 7, Offset: 1, Key: nil, Value: nil},
		snapshot.SourceOffset{Topic: "connect-offsets", Partition: 7, Offset: 2, Key: snapshot.Bytes{}, Value: snapshot.Bytes{}})
	docs["null key and value"] = enc(s)
	twice := fixtureSnapshot()
	for i := range 50 {
		twice.AppendSourceOffsets(snapshot.SourceOffset{Topic: "connect-offsets", Partition: int32(i % 3), Offset: int64(100 + i),
			Key: snapshot.Bytes(fmt.Sprintf(`["c",{"f":%d}]`, i%10)), Value: snapshot.Bytes(fmt.Sprintf(`{"position":%d}`, i)), Connector: "c"})
	}
	docs["keys twice"] = enc(twice)
	for name, doc := range docs {
		want, err := snapshot.Decode(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, ahead := range []int{1, 64, snapshot.WindowAhead} {
			sink := &SeedSink{S: NewTailSeed()}
			got, ok := snapshot.DecodeStreamedAhead(bytes.NewReader(doc), ahead, sink)
			if !ok {
				t.Fatalf("%s (ahead %d): not decoded", name, ahead)
			}
			if got.SourceTable().Collect() != nil || !sink.Done {
				t.Fatalf("%s: SourceOffsets %v, seed done %v", name, got.SourceTable().Collect() != nil, sink.Done)
			}
			if d := sameSeed(want, sink.S.Last, oldSeed(want)); d != "" {
				t.Fatalf("%s (ahead %d): %s", name, ahead, d)
			}
			// A seed made from SourceOffsets (a document decoded whole, a
			// journal head's state) is the same.
			if d := sameSeed(want, SeedOf(want).Last, oldSeed(want)); d != "" {
				t.Fatalf("%s: seed of the source offsets: %s", name, d)
			}
			rest, wrest := *got, *want
			wrest.SetSourceOffsets(nil)
			if !reflect.DeepEqual(rest, wrest) {
				t.Fatalf("%s: the rest of the document differs", name)
			}
		}
	}
}

// TestWordIndex checks the index against a map under random sets and
// removes of few and of many keys (merges, removed keys set again,
// hashes of 0 and all ones), and update.
func TestWordIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, keys := range []int{10, 3000, 40000} {
		var x wordIndex
		want := map[uint64]uint64{}
		hash := func() uint64 {
			switch k := uint64(r.IntN(keys)); k {
			case 0:
				return 0
			case 1:
				return ^uint64(0)
			default:
				return k * 0x9e3779b97f4a7c15
			}
		}
		for i := range 20 * keys {
			h := hash()
			if r.IntN(3) == 0 {
				x.Remove(h)
				delete(want, h)
			} else {
				x.Set(h, uint64(i))
				want[h] = uint64(i)
			}
			if i%997 == 0 {
				h := hash()
				w, ok := x.Get(h)
				if ww, wok := want[h]; ok != wok || w != ww {
					t.Fatalf("%d keys, op %d: get %x = %d %v, want %d %v", keys, i, h, w, ok, ww, wok)
				}
			}
		}
		x.Update(func(w uint64) uint64 { return w + 1 })
		if x.Len() != len(want) {
			t.Fatalf("%d keys: len %d, want %d", keys, x.Len(), len(want))
		}
		for h, ww := range want {
			if w, ok := x.Get(h); !ok || w != ww+1 {
				t.Fatalf("%d keys: get %x = %d %v, want %d", keys, h, w, ok, ww+1)
			}
		}
		x.Merge()
		if len(x.More) != 0 || x.Gone != 0 || len(x.Hs) != len(want) || !slices.IsSorted(x.Hs) {
			t.Fatalf("%d keys: after merge %d added, %d gone, %d held, want %d", keys, len(x.More), x.Gone, len(x.Hs), len(want))
		}
	}
}

// TestTailSeedFootprint checks that a seed holds 16 bytes a key in its
// indexes and nothing in its arenas for values {"position":N}, whether
// the partitions come one after the other (as a document holds them) or
// interleaved, and the same keys.
func TestTailSeedFootprint(t *testing.T) {
	const keys = 100000
	for _, order := range []string{"partition by partition", "interleaved"} {
		s := &snapshot.Snapshot{}
		for i := range keys {
			p := int32(i / (keys / 5))
			if order == "interleaved" {
				p = int32(i % 5)
			}
			s.AppendSourceOffsets(snapshot.SourceOffset{Topic: "connect-offsets", Partition: p,
				Key: fmt.Appendf(nil, `["c",{"f":%d}]`, i), Value: fmt.Appendf(nil, `{"position":%d}`, i*7919)})
		}
		seed := SeedOf(s)
		n := 0
		for _, lv := range seed.Last["connect-offsets"] {
			if len(lv.Index.More) != 0 || cap(lv.Index.Hs) != lv.Len() || cap(lv.Index.Ws) != lv.Len() || lv.Arena.Size != 0 || lv.Index.Loading {
				t.Fatalf("%s: %d keys: %d in the map, arrays of %d and %d, arena of %d bytes", order, lv.Len(), len(lv.Index.More), cap(lv.Index.Hs), cap(lv.Index.Ws), lv.Arena.Size)
			}
			n += lv.Len()
		}
		if n != keys {
			t.Fatalf("%s: %d keys held, want %d", order, n, keys)
		}
		if d := sameSeed(s, seed.Last, oldSeed(s)); d != "" {
			t.Fatalf("%s: %s", order, d)
		}
	}
}

// TestLastValuesHostile checks that the tail's last values stay bounded
// for hostile shapes: a value of 1 MiB (its copy kept once, freed when it
// is overwritten by a value held inline), a million tiny keys in one
// partition (16 bytes a key once merged), and every key tombstoned (the
// arrays and the arena shrink with the keys).
func TestLastValuesHostile(t *testing.T) {
	lv := newLastValues(maphash.MakeSeed())
	big := bytes.Repeat([]byte("x"), 1<<20)
	lv.Set([]byte("big"), big)
	if got, ok := lv.Get([]byte("big")); !ok || !bytes.Equal(got, big) || cap(lv.Scratch) > 4<<10 {
		t.Fatalf("a value of 1 MiB: %d bytes back, scratch of %d", len(got), cap(lv.Scratch))
	}
	lv.Set([]byte("big"), []byte(`{"position":1}`))
	if lv.Arena.Size > keyview.CompactAbove || lv.Live != 0 {
		t.Fatalf("a value of 1 MiB overwritten: arena of %d bytes, %d live", lv.Arena.Size, lv.Live)
	}

	lv = newLastValues(maphash.MakeSeed())
	const tiny = 1000000
	for i := range tiny {
		lv.Set(strconv.AppendInt(nil, int64(i), 36), strconv.AppendInt(nil, int64(i), 10)) // not inline: in the arena
	}
	lv.Index.Merge()
	if lv.Len() != tiny || cap(lv.Index.Hs) != tiny || cap(lv.Index.Ws) != tiny || lv.Arena.Size > 2*lv.Live+keyview.CompactAbove {
		t.Fatalf("a million tiny keys: %d held, arrays of %d and %d, arena of %d bytes for %d live", lv.Len(), cap(lv.Index.Hs), cap(lv.Index.Ws), lv.Arena.Size, lv.Live)
	}
	for i := range tiny {
		lv.Remove(strconv.AppendInt(nil, int64(i), 36))
	}
	if lv.Len() != 0 || cap(lv.Index.Hs) > 2*mergeAbove || lv.Arena.Size > keyview.CompactAbove || lv.Live != 0 {
		t.Fatalf("every key tombstoned: %d held, arrays of %d, arena of %d bytes, %d live", lv.Len(), cap(lv.Index.Hs), lv.Arena.Size, lv.Live)
	}
}

// TestSeedSinkDecoded: a document the streamed decoder did not take was
// decoded whole; Decoded (which the store's GetWith calls) then puts its
// source offsets into the seed and drops them from the snapshot, as the
// store's GetForTail did before it became GetWith with a SeedSink. After a
// streamed decode it changes nothing.
func TestSeedSinkDecoded(t *testing.T) {
	want := fixtureSnapshot()
	for i := range 20 {
		want.AppendSourceOffsets(snapshot.SourceOffset{Topic: "connect-offsets", Partition: int32(i % 3), Offset: int64(100 + i),
			Key: snapshot.Bytes(fmt.Sprintf(`["c",{"f":%d}]`, i%7)), Value: snapshot.Bytes(fmt.Sprintf(`{"position":%d}`, i)), Connector: "c"})
	}
	whole := *want
	whole.SetSourceOffsets(append([]snapshot.SourceOffset(nil), want.SourceTable().Collect()...))
	sink := &SeedSink{S: NewTailSeed()}
	sink.Decoded(&whole)
	if whole.SourceTable().Collect() != nil || !sink.Done {
		t.Fatalf("after Decoded: SourceOffsets %v, done %v", whole.SourceTable().Collect() != nil, sink.Done)
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
