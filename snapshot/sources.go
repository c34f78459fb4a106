package snapshot

import (
	"bytes"
	"encoding/json"
	"iter"
)

// This file is what a SourceTable answers beyond the columns a restore
// reads (compact.go): the fields only a full table keeps, the offsets as
// SourceOffset values for the readers that want a struct, the counts, and
// the Snapshot methods over its table.

// Offset is the record offset of the write of source offset i that won;
// -1 in a compact table, which does not keep it.
func (t *SourceTable) Offset(i int32) int64 {
	if t.full {
		return t.offs[i].Offset
	}
	return -1
}

// ParseError is why the key of source offset i did not decode ("" when it
// did, and in a compact table).
func (t *SourceTable) ParseError(i int32) string {
	if t.full {
		return t.offs[i].ParseError
	}
	return ""
}

// SourcePartition is the decoded partition map of source offset i
// (informative only, as SourceOffset.SourcePartition); nil in a compact
// table.
func (t *SourceTable) SourcePartition(i int32) json.RawMessage {
	if t.full {
		return t.offs[i].SourcePartition
	}
	return nil
}

// SourceOffset is the decoded offset map of source offset i (informative
// only, as SourceOffset.SourceOffset); nil in a compact table.
func (t *SourceTable) SourceOffset(i int32) json.RawMessage {
	if t.full {
		return t.offs[i].SourceOffset
	}
	return nil
}

// At returns source offset i. In a full table it points into the table
// (do not modify it); in a compact one it is a new SourceOffset holding
// what the table keeps (Offset -1).
func (t *SourceTable) At(i int32) *SourceOffset {
	if t.full {
		return &t.offs[i]
	}
	o := t.view(i)
	return &o
}

// view is source offset i of a compact table as a SourceOffset.
func (t *SourceTable) view(i int32) SourceOffset {
	return SourceOffset{Topic: t.Topic(i), Partition: t.Partition(i), Offset: -1, Key: t.Key(i), Value: t.Value(i), Connector: t.Connector(i)}
}

// All yields every source offset with its position, in the document's
// order. In a full table each points into the table; in a compact one it
// is one SourceOffset reused from one to the next (copy it to keep it).
// Neither may be modified.
func (t *SourceTable) All() iter.Seq2[int32, *SourceOffset] {
	return func(yield func(int32, *SourceOffset) bool) {
		if t.full {
			for i := range t.offs {
				if !yield(int32(i), &t.offs[i]) {
					return
				}
			}
			return
		}
		t.mustHold()
		var o SourceOffset
		for i := range int32(t.n) {
			o = t.view(i)
			if !yield(i, &o) {
				return
			}
		}
	}
}

// Collect returns the source offsets as a new slice of SourceOffset values
// (their bytes shared with the table), for a builder that makes a changed
// copy of a snapshot's offsets: nil for a table of none that encodes as
// null.
func (t *SourceTable) Collect() []SourceOffset {
	if t.full {
		if t.offs == nil {
			return nil
		}
		return append(make([]SourceOffset, 0, len(t.offs)), t.offs...)
	}
	t.mustHold()
	out := make([]SourceOffset, 0, t.n)
	for i := range int32(t.n) {
		out = append(out, t.view(i))
	}
	return out
}

// mustHold panics for a streamed table: its offsets are encoded from the
// capture, not held to be read.
func (t *SourceTable) mustHold() {
	if t.stream != nil {
		panic("snapshot: the source offsets of a streamed snapshot are encoded, not read (CaptureStreamed)")
	}
}

// Unparsed counts the source offsets that have no connector: keys that
// are not [name, {map}].
func (t *SourceTable) Unparsed() int {
	switch {
	case t.stream != nil:
		return t.stream.Unparsed()
	case !t.full:
		return t.unparsed
	}
	n := 0
	for i := range t.offs {
		if t.offs[i].Connector == "" {
			n++
		}
	}
	return n
}

// ByConnector counts the source offsets of every connector (keys that are
// not [name, {map}] are not counted), in a new map.
func (t *SourceTable) ByConnector() map[string]int {
	if t.stream != nil {
		return t.stream.ByConnector()
	}
	out := make(map[string]int)
	for i := range int32(t.Len()) {
		if c := t.Connector(i); c != "" {
			out[c]++
		}
	}
	return out
}

// Null reports whether the table encodes as null: a full table of a nil
// slice (a document whose source_offsets is null).
func (t *SourceTable) Null() bool { return t.full && t.offs == nil }

// MarshalJSON implements json.Marshaler: the document Encode writes (which
// is what encoding/json wrote for a Snapshot when its source offsets were
// a field), so that a Snapshot inside another value encodes as a document.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON implements json.Unmarshaler: encoding/json's reading of the
// document, its source_offsets into a full table. Decode is the reader to
// call.
func (s *Snapshot) UnmarshalJSON(data []byte) error { return s.decodeJSON(data) }

// decodeJSON is UnmarshalJSON, which Decode calls directly: through
// json.Unmarshal, encoding/json would validate the document once before
// calling UnmarshalJSON and once more inside it.
func (s *Snapshot) decodeJSON(data []byte) error {
	type fields Snapshot
	// Named Snapshot so that encoding/json's errors name the fields as
	// they did.
	type Snapshot struct {
		fields
		SourceOffsets []SourceOffset `json:"source_offsets"`
	}
	doc := Snapshot{fields: fields(*s)}
	if s.src != nil && s.src.full {
		doc.SourceOffsets = s.src.offs
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	*s = *(*snapshotT)(&doc.fields)
	s.SetSourceOffsets(doc.SourceOffsets)
	return nil
}

// snapshotT is Snapshot, for UnmarshalJSON's conversion back.
type snapshotT = Snapshot
