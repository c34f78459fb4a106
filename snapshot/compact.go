package snapshot

import (
	"errors"
	"unsafe"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// This file is the compact form of a snapshot's source offsets that a
// restore reads: a SourceTable. A decoded SourceOffset is 160 bytes with
// seven pointers, next to the bytes of its key and value (the structs
// weigh more than the bytes, and the decode held them twice while it made
// the slice); a restore needs the topic, partition, key,
// value and connector of each, which a TableRec holds in 28 bytes without
// a pointer, the bytes in one arena.

// SourceTable is the one form a Snapshot holds its source offsets in, by
// position in the document's order; every reader and builder of source
// offsets goes through it (Snapshot.SourceTable, Snapshot.SetSourceOffsets).
// Inside, it is one of three:
//   - full: every field of each SourceOffset (a capture, a decoded
//     document, a snapshot built by hand); NewSourceTable makes one;
//   - compact: for a snapshot read for a restore (store.RestoreSink), only
//     the topic, partition, key, value and connector of each, in 28 bytes
//     and one arena; such a snapshot does not encode (ErrCompact), and its
//     Offset is -1 and its decoded maps and ParseError are empty;
//   - streamed: a capture's OffsetStream (Snapshot.SetStream), held to be
//     encoded, not read: Len, Unparsed and ByConnector answer, reading an
//     offset by position panics.
//
// A table is never modified once a snapshot holds it; its bytes are shared
// with what reads them: do not modify them.
type SourceTable struct {
	// offs, when full is set, is the table; nil encodes as null.
	offs []SourceOffset
	full bool
	// stream, when set, is a streamed table.
	stream OffsetStream
	// recs are the records of a compact table, tableChunk to a chunk (a
	// slice grown by append allocated its size about five times over), n
	// of them.
	recs [][]TableRec
	n    int
	// arena holds the keys and values of recs.
	arena keyview.Arena
	// TopicNames and conn number the names recs refer to; conn.names[0] is "".
	TopicNames, conn numbered
	// unparsed counts the offsets without a connector.
	unparsed int
	scratch  []byte
}

// NewSourceTable makes a full table of offs, which it keeps (it does not
// copy them): the caller must not change them afterwards. A nil offs is a
// document's null.
func NewSourceTable(offs []SourceOffset) *SourceTable {
	return &SourceTable{offs: offs, full: true}
}

// TableRec is one source offset in a SourceTable: its key and value lie
// one after the other in chunk of the arena, at off.
type TableRec struct {
	chunk, off uint32
	klen, vlen uint32
	part       int32
	conn       uint32 // in conn.names
	topic      uint16 // in topic.names
	flags      uint8
}

// Flags of a TableRec: a null key or value (a document may hold either).
const (
	nilKey uint8 = 1 << iota
	nilValue
)

// MaxTableTopics is the most topics a SourceTable numbers; a document of
// more is decoded whole.
const MaxTableTopics = 1 << 16

// Len is the number of source offsets (those a streamed table encodes).
func (t *SourceTable) Len() int {
	switch {
	case t.full:
		return len(t.offs)
	case t.stream != nil:
		return t.stream.Len()
	}
	return t.n
}

// Topic is the topic of source offset i.
func (t *SourceTable) Topic(i int32) string {
	if t.full {
		return t.offs[i].Topic
	}
	return t.TopicNames.names[t.rec(i).topic]
}

// Partition is the partition of source offset i.
func (t *SourceTable) Partition(i int32) int32 {
	if t.full {
		return t.offs[i].Partition
	}
	return t.rec(i).part
}

// Key is the key of source offset i.
func (t *SourceTable) Key(i int32) []byte {
	if t.full {
		return t.offs[i].Key
	}
	r := t.rec(i)
	if r.flags&nilKey != 0 {
		return nil
	}
	return t.arena.Bytes(keyview.Span{Chunk: r.chunk, Off: r.off, N: r.klen})
}

// Value is the value of source offset i.
func (t *SourceTable) Value(i int32) []byte {
	if t.full {
		return t.offs[i].Value
	}
	r := t.rec(i)
	if r.flags&nilValue != 0 {
		return nil
	}
	return t.arena.Bytes(keyview.Span{Chunk: r.chunk, Off: r.off + r.klen, N: r.vlen})
}

// Connector is the connector of source offset i, "" for a key that is not
// [name, {map}].
func (t *SourceTable) Connector(i int32) string {
	if t.full {
		return t.offs[i].Connector
	}
	return t.conn.names[t.rec(i).conn]
}

// Footprint is the memory a compact table holds of its own: its records
// and arena (nothing for a full or streamed one).
func (t *SourceTable) Footprint() int64 {
	if t.full {
		return 0
	}
	var n int64
	for _, c := range t.recs {
		n += int64(cap(c)) * int64(unsafe.Sizeof(TableRec{}))
	}
	return n + t.arena.Held()
}

// SourceTable returns the snapshot's source offsets: the table s holds,
// never nil (an empty full table when s holds none).
func (s *Snapshot) SourceTable() *SourceTable {
	if s.src != nil {
		return s.src
	}
	return &SourceTable{full: true}
}

// CompactOffsets reports whether s holds its source offsets in a compact
// table (read by store.RestoreSink).
func (s *Snapshot) CompactOffsets() bool { return s.src != nil && s.src.Compact() }

// Compact reports whether t is a compact table (see SourceTable).
func (t *SourceTable) Compact() bool { return !t.full && t.stream == nil }

// ErrCompact is the error of encoding a snapshot that holds its source
// offsets in a compact table: it lacks what they do not keep.
var ErrCompact = errors.New("snapshot was read for a restore (its source offsets hold only keys and values) and cannot be encoded")

// numbered numbers names: the offsets of a document come in runs of one
// topic and of one connector, so a name is mostly the one before.
type numbered struct {
	names []string
	no    map[string]uint32
	last  uint32
}

// Of is the number of name, added when new.
func (n *numbered) Of(name string) uint32 {
	if len(n.names) > 0 && n.names[n.last] == name {
		return n.last
	}
	if n.no == nil {
		n.no = map[string]uint32{}
	}
	k, ok := n.no[name]
	if !ok {
		k = uint32(len(n.names))
		n.names = append(n.names, name)
		n.no[name] = k
	}
	n.last = k
	return k
}

// Add appends o, copying its key and value into the arena; false when the
// table cannot number its topic.
func (t *SourceTable) Add(o *SourceOffset) bool {
	if len(t.conn.names) == 0 {
		t.conn.Of("")
	}
	topic := t.TopicNames.Of(o.Topic)
	if topic >= MaxTableTopics {
		return false
	}
	r := TableRec{part: o.Partition, topic: uint16(topic), conn: t.conn.Of(o.Connector)}
	if o.Connector == "" {
		t.unparsed++
	}
	if o.Key == nil {
		r.flags |= nilKey
	}
	if o.Value == nil {
		r.flags |= nilValue
	}
	// The key and the value in one copy, so that one span holds both.
	t.scratch = append(append(t.scratch[:0], o.Key...), o.Value...)
	sp := t.arena.Put(t.scratch)
	r.chunk, r.off, r.klen, r.vlen = sp.Chunk, sp.Off, uint32(len(o.Key)), uint32(len(o.Value))
	t.push(r)
	return true
}

// TableSink decodes the source offsets of a document into a SourceTable.
type TableSink struct{ T *SourceTable }

// Add copies o into the table, and lets the decoder's arena go once it
// is large: nothing else keeps what it holds.
func (k *TableSink) Add(o *SourceOffset, d *OffsetDecoder) bool {
	if !k.T.Add(o) {
		return false
	}
	d.Recycle()
	return true
}

func (k *TableSink) Finish(s *Snapshot) {
	t := k.T
	t.TopicNames.no, t.conn.no, t.scratch = nil, nil, nil
	s.src = t
}

// filter returns the table of the source offsets of connectors keep: t
// itself when it keeps them all.
func (t *SourceTable) filter(keep map[string]bool) *SourceTable {
	kept := func(r *TableRec) bool { c := t.conn.names[r.conn]; return c != "" && keep[c] }
	n := 0
	for i := range int32(t.n) {
		if kept(t.rec(i)) {
			n++
		}
	}
	if n == t.n {
		return t
	}
	out := &SourceTable{arena: t.arena, TopicNames: numbered{names: t.TopicNames.names}, conn: numbered{names: t.conn.names}}
	for i := range int32(t.n) {
		if r := t.rec(i); kept(r) {
			out.push(*r)
		}
	}
	return out
}

// tableChunk is the number of records in a chunk of SourceTable.recs.
const tableChunk = 1 << 14

// rec returns record i.
func (t *SourceTable) rec(i int32) *TableRec { return &t.recs[i/tableChunk][i%tableChunk] }

// push appends r.
func (t *SourceTable) push(r TableRec) {
	if t.n%tableChunk == 0 {
		t.recs = append(t.recs, make([]TableRec, 0, tableChunk))
	}
	c := &t.recs[len(t.recs)-1]
	*c = append(*c, r)
	t.n++
}
