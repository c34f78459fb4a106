package connectjson

import (
	"errors"
	"testing"
)

// TestOffsetsBody: EncodeOffsets sorts by the partition's REST bytes and
// writes null offsets; DecodeOffsets reads it back; the errors say which
// entry; CheckFlat refuses nested values.
func TestOffsetsBody(t *testing.T) {
	src, err := ParseMap([]byte(`{"table":"b","protocol":"1"}`))
	if err != nil {
		t.Fatal(err)
	}
	entries := []OffsetEntry{
		{Partition: src},
		{Partition: SinkPartition("orders", 3), Offset: SinkOffset(42)},
	}
	body := EncodeOffsets(entries)
	want := `{"offsets":[{"partition":{"kafka_partition":3,"kafka_topic":"orders"},"offset":{"kafka_offset":42}},{"partition":{"protocol":"1","table":"b"},"offset":null}]}`
	if string(body) != want {
		t.Fatalf("EncodeOffsets:\n got %s\nwant %s", body, want)
	}
	back, err := DecodeOffsets(body, DecodeOptions{DisallowUnknownFields: true})
	if err != nil || len(back) != 2 || back[1].Offset != nil || !Equal(back[1].Partition, src) || !Equal(back[0].Offset, SinkOffset(42)) {
		t.Fatalf("DecodeOffsets: %+v, %v", back, err)
	}

	for _, tc := range []struct {
		body string
		opts DecodeOptions
		want string
		is   error
	}{
		{`{"offsets":[{"partition":null,"offset":null}]}`, DecodeOptions{}, "offsets[0].partition: null or missing", ErrNoPartition},
		{`{"offsets":[{"offset":{}},{}]}`, DecodeOptions{}, "offsets[0].partition: null or missing", ErrNoPartition},
		{`{"offsets":[{"partition":{"a":1},"offset":[1]}]}`, DecodeOptions{}, "offsets[0].offset: ", nil},
		{`{"offsets":[],"extra":1}`, DecodeOptions{DisallowUnknownFields: true}, "decode offsets body: ", nil},
		{`[`, DecodeOptions{}, "decode offsets body: ", nil},
	} {
		_, err := DecodeOffsets([]byte(tc.body), tc.opts)
		var oe *OffsetsError
		if !errors.As(err, &oe) || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("DecodeOffsets(%s): %v, want %q...", tc.body, err, tc.want)
		}
	}
	if _, err := DecodeOffsets([]byte(`{"offsets":[],"extra":1}`), DecodeOptions{}); err != nil {
		t.Errorf("unknown field without DisallowUnknownFields: %v", err)
	}

	nested, err := ParseMap([]byte(`{"a":1,"b":{"c":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckFlat(nested); !errors.Is(err, ErrNested) || err.Error() != `field "b" is a object: Connect takes only strings, numbers, booleans and null` || !Nested(nested) || Nested(src) || CheckFlat(src) != nil {
		t.Errorf("CheckFlat: %v", err)
	}
}
