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

// SourceTable holds the source offsets of a snapshot by position: the
// SourceOffsets of a Snapshot, or for one read by store.RestoreSink the
// compact records it was decoded into. Positions are those of
// SourceOffsets (the document's order). A table is never modified; its
// bytes are shared with what reads them: do not modify them.
type SourceTable struct {
	// offs, when set, is the table: a Snapshot's SourceOffsets.
	offs []SourceOffset
	// recs are the records, tableChunk to a chunk (a slice grown by append
	// allocated its size about five times over), n of them.
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

// Len is the number of source offsets.
func (t *SourceTable) Len() int {
	if t.offs != nil {
		return len(t.offs)
	}
	return t.n
}

// Topic is the topic of source offset i.
func (t *SourceTable) Topic(i int32) string {
	if t.offs != nil {
		return t.offs[i].Topic
	}
	return t.TopicNames.names[t.rec(i).topic]
}

// Partition is the partition of source offset i.
func (t *SourceTable) Partition(i int32) int32 {
	if t.offs != nil {
		return t.offs[i].Partition
	}
	return t.rec(i).part
}

// Key is the key of source offset i.
func (t *SourceTable) Key(i int32) []byte {
	if t.offs != nil {
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
	if t.offs != nil {
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
	if t.offs != nil {
		return t.offs[i].Connector
	}
	return t.conn.names[t.rec(i).conn]
}

// Footprint is the memory the table holds of its own: its records and
// arena (nothing for a table over a Snapshot's SourceOffsets).
func (t *SourceTable) Footprint() int64 {
	if t.offs != nil {
		return 0
	}
	var n int64
	for _, c := range t.recs {
		n += int64(cap(c)) * int64(unsafe.Sizeof(TableRec{}))
	}
	return n + t.arena.Held()
}

// SourceTable returns the snapshot's source offsets as a table, the one
// form every reader by position sees whatever s holds: the compact table a
// store.RestoreSink decoded, or one over SourceOffsets. A streamed
// snapshot (Streamed) holds none to read, only to encode: its table is
// empty.
func (s *Snapshot) SourceTable() *SourceTable {
	if s.table != nil {
		return s.table
	}
	return &SourceTable{offs: s.SourceOffsets}
}

// CompactOffsets reports whether s holds its source offsets in a compact
// SourceTable instead of SourceOffsets.
func (s *Snapshot) CompactOffsets() bool { return s.table != nil && s.table.offs == nil }

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
	s.SourceOffsets, s.table = nil, t
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
