package snapshot

import (
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// A document is encoded as a list of pieces that encode independently of
// each other: the head (everything before the source offsets), ranges of
// source offsets, the bytes between the arrays, ranges of sink groups and
// the tail. Encode writes them one after the other; Put encodes and
// compresses them on every CPU at once, each into a zstd frame of its own,
// and writes the frames in order (see encodeObject). Both produce the same
// bytes, since each piece knows on its own whether it continues an array
// (starts with a comma).

// Range sizes: about 3 MB of document per source offsets piece (a frame of
// 250 KB or so), and as much for groups of 50 partitions.
const (
	PieceKeys   = 8192
	PieceGroups = 512
)

// PieceSizes are how many source offsets and sink groups a piece holds;
// the zero value means PieceKeys and PieceGroups. Tests cut small
// documents into many pieces with smaller sizes.
type PieceSizes struct{ Keys, Groups int }

func (z PieceSizes) OrDefault() PieceSizes {
	if z.Keys <= 0 || z.Groups <= 0 {
		return PieceSizes{PieceKeys, PieceGroups}
	}
	return z
}

// Piece is one independently encoded part of a document: exactly one of
// raw, offs, run, pre or groups is set. pre is a run of a stream that was
// compressed as soon as it was read: its frames (or the error compressing
// them gave, PreErr) are stored as they are, in frames of their own.
type Piece struct {
	raw    []byte
	offs   []SourceOffset
	Run    OffsetRun
	Pre    OffsetRun
	Frames [][]byte
	PreErr error
	groups []SinkGroup
	// comma says the piece continues an array: it starts with ','.
	comma bool
}

// Pieces splits the document of s into pieces.
func (s *Snapshot) Pieces(z PieceSizes) ([]Piece, error) {
	z = z.OrDefault()
	var ps []Piece
	raw := func(b ...byte) {
		if n := len(ps); n > 0 && ps[n-1].raw != nil {
			ps[n-1].raw = append(ps[n-1].raw, b...)
			return
		}
		ps = append(ps, Piece{raw: append([]byte(nil), b...)})
	}
	e := docEncoder{buf: make([]byte, 0, 4096)}
	if err := e.head(s); err != nil {
		return nil, err
	}
	raw(e.buf...)
	t := s.SourceTable()
	switch {
	case t.stream != nil:
		runs, err := t.stream.Runs(z.Keys)
		if err != nil {
			return nil, err
		}
		raw('[')
		n := 0
		for _, r := range runs {
			if fs, err := r.Frames(); fs != nil || err != nil {
				// Its frames start at its first key, without the comma.
				if n > 0 {
					raw(',')
				}
				ps = append(ps, Piece{Pre: r, Frames: fs, PreErr: err})
				n += r.Len()
				continue
			}
			ps = append(ps, Piece{Run: r, comma: n > 0})
			n += r.Len()
		}
		raw(']')
	case t.Null():
		raw([]byte("null")...)
	default:
		raw('[')
		for from := 0; from < len(t.offs); from += z.Keys {
			to := min(from+z.Keys, len(t.offs))
			ps = append(ps, Piece{offs: t.offs[from:to], comma: from > 0})
		}
		raw(']')
	}
	raw([]byte(`,"sink_groups":`)...)
	if s.SinkGroups == nil {
		raw([]byte("null")...)
	} else {
		raw('[')
		for from := 0; from < len(s.SinkGroups); from += z.Groups {
			to := min(from+z.Groups, len(s.SinkGroups))
			ps = append(ps, Piece{groups: s.SinkGroups[from:to], comma: from > 0})
		}
		raw(']')
	}
	e.buf = e.buf[:0]
	if err := e.tail(s); err != nil {
		return nil, err
	}
	raw(e.buf...)
	return ps, nil
}

// Weight is how much of a frame the piece fills, counted in source
// offsets: a sink group of about 50 partitions weighs as much as 16.
func (p *Piece) Weight(z PieceSizes) int {
	switch {
	case p.Run != nil:
		return p.Run.Len()
	case p.Pre != nil:
		return p.Pre.Len()
	case p.offs != nil:
		return len(p.offs)
	default:
		return len(p.groups) * z.Keys / z.Groups
	}
}

// AppendTo appends the piece's bytes to dst. names interns the connector
// names of a stream's runs, one map per goroutine.
func (p *Piece) AppendTo(dst []byte, names map[string]string) ([]byte, error) {
	var err error
	switch {
	case p.raw != nil:
		return append(dst, p.raw...), nil
	case p.Pre != nil:
		if p.PreErr != nil {
			return dst, p.PreErr
		}
		return appendFrames(dst, p.Frames)
	case p.Run != nil:
		return p.Run.AppendTo(dst, p.comma, names)
	case p.offs != nil:
		for i := range p.offs {
			if i > 0 || p.comma {
				dst = append(dst, ',')
			}
			if dst, err = p.offs[i].AppendJSON(dst); err != nil {
				return dst, err
			}
		}
	default:
		for i := range p.groups {
			if i > 0 || p.comma {
				dst = append(dst, ',')
			}
			dst = p.groups[i].appendJSON(dst)
		}
	}
	return dst, nil
}

// appendFrames appends the document the frames hold.
func appendFrames(dst []byte, frames [][]byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxDocumentSize))
	if err != nil {
		return dst, fmt.Errorf("create zstd decoder: %w", err)
	}
	defer dec.Close()
	for _, f := range frames {
		if dst, err = dec.DecodeAll(f, dst); err != nil {
			return dst, fmt.Errorf("decompress frame: %w", err)
		}
	}
	return dst, nil
}
