package journal

// This file is the journal's segment format: the entries a segment holds
// and their binary encoding. snapshot/store keeps segments in a bucket,
// state.go computes the state at a moment from a snapshot and the segments
// after it, and capture.Tail reads what the segments record from Kafka.
// See docs/journal.md.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Journal format versions this build reads; it writes JournalVersion.
const (
	JournalVersion    = 1
	MinJournalVersion = 1
)

// Entry kinds of a journal segment.
const (
	// EntrySource is one record of an offsets topic: its exact key and
	// value bytes (nil value: a tombstone), partition, offset and time.
	EntrySource = 1
	// EntrySink is one sink group partition's committed offset as
	// observed, or its deletion.
	EntrySink = 2
	// EntryGroup is a sink group's state and member count as observed, or
	// the group's deletion.
	EntryGroup = 3
	// EntryConfig is a config topic record and the connector it leaves.
	EntryConfig = 4
	// EntryGap marks a span the journal did not observe.
	EntryGap = 5
	// EntryEvent is a reset the daemon saw (see Event).
	EntryEvent = 6
	// EntryPosition is where a partition's tail stands after the segment.
	EntryPosition = 7
)

// Errors of the journal. Callers compare with errors.Is.
var (
	// ErrJournalBroken: a segment is missing, altered or out of order, so
	// the journal cannot be crossed at that point.
	ErrJournalBroken = errors.New("journal is broken")
	// ErrNotRestorable: no snapshot and journal cover the moment asked for.
	ErrNotRestorable = errors.New("moment is not restorable")
)

// Entry is one thing a segment records. Which fields are set depends on
// Kind; times are Unix milliseconds.
type Entry struct {
	Kind int
	// Topic and Partition: the offsets topic partition (EntrySource,
	// EntryPosition) or the sink group's topic partition (EntrySink).
	Topic     string
	Partition int32
	// Offset is the record's offset (EntrySource, EntryConfig), the
	// committed offset (EntrySink) or the next offset to read (EntryPosition).
	Offset int64
	// Time is the record timestamp (EntrySource, EntryConfig), the moment
	// observed (EntrySink, EntryGroup), the start of a gap or the moment of
	// an event.
	Time int64
	// Key and Value are the exact record bytes of EntrySource and
	// EntryConfig; a nil Value is a tombstone.
	Key, Value []byte
	// Group, LeaderEpoch, Metadata: EntrySink and EntryGroup.
	Group       string
	LeaderEpoch int32
	Metadata    string
	// LastConsumed is the sink offset's last consumed record, when the
	// group read found it (EntrySink; see SinkOffset.LastConsumed).
	LastConsumed *snapshot.LastConsumed
	// Deleted is set for a sink offset or group observed gone, and a
	// connector deleted (EntryConfig).
	Deleted bool
	// State and Members of a group (EntryGroup); Connector names the
	// group's or the config's connector, or an event's.
	State     string
	Members   int32
	Connector string
	// Conn is the connector the config record leaves (EntryConfig, not
	// Deleted), as a snapshot holds it.
	Conn *snapshot.Connector
	// Until is the end of a gap (EntryGap); Reason says why (EntryGap), or
	// is the event's kind (EntryEvent).
	Until  int64
	Reason string
	// Count is how many offsets an event touched; Before is the moment
	// just before it, the one a restore puts things back to.
	Count  int32
	Before int64
}

// appendEntry appends the binary form of e: a kind byte and its fields.
func appendEntry(b []byte, e *Entry) []byte {
	b = append(b, byte(e.Kind))
	switch e.Kind {
	case EntrySource:
		b = appendStr(b, e.Topic)
		b = binary.AppendVarint(b, int64(e.Partition))
		b = binary.AppendVarint(b, e.Offset)
		b = binary.AppendVarint(b, e.Time)
		b = appendBytes(b, e.Key)
		b = appendBytes(b, e.Value)
	case EntrySink:
		b = appendStr(b, e.Group)
		b = appendStr(b, e.Topic)
		b = binary.AppendVarint(b, int64(e.Partition))
		b = binary.AppendVarint(b, e.Offset)
		b = binary.AppendVarint(b, int64(e.LeaderEpoch))
		b = appendStr(b, e.Metadata)
		b = binary.AppendVarint(b, e.Time)
		b = appendBool(b, e.Deleted)
		b = appendBool(b, e.LastConsumed != nil)
		if lc := e.LastConsumed; lc != nil {
			b = binary.AppendVarint(b, lc.Offset)
			b = binary.AppendVarint(b, lc.Timestamp)
			b = appendBool(b, lc.LogAppendTime)
		}
	case EntryGroup:
		b = appendStr(b, e.Group)
		b = appendStr(b, e.Connector)
		b = appendStr(b, e.State)
		b = binary.AppendVarint(b, int64(e.Members))
		b = binary.AppendVarint(b, e.Time)
		b = appendBool(b, e.Deleted)
	case EntryConfig:
		b = binary.AppendVarint(b, e.Offset)
		b = binary.AppendVarint(b, e.Time)
		b = appendBytes(b, e.Key)
		b = appendBytes(b, e.Value)
		b = appendStr(b, e.Connector)
		b = appendBool(b, e.Deleted)
		c := e.Conn
		if c == nil {
			c = &snapshot.Connector{}
		}
		b = appendStr(b, c.Type)
		b = appendStr(b, c.Class)
		b = appendBool(b, c.HasConfig)
		b = appendStr(b, c.ConfigHash)
		b = appendStr(b, c.TargetState)
		b = binary.AppendVarint(b, int64(c.Tasks))
		b = appendStr(b, c.Group)
		b = appendStr(b, c.OffsetsTopic)
		b = appendStr(b, c.ExactlyOnce)
	case EntryGap:
		b = binary.AppendVarint(b, e.Time)
		b = binary.AppendVarint(b, e.Until)
		b = appendStr(b, e.Reason)
	case EntryEvent:
		b = binary.AppendVarint(b, e.Time)
		b = appendStr(b, e.Connector)
		b = appendStr(b, e.Reason)
		b = binary.AppendVarint(b, int64(e.Count))
		b = binary.AppendVarint(b, e.Before)
		b = appendStr(b, e.Group)
	case EntryPosition:
		b = appendStr(b, e.Topic)
		b = binary.AppendVarint(b, int64(e.Partition))
		b = binary.AppendVarint(b, e.Offset)
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendBytes writes nil as 0 and n bytes as n+1, so nil and empty differ.
func appendBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// entryReader decodes entries; the first error sticks.
type entryReader struct {
	b   []byte
	err error
	// topic is the last topic name read: the entries of a segment name a
	// few topics many times, and share their strings.
	topic string
}

func (r *entryReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: segment body: %s", snapshot.ErrCorrupt, what)
	}
}

func (r *entryReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *entryReader) int32() int32 {
	v := r.varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("int32 out of range")
	}
	return int32(v)
}

func (r *entryReader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k)+1 {
		r.fail("bad length")
		return nil
	}
	r.b = r.b[k:]
	if n == 0 {
		return nil
	}
	v := r.b[: n-1 : n-1]
	r.b = r.b[n-1:]
	return v
}

func (r *entryReader) str() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.fail("bad string length")
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

// topicStr is str for a topic name, the last one's string when equal.
func (r *entryReader) topicStr() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.fail("bad string length")
		return ""
	}
	b := r.b[k : k+int(n)]
	r.b = r.b[k+int(n):]
	if string(b) != r.topic {
		r.topic = string(b)
	}
	return r.topic
}

func (r *entryReader) bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 || r.b[0] > 1 {
		r.fail("bad bool")
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

// next decodes one entry; it returns false at the end or on error.
func (r *entryReader) next(e *Entry) bool {
	if r.err != nil || len(r.b) == 0 {
		return false
	}
	*e = Entry{Kind: int(r.b[0])}
	r.b = r.b[1:]
	switch e.Kind {
	case EntrySource:
		e.Topic, e.Partition, e.Offset, e.Time = r.topicStr(), r.int32(), r.varint(), r.varint()
		e.Key, e.Value = r.bytes(), r.bytes()
	case EntrySink:
		e.Group, e.Topic, e.Partition, e.Offset = r.str(), r.str(), r.int32(), r.varint()
		e.LeaderEpoch, e.Metadata, e.Time, e.Deleted = r.int32(), r.str(), r.varint(), r.bool()
		if r.bool() {
			e.LastConsumed = &snapshot.LastConsumed{Offset: r.varint(), Timestamp: r.varint(), LogAppendTime: r.bool()}
		}
	case EntryGroup:
		e.Group, e.Connector, e.State = r.str(), r.str(), r.str()
		e.Members, e.Time, e.Deleted = r.int32(), r.varint(), r.bool()
	case EntryConfig:
		e.Offset, e.Time, e.Key, e.Value = r.varint(), r.varint(), r.bytes(), r.bytes()
		e.Connector, e.Deleted = r.str(), r.bool()
		c := &snapshot.Connector{Name: e.Connector}
		e.Conn = c
		c.Type, c.Class, c.HasConfig, c.ConfigHash, c.TargetState = r.str(), r.str(), r.bool(), r.str(), r.str()
		c.Tasks = int(r.varint())
		c.Group, c.OffsetsTopic, c.ExactlyOnce = r.str(), r.str(), r.str()
	case EntryGap:
		e.Time, e.Until, e.Reason = r.varint(), r.varint(), r.str()
	case EntryEvent:
		e.Time, e.Connector, e.Reason = r.varint(), r.str(), r.str()
		e.Count, e.Before, e.Group = r.int32(), r.varint(), r.str()
	case EntryPosition:
		e.Topic, e.Partition, e.Offset = r.topicStr(), r.int32(), r.varint()
	default:
		r.fail(fmt.Sprintf("unknown entry kind %d", e.Kind))
	}
	return r.err == nil
}

// EncodeEntries is the body of a segment holding entries, uncompressed.
func EncodeEntries(entries []Entry) []byte {
	n := 0
	for i := range entries {
		e := &entries[i]
		n += 24 + len(e.Topic) + len(e.Key) + len(e.Value) + len(e.Group) + len(e.Connector) + len(e.Metadata) + len(e.Reason)
	}
	b := make([]byte, 0, n+n/8)
	for i := range entries {
		b = appendEntry(b, &entries[i])
	}
	return b
}

// DecodeEntries decodes a body EncodeEntries wrote, of about n entries.
// Key and Value alias body.
func DecodeEntries(body []byte, n int) ([]Entry, error) {
	out, _, err := DecodeEntriesSkipping(body, n, false)
	return out, err
}

// DecodeEntriesSkipping is DecodeEntries that, with skipEvents, checks
// and counts event entries without keeping them (a replay does not use
// them, and a merged segment may hold many); count is every entry read.
func DecodeEntriesSkipping(body []byte, n int, skipEvents bool) (out []Entry, count int, err error) {
	r := entryReader{b: body}
	out = make([]Entry, 0, n)
	var e Entry
	for {
		if skipEvents && r.err == nil && len(r.b) > 0 && r.b[0] == EntryEvent {
			r.b = r.b[1:]
			r.varint()
			r.skipStr()
			r.skipStr()
			r.int32()
			r.varint()
			r.skipStr()
			count++
			continue
		}
		if !r.next(&e) {
			break
		}
		out = append(out, e)
		count++
	}
	return out, count, r.err
}

// skipStr passes over a string.
func (r *entryReader) skipStr() {
	if r.err != nil {
		return
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.fail("bad string length")
		return
	}
	r.b = r.b[k+int(n):]
}

// Ms is t in Unix milliseconds.
func Ms(t time.Time) int64 { return t.UnixMilli() }

// FromMs is the time of Unix milliseconds v, in UTC.
func FromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }
