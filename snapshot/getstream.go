package snapshot

import (
	"bytes"
	"errors"
	"io"

	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// This file decodes a document while it is decompressed, so that Get never
// holds the whole decompressed document (several times the compressed
// object) next to the Snapshot made of it: the source offsets, nearly all of it, are
// decoded out of a window of the decompressed stream, and only the rest
// (head, sink groups, warnings) is kept whole and decoded as decodeFast
// decodes it. Anything unusual reports false, and the caller decodes the
// whole document the old way, which gives the same result or error.

// SoMarker precedes the source offsets array in a document Encode writes.
// It cannot occur inside a JSON string (a quote there is escaped, so it
// never follows a comma), so its first occurrence is a field name; the
// rest's decodeFastAt then checks it is the top-level one.
const SoMarker = `,"source_offsets":`

// streamWindow is a window over a stream: buf[i:] is what is read and not
// yet consumed.
type streamWindow struct {
	r   io.Reader
	buf []byte
	eof bool
	err error
}

// fill reads until the window holds at least n unconsumed bytes past i, or
// the stream ends, moving the unconsumed bytes to the front first. It
// returns the new index of what was at i.
func (w *streamWindow) fill(i, n int) int {
	if len(w.buf)-i >= n || w.eof {
		return i
	}
	w.buf = append(w.buf[:0], w.buf[i:]...)
	if cap(w.buf) < n {
		w.buf = append(make([]byte, 0, n), w.buf...)
	}
	for len(w.buf) < n && !w.eof {
		m, err := w.r.Read(w.buf[len(w.buf):cap(w.buf)])
		w.buf = w.buf[:len(w.buf)+m]
		if err != nil {
			w.eof = true
			if !errors.Is(err, io.EOF) {
				w.err = err
			}
		}
	}
	return 0
}

// WindowAhead is what the window keeps ahead of an entry before decoding
// it; a larger entry makes the window grow until it fits.
const WindowAhead = 256 << 10

// decodeStreamed decodes the document r yields as Decode would, reporting
// false when it must be decoded whole instead (a document Encode did not
// write, or a damaged one: Decode then says what is wrong).
func decodeStreamed(r io.Reader) (*Snapshot, bool) {
	return DecodeStreamedAhead(r, WindowAhead, new(offsetsCollector))
}

// OffsetSink is where DecodeStreamedAhead puts the source offsets it
// decodes: add takes each in document order (its bytes in d's arena), or
// reports false to leave the document to the whole decoder; finish sets
// them on the snapshot decoded.
type OffsetSink interface {
	Add(o *SourceOffset, d *OffsetDecoder) bool
	Finish(s *Snapshot)
}

// Recycle lets go of the arena that holds the bytes of the source offsets
// d decoded so far, once it is large: a sink that copies the key and value
// of each offset it takes (TableSink, capture.SeedSink) calls it after
// taking one, as nothing else keeps what the arena holds.
func (d *OffsetDecoder) Recycle() {
	if d.arena.Size > 1<<20 {
		d.arena = keyview.Arena{}
	}
}

// offsetsCollector collects the source offsets into a full table: the
// sink of DecodeStreamedAhead when none is given.
type offsetsCollector struct {
	chunks [][]SourceOffset
	out    []SourceOffset
}

func (c *offsetsCollector) Add(o *SourceOffset, _ *OffsetDecoder) bool {
	if c.out == nil {
		c.out = make([]SourceOffset, 0, 1024)
	}
	if len(c.out) == cap(c.out) {
		c.chunks = append(c.chunks, c.out)
		c.out = make([]SourceOffset, 0, min(2*cap(c.out), 64<<10))
	}
	c.out = append(c.out, *o)
	return true
}

func (c *offsetsCollector) Finish(s *Snapshot) {
	n := len(c.out)
	for _, ch := range c.chunks {
		n += len(ch)
	}
	all := make([]SourceOffset, 0, n)
	for _, ch := range c.chunks {
		all = append(all, ch...)
	}
	s.SetSourceOffsets(append(all, c.out...))
}

// DecodeStreamedAhead is decodeStreamed keeping ahead bytes in the window
// (tests make it small, to cut entries at every byte), giving the source
// offsets to sink (nil: into a full table).
func DecodeStreamedAhead(r io.Reader, ahead int, sink OffsetSink) (*Snapshot, bool) {
	if sink == nil {
		sink = new(offsetsCollector)
	}
	w := &streamWindow{r: r, buf: make([]byte, 0, 4*ahead)}
	// The head, up to and including the marker.
	var head []byte
	i := 0
	for {
		// The window holds more than the marker, so each round moves on.
		i = w.fill(i, max(ahead, 2*len(SoMarker)))
		if at := bytes.Index(w.buf[i:], []byte(SoMarker)); at >= 0 {
			head = append(head, w.buf[i:i+at+len(SoMarker)]...)
			i += at + len(SoMarker)
			break
		}
		if w.eof {
			return nil, false
		}
		// Keep the bytes that may start the marker.
		keep := max(len(w.buf)-len(SoMarker)+1, i)
		head = append(head, w.buf[i:keep]...)
		i = keep
	}
	i = w.fill(i, ahead)
	if i >= len(w.buf) || w.buf[i] != '[' {
		return nil, false
	}
	d := OffsetDecoder{b: w.buf, i: i + 1, interned: map[string]string{}}
	// One SourceOffset for every entry: sink.add takes its address, which
	// made one escape to the heap per entry (160 bytes a key).
	var o SourceOffset
	for n := 0; ; n++ {
		d.i = w.fill(d.i, ahead)
		d.b = w.buf
		if d.lit("]") {
			break
		}
		if n > 0 && !d.lit(",") {
			return nil, false
		}
		ok := false
		for at, more := d.i, ahead; ; more *= 2 {
			if o, ok = d.sourceOffset(); ok || w.eof || more > MaxDocumentSize {
				break
			}
			// Cut off by the window's end, or invalid: look again with
			// twice as much ahead (a failure at the end of the stream
			// is a failure).
			d.i = w.fill(at, 2*more)
			at, d.b = d.i, w.buf
		}
		if !ok {
			return nil, false
		}
		if !sink.Add(&o, &d) {
			return nil, false
		}
	}
	// The rest, whole: the sink groups and the tail, read into one buffer
	// (io.ReadAll and a copy allocated it about five times over).
	buf := bytes.NewBuffer(append(append(head, "[]"...), w.buf[d.i:]...))
	w.buf = nil
	if _, err := buf.ReadFrom(io.LimitReader(w.r, MaxDocumentSize-int64(buf.Len())+1)); err != nil || w.err != nil || int64(buf.Len()) > MaxDocumentSize {
		return nil, false
	}
	rest := buf.Bytes()
	s, at, ok := decodeFastAt(rest)
	if !ok || at != len(head) {
		return nil, false
	}
	sink.Finish(s)
	return s, true
}
