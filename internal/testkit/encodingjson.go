package testkit

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// EncodingJSON is the document of snap, a snapshot.Snapshot value, as
// encoding/json writes a struct of its exported fields with offs (its
// source offsets, a []snapshot.SourceOffset, nil for null) as the field
// they were, SourceOffsets `json:"source_offsets"` before SinkGroups (HTML
// not escaped, a trailing newline): the reference Snapshot.Encode must
// match byte for byte, independent of the encoder (Snapshot.MarshalJSON
// is Encode). It takes them untyped because nothing under internal/
// imports package snapshot (internal/layering).
func EncodingJSON(snap, offs any) ([]byte, error) {
	sv := reflect.ValueOf(snap)
	st := sv.Type()
	var fields []reflect.StructField
	var from []int // the field of snap each one is, -1 for the offsets
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
