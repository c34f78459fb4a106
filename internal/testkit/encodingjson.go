package testkit

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// EncodingJSON is the snapshot document of s as encoding/json writes a
// struct of Snapshot's exported fields with its source offsets as the
// field they were, SourceOffsets []SourceOffset `json:"source_offsets"`
// before SinkGroups (HTML not escaped, a trailing newline): the reference
// Snapshot.Encode must match byte for byte, independent of the encoder
// (Snapshot.MarshalJSON is Encode). s holds a full table (a streamed one
// panics).
func EncodingJSON(s *snapshot.Snapshot) ([]byte, error) {
	var offs []snapshot.SourceOffset
	if !s.SourceTable().Null() {
		offs = s.SourceTable().Collect()
	}
	st := reflect.TypeOf(*s)
	var fields []reflect.StructField
	var from []int // the field of Snapshot each one is, -1 for SourceOffsets
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Name == "SinkGroups" {
			fields = append(fields, reflect.StructField{Name: "SourceOffsets", Type: reflect.TypeOf(offs), Tag: `json:"source_offsets"`})
			from = append(from, -1)
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		from = append(from, i)
	}
	doc := reflect.New(reflect.StructOf(fields)).Elem()
	sv := reflect.ValueOf(*s)
	for i, j := range from {
		if j < 0 {
			doc.Field(i).Set(reflect.ValueOf(offs))
			continue
		}
		doc.Field(i).Set(sv.Field(j))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc.Interface()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
