package build_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// FuzzCaptureKeys runs a capture's read path over arbitrary key bytes and
// partition sizes: the keys go into a partition view (its key index, with
// tombstones and overwrites, and the compaction of its arena), and the
// builder a capture uses turns the view into source offsets in key order
// (SortKeyEntries, whose radix sort once panicked on the byte 0xFF). No
// input may panic; the offsets must be exactly the live keys, each once,
// in byte order, with their last values.
//
// data holds length-prefixed chunks (a length byte, then the chunk);
// copies makes partitions of any size from them: copy i of a chunk has the
// two bytes of i inserted at a position i picks, so that the keys share
// long prefixes, as a connector's keys do, and every byte value shows up
// in every position of a word. The seed corpus is in
// testdata/fuzz/FuzzCaptureKeys; run it longer with
//
//	go test -run '^$' -fuzz=FuzzCaptureKeys -fuzztime=60s ./snapshot/internal/build/
func FuzzCaptureKeys(f *testing.F) {
	f.Add([]byte("\x19[\"c1\",{\"file\":\"/data/\xff\"}]"), uint16(300))
	f.Add([]byte("\x0e\x00\x01\xfe\xffbinary-key\x04\xff\xff\xff\xff"), uint16(70))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(fuzzCaptureKeys)
}

func fuzzCaptureKeys(t *testing.T, data []byte, copies uint16) {
	var chunks [][]byte
	for len(data) > 0 {
		n := min(int(data[0]), len(data)-1)
		chunks = append(chunks, data[1:1+n])
		data = data[1+n:]
	}
	if len(chunks) == 0 {
		chunks = [][]byte{nil}
	}
	// copies: the low 10 bits are the number of copies (at most 1023, so
	// a partition holds up to a few thousand keys), the top bits how often
	// a key is removed again.
	reps := max(int(copies&0x3ff), 1)
	every := int(copies>>10) + 2

	pv := keyview.NewPartView(0)
	want := map[string]string{}
	offset := int64(0)
	for i := range reps {
		for j, c := range chunks {
			at := 0
			if len(c) > 0 {
				at = i % (len(c) + 1)
			}
			key := slices.Concat(c[:at], []byte{byte(i), byte(i >> 8)}, c[at:])
			value := []byte(fmt.Sprintf(`{"i":%d,"j":%d}`, i, j))
			pv.Set(key, value, offset)
			want[string(key)] = string(value)
			offset++
			if (i+j)%every == 0 {
				// Removed again, or overwritten.
				if i%2 == 0 {
					pv.Remove(key)
					delete(want, string(key))
				} else {
					value = append(value, ' ')
					pv.Set(key, value, offset)
					want[string(key)] = string(value)
				}
				offset++
			}
		}
		if i%64 == 63 {
			pv.MaybeCompact()
		}
	}
	if pv.Len() != len(want) {
		t.Fatalf("view holds %d keys, want %d", pv.Len(), len(want))
	}
	for k, v := range want {
		i, ok := pv.Lookup([]byte(k))
		if !ok || string(pv.Record(i).Value) != v {
			t.Fatalf("lookup of key %q: found %v, want value %q", k, ok, v)
		}
	}

	b := &build.OffsetBuilder{
		InScope:    func(string) bool { return true },
		Connectors: map[string]*snapshot.Connector{},
		Names:      map[string]string{},
	}
	out, _ := b.Build(nil, "offsets", 0, 1, pv)
	if len(out) != len(want) {
		t.Fatalf("built %d offsets, want %d", len(out), len(want))
	}
	for i, o := range out {
		if v, ok := want[string(o.Key)]; !ok || v != string(o.Value) {
			t.Fatalf("offset %d: key %q value %q, want %q (live %v)", i, o.Key, o.Value, v, ok)
		}
		if i > 0 && bytes.Compare(out[i-1].Key, o.Key) >= 0 {
			t.Fatalf("key %q after %q: not in byte order", o.Key, out[i-1].Key)
		}
	}
}
