package connectjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Connect's offsets REST body, which GET /connectors/{name}/offsets
// answers and PATCH takes:
//
//	{"offsets":[{"partition":{...},"offset":{...}|null}, ...]}
//
// A sink connector's partition is {"kafka_topic":T,"kafka_partition":P}
// and its offset {"kafka_offset":O} (SinkPartition, SinkOffset).

// Field names of a sink connector's partition and offset.
const (
	SinkTopicKey     = "kafka_topic"
	SinkPartitionKey = "kafka_partition"
	SinkOffsetKey    = "kafka_offset"
)

// OffsetEntry is one partition of an offsets body with its offset.
type OffsetEntry struct {
	Partition Map
	// Offset is nil for JSON null: PATCH removes the partition's offset.
	Offset Map
}

// ErrNested: a partition or offset holds an object or an array, which
// Connect refuses (OffsetUtils.validateFormat).
var ErrNested = errors.New("Connect takes only strings, numbers, booleans and null") //nolint:staticcheck // Connect is a name

// ErrNoPartition: an entry of an offsets body has a null or no partition.
var ErrNoPartition = errors.New("null or missing")

// Nested reports whether a value of m is an object or an array: Connect
// neither lists nor accepts such a partition or offset.
func Nested(m Map) bool { return CheckFlat(m) != nil }

// CheckFlat returns an error wrapping ErrNested, naming the field, when a
// value of m is an object or an array.
func CheckFlat(m Map) error {
	for _, f := range m {
		if k := f.Value.Kind(); k == KindObject || k == KindArray {
			return fmt.Errorf("field %q is a %s: %w", f.Key, k, ErrNested)
		}
	}
	return nil
}

// SinkPartition is a sink connector's partition of topic's partition p.
func SinkPartition(topic string, p int32) Map {
	return Map{
		{Key: SinkTopicKey, Value: StringValue(topic)},
		{Key: SinkPartitionKey, Value: LongValue(int64(p))},
	}
}

// SinkOffset is a sink connector's offset.
func SinkOffset(offset int64) Map {
	return Map{{Key: SinkOffsetKey, Value: LongValue(offset)}}
}

// EncodeOffsets renders entries as Connect's offsets body: each map as
// RESTMap renders it, sorted by the partition's bytes.
func EncodeOffsets(entries []OffsetEntry) []byte {
	type item struct{ p, o []byte }
	items := make([]item, len(entries))
	for i, e := range entries {
		items[i].p = RESTMap(e.Partition)
		if e.Offset != nil {
			items[i].o = RESTMap(e.Offset)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return bytes.Compare(items[i].p, items[j].p) < 0 })
	var b bytes.Buffer
	b.WriteString(`{"offsets":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"partition":`)
		b.Write(it.p)
		b.WriteString(`,"offset":`)
		if it.o == nil {
			b.WriteString("null")
		} else {
			b.Write(it.o)
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// DecodeOffsets reads an offsets body. A partition that is null or
// missing is an error; an offset that is null or missing is nil. It does
// not check that the maps are flat (see CheckFlat). Errors are an
// *OffsetsError.
func DecodeOffsets(body []byte, opts DecodeOptions) ([]OffsetEntry, error) {
	var v struct {
		Offsets []struct {
			Partition json.RawMessage `json:"partition"`
			Offset    json.RawMessage `json:"offset"`
		} `json:"offsets"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if opts.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&v); err != nil {
		return nil, &OffsetsError{Index: -1, Err: err}
	}
	out := make([]OffsetEntry, 0, len(v.Offsets))
	for i, e := range v.Offsets {
		if len(e.Partition) == 0 || string(e.Partition) == "null" {
			return nil, &OffsetsError{Index: i, Field: "partition", Err: ErrNoPartition}
		}
		p, err := ParseMap(e.Partition)
		if err != nil {
			return nil, &OffsetsError{Index: i, Field: "partition", Err: err}
		}
		entry := OffsetEntry{Partition: p}
		if len(e.Offset) > 0 && string(e.Offset) != "null" {
			if entry.Offset, err = ParseMap(e.Offset); err != nil {
				return nil, &OffsetsError{Index: i, Field: "offset", Err: err}
			}
		}
		out = append(out, entry)
	}
	return out, nil
}

// DecodeOptions are the options of DecodeOffsets.
type DecodeOptions struct {
	// DisallowUnknownFields makes a field other than offsets, partition
	// and offset an error, as Connect's PATCH has it.
	DisallowUnknownFields bool
}

// OffsetsError is DecodeOffsets' error: the body does not decode (Index
// -1), or entry Index's Field does not.
type OffsetsError struct {
	Index int
	Field string
	Err   error
}

func (e *OffsetsError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("decode offsets body: %v", e.Err)
	}
	return fmt.Sprintf("offsets[%d].%s: %v", e.Index, e.Field, e.Err)
}

func (e *OffsetsError) Unwrap() error { return e.Err }
