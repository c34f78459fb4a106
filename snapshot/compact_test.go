package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"
)

// tableOffsets is what a SourceTable holds of each source offset, in order.
func tableOffsets(t *SourceTable) []SourceOffset {
	out := make([]SourceOffset, t.Len())
	for i := range int32(t.Len()) {
		out[i] = SourceOffset{Topic: t.Topic(i), Partition: t.Partition(i), Key: t.Key(i), Value: t.Value(i), Connector: t.Connector(i)}
	}
	return out
}

// restoreView is what a restore reads of SourceOffsets.
func restoreView(offs []SourceOffset) []SourceOffset {
	out := make([]SourceOffset, len(offs))
	for i, o := range offs {
		out[i] = SourceOffset{Topic: o.Topic, Partition: o.Partition, Key: o.Key, Value: o.Value, Connector: o.Connector}
	}
	return out
}

// TestSourceTableDecode checks that a document decoded into a SourceTable
// holds exactly what Decode's SourceOffsets hold of each source offset
// (topic, partition, key and value bytes, nil or empty, and connector),
// and the same everything else, whatever the window: on the fixture,
// testdata/v1.json, a key of 1 MiB, no source offsets and random keys.
func TestSourceTableDecode(t *testing.T) {
	docs := streamedDocs(t)
	docs["null key and value"] = func() []byte {
		s := fixtureSnapshot()
		s.AppendSourceOffsets(SourceOffset{Topic: "connect-offsets", Partition: 7, Offset: 1, Key: nil, Value: nil},
			SourceOffset{Topic: "connect-offsets", Partition: 7, Offset: 2, Key: Bytes{}, Value: Bytes{}})
		var b bytes.Buffer
		if err := s.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}()
	for name, doc := range docs {
		want, err := Decode(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, ahead := range []int{1, 64, WindowAhead} {
			got, ok := DecodeStreamedAhead(bytes.NewReader(doc), ahead, &TableSink{T: new(SourceTable)})
			if !ok {
				t.Fatalf("%s (ahead %d): not decoded", name, ahead)
			}
			if !got.CompactOffsets() {
				t.Fatalf("%s: not compact", name)
			}
			if g, w := tableOffsets(got.SourceTable()), restoreView(want.SourceTable().Collect()); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s (ahead %d): the table holds\n%+v\nDecode has\n%+v", name, ahead, g, w)
			}
			if got.SourceKeys() != want.SourceKeys() || got.Unparsed() != want.Unparsed() || !reflect.DeepEqual(got.SourceKeysByConnector(), want.SourceKeysByConnector()) {
				t.Fatalf("%s: counts differ: %d/%d keys, %d/%d unparsed", name, got.SourceKeys(), want.SourceKeys(), got.Unparsed(), want.Unparsed())
			}
			rest, wrest := *got, *want
			rest.SetSourceTable(nil)
			wrest.SetSourceTable(nil)
			if !reflect.DeepEqual(rest, wrest) {
				t.Fatalf("%s: the rest of the document differs", name)
			}
			gi, wi := NewIndex(got), NewIndex(want)
			for c := range want.SourceKeysByConnector() {
				if !reflect.DeepEqual(gi.Positions(c), wi.Positions(c)) {
					t.Fatalf("%s: positions of %q differ", name, c)
				}
			}
			// A view of SourceOffsets is the same table.
			if g, w := tableOffsets(want.SourceTable()), restoreView(want.SourceTable().Collect()); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: the view of SourceOffsets differs", name)
			}
		}
	}
}

// TestSourceTableFilterAndEncode checks Filter on a compact snapshot (the
// table itself when every key is kept, the kept keys otherwise) and that
// such a snapshot refuses to be encoded rather than lose its offsets.
func TestSourceTableFilterAndEncode(t *testing.T) {
	doc := streamedDocs(t)["random"]
	want, err := Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := DecodeStreamedAhead(bytes.NewReader(doc), WindowAhead, &TableSink{T: new(SourceTable)})
	if !ok {
		t.Fatal("not decoded")
	}
	var names []string
	for c := range want.SourceKeysByConnector() {
		names = append(names, c)
	}
	for _, keep := range [][]string{names, {"c3", "c7"}, {"nobody"}} {
		g, w := got.Filter(keep), want.Filter(keep)
		if !reflect.DeepEqual(tableOffsets(g.SourceTable()), restoreView(w.SourceTable().Collect())) {
			t.Fatalf("Filter(%v) of the table differs", keep)
		}
		if len(keep) == len(names) && len(names) > 0 && g.SourceTable() != got.SourceTable() {
			// The random document has unparsed keys: the table is cut.
			if got.Unparsed() == 0 {
				t.Errorf("Filter of every connector copied the table")
			}
		}
	}
	if err := got.Encode(new(bytes.Buffer)); !errors.Is(err, ErrCompact) {
		t.Fatalf("Encode of a compact snapshot: %v, want errCompact", err)
	}
}

// TestSourceTableFootprint counts what a table decoded from a document of
// n random keys holds: its keys' and values' bytes, plus at most 40 bytes a
// key (a 28-byte record, the slack of growing the records and of the
// arena's last chunks) and 1 MiB, against the 160 bytes a SourceOffset
// costs before its bytes.
func TestSourceTableFootprint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := fixtureSnapshot()
	s.SetSourceOffsets(nil)
	var live int64
	for i := range 200_000 {
		k := fmt.Sprintf(`["conn-%d",{"file":"/var/log/app-%d.log"}]`, i%50, r.Uint64())
		v := fmt.Sprintf(`{"position":%d}`, r.Int64())
		live += int64(len(k) + len(v))
		s.AppendSourceOffsets(SourceOffset{Topic: "connect-offsets", Partition: int32(i % 25), Offset: int64(i), Key: Bytes(k), Value: Bytes(v), Connector: fmt.Sprintf("conn-%d", i%50)})
	}
	s.Normalize()
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		t.Fatal(err)
	}
	got, ok := DecodeStreamedAhead(bytes.NewReader(b.Bytes()), WindowAhead, &TableSink{T: new(SourceTable)})
	if !ok {
		t.Fatal("not decoded")
	}
	n := int64(s.SourceKeys())
	held, bound := got.SourceTable().Footprint(), live+40*n+1<<20
	t.Logf("%d keys, %d bytes of keys and values: the table holds %d bytes (%.1f a key beyond them); as SourceOffsets, %d bytes of structs", n, live, held, float64(held-live)/float64(n), n*int64(unsafe.Sizeof(SourceOffset{})))
	if held > bound {
		t.Fatalf("the table holds %d bytes, more than %d", held, bound)
	}
	if unsafe.Sizeof(TableRec{}) != 28 {
		t.Errorf("a tableRec is %d bytes, want 28", unsafe.Sizeof(TableRec{}))
	}
}

// TestSourceTableTooManyTopics: a document of more topics than a table
// numbers is left to the whole decoder (a SourceOffsets snapshot).
func TestSourceTableTooManyTopics(t *testing.T) {
	st := new(SourceTable)
	for i := range MaxTableTopics {
		st.TopicNames.Of(fmt.Sprint("t", i))
	}
	if st.Add(&SourceOffset{Topic: "one too many", Key: Bytes("k"), Value: Bytes("v")}) {
		t.Fatal("add numbered a topic past maxTableTopics")
	}
	if !st.Add(&SourceOffset{Topic: "t7", Key: Bytes("k"), Value: Bytes("v")}) || st.Topic(0) != "t7" {
		t.Fatal("add of a known topic failed")
	}
	sink := &TableSink{T: st}
	if sink.Add(&SourceOffset{Topic: "another"}, &OffsetDecoder{}) {
		t.Fatal("the sink took an offset its table cannot hold")
	}
}
