package snapshot

import (
	"bytes"
	"reflect"
	"testing"
)

// fakeStream is an OffsetStream of counts only.
type fakeStream struct{ n, unparsed int }

func (f fakeStream) Len() int                      { return f.n }
func (f fakeStream) Unparsed() int                 { return f.unparsed }
func (f fakeStream) ByConnector() map[string]int   { return map[string]int{"c": f.n - f.unparsed} }
func (f fakeStream) Runs(int) ([]OffsetRun, error) { return nil, nil }
func (f fakeStream) Spend() bool                   { return false }
func (f fakeStream) EncodeOnce()                   {}

// TestSourceTableForms: the three forms of a SourceTable answer alike for
// what each holds. A full one gives every field; a compact one (a restore's
// read) the same topic, partition, key, value and connector by position,
// through At, All and Collect too, with Offset -1 and no ParseError; a
// streamed one its counts, and panics when read by position rather than
// give no offsets in silence.
func TestSourceTableForms(t *testing.T) {
	full := fixtureSnapshot()
	var b bytes.Buffer
	if err := full.Encode(&b); err != nil {
		t.Fatal(err)
	}
	compact, ok := DecodeStreamedAhead(bytes.NewReader(b.Bytes()), WindowAhead, &TableSink{T: new(SourceTable)})
	if !ok || !compact.CompactOffsets() || full.CompactOffsets() {
		t.Fatalf("decoded %v, compact %v / %v", ok, compact.CompactOffsets(), full.CompactOffsets())
	}
	ft, ct := full.SourceTable(), compact.SourceTable()
	if ft.Len() == 0 || ft.Len() != ct.Len() || ft.Unparsed() != ct.Unparsed() || !reflect.DeepEqual(ft.ByConnector(), ct.ByConnector()) {
		t.Fatalf("full %d keys (%d unparsed), compact %d (%d)", ft.Len(), ft.Unparsed(), ct.Len(), ct.Unparsed())
	}
	offs := ft.Collect()
	if !reflect.DeepEqual(restoreView(ct.Collect()), restoreView(offs)) {
		t.Error("the compact table's Collect differs from the full one's in what it keeps")
	}
	for i, o := range ft.All() {
		if !reflect.DeepEqual(*o, offs[i]) || ft.At(i) != o || ft.Offset(i) != o.Offset || ft.ParseError(i) != o.ParseError ||
			!bytes.Equal(ft.SourcePartition(i), o.SourcePartition) || !bytes.Equal(ft.SourceOffset(i), o.SourceOffset) {
			t.Fatalf("full table: source offset %d: All %+v, Collect %+v", i, *o, offs[i])
		}
	}
	n := 0
	for i, o := range ct.All() {
		n++
		want := restoreView(offs[i : i+1])[0]
		want.Offset = -1
		if !reflect.DeepEqual(*o, want) || !reflect.DeepEqual(*ct.At(i), want) || ct.Offset(i) != -1 || ct.ParseError(i) != "" || ct.SourcePartition(i) != nil {
			t.Fatalf("compact table: source offset %d: %+v, want %+v", i, *o, want)
		}
	}
	if n != ct.Len() {
		t.Errorf("All yielded %d of %d", n, ct.Len())
	}

	// Builders: NewSourceTable keeps what it is given; AppendSourceOffsets
	// appends; null and empty stay apart.
	s := &Snapshot{}
	if !s.SourceTable().Null() || s.SourceKeys() != 0 {
		t.Error("a Snapshot without source offsets is not null")
	}
	s.AppendSourceOffsets(offs[0])
	s.AppendSourceOffsets(offs[1:]...)
	if !reflect.DeepEqual(s.SourceTable().Collect(), offs) || s.SourceTable().Null() {
		t.Error("AppendSourceOffsets did not build the offsets")
	}
	if s.SetSourceOffsets([]SourceOffset{}); s.SourceTable().Null() || s.SourceKeys() != 0 {
		t.Error("an empty table is null")
	}

	st := &Snapshot{}
	st.SetStream(fakeStream{n: 7, unparsed: 2})
	if !st.Streamed() || st.CompactOffsets() || st.SourceKeys() != 7 || st.Unparsed() != 2 || st.SourceKeysByConnector()["c"] != 5 {
		t.Fatalf("streamed: keys %d, unparsed %d, by connector %v", st.SourceKeys(), st.Unparsed(), st.SourceKeysByConnector())
	}
	if got := st.Filter([]string{"c"}); got.Streamed() || got.SourceKeys() != 0 || got.SourceTable().Null() {
		t.Errorf("a filtered streamed snapshot holds %d keys (streamed %v)", got.SourceKeys(), got.Streamed())
	}
	for name, read := range map[string]func(){
		"All":     func() { st.SourceTable().All()(func(int32, *SourceOffset) bool { return true }) },
		"Collect": func() { st.SourceTable().Collect() },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a streamed table did not panic", name)
				}
			}()
			read()
		}()
	}
}
