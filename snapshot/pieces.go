package snapshot

import (
	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
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
	pieceKeys   = 8192
	pieceGroups = 512
)

// pieceSizes are how many source offsets and sink groups a piece holds;
// the zero value means pieceKeys and pieceGroups. Tests cut small
// documents into many pieces with smaller sizes.
type pieceSizes struct{ keys, groups int }

func (z pieceSizes) orDefault() pieceSizes {
	if z.keys <= 0 || z.groups <= 0 {
		return pieceSizes{pieceKeys, pieceGroups}
	}
	return z
}

// piece is one independently encoded part of a document: exactly one of
// raw, offs, lp (with from and to), pre or groups is set. pre is a
// partition compressed as soon as it was read (overlap.go): its frames
// are stored as they are, in frames of their own.
type piece struct {
	raw      []byte
	offs     []SourceOffset
	lp       *lazyPart
	pre      *lazyPart
	from, to int
	groups   []SinkGroup
	// comma says the piece continues an array: it starts with ','.
	comma bool
}

// pieces splits the document of s into pieces.
func (s *Snapshot) pieces(z pieceSizes) ([]piece, error) {
	z = z.orDefault()
	var ps []piece
	raw := func(b ...byte) {
		if n := len(ps); n > 0 && ps[n-1].raw != nil {
			ps[n-1].raw = append(ps[n-1].raw, b...)
			return
		}
		ps = append(ps, piece{raw: append([]byte(nil), b...)})
	}
	e := docEncoder{buf: make([]byte, 0, 4096)}
	if err := e.head(s); err != nil {
		return nil, err
	}
	raw(e.buf...)
	switch {
	case s.lazy != nil:
		if err := s.lazy.stale(); err != nil {
			return nil, err
		}
		raw('[')
		n := 0
		for i := range s.lazy.parts {
			lp := &s.lazy.parts[i]
			if lp.early {
				// Its frames start at its first key, without the comma.
				if n > 0 {
					raw(',')
				}
				ps = append(ps, piece{pre: lp})
				n += lp.kept
				continue
			}
			for from := 0; from < len(lp.entries); from += z.keys {
				to := min(from+z.keys, len(lp.entries))
				ps = append(ps, piece{lp: lp, from: from, to: to, comma: n > 0})
				n += to - from
			}
		}
		raw(']')
	case s.SourceOffsets == nil:
		raw([]byte("null")...)
	default:
		raw('[')
		for from := 0; from < len(s.SourceOffsets); from += z.keys {
			to := min(from+z.keys, len(s.SourceOffsets))
			ps = append(ps, piece{offs: s.SourceOffsets[from:to], comma: from > 0})
		}
		raw(']')
	}
	raw([]byte(`,"sink_groups":`)...)
	if s.SinkGroups == nil {
		raw([]byte("null")...)
	} else {
		raw('[')
		for from := 0; from < len(s.SinkGroups); from += z.groups {
			to := min(from+z.groups, len(s.SinkGroups))
			ps = append(ps, piece{groups: s.SinkGroups[from:to], comma: from > 0})
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

// weight is how much of a frame the piece fills, counted in source
// offsets: a sink group of about 50 partitions weighs as much as 16.
func (p *piece) weight(z pieceSizes) int {
	switch {
	case p.lp != nil:
		return p.to - p.from
	case p.pre != nil:
		return p.pre.kept
	case p.offs != nil:
		return len(p.offs)
	default:
		return len(p.groups) * z.keys / z.groups
	}
}

// pieceBuilder returns the offsetBuilder that encodes the streamed source
// offsets of s, one per goroutine: it interns names.
func (s *Snapshot) pieceBuilder() *offsetBuilder {
	if s.lazy == nil {
		return nil
	}
	return &offsetBuilder{scoped: s.lazy.scoped, inScope: s.lazy.inScope, names: make(map[string]string)}
}

// appendTo appends the piece's bytes to dst. b is a pieceBuilder, needed
// for the pieces of a streamed snapshot.
func (p *piece) appendTo(dst []byte, b *offsetBuilder) ([]byte, error) {
	var err error
	switch {
	case p.raw != nil:
		return append(dst, p.raw...), nil
	case p.pre != nil:
		if p.pre.err != nil {
			return dst, p.pre.err
		}
		return appendFrames(dst, p.pre.frames)
	case p.lp != nil:
		lp := p.lp
		for i, en := range lp.entries[p.from:p.to] {
			if i > 0 || p.comma {
				dst = append(dst, ',')
			}
			key, r := lp.pv.KeyAt(en.rec()), lp.pv.Record(en.rec())
			if en.plain() && len(r.Value) > 0 && connectjson.PlainObjectEnd(r.Value, 0) == len(r.Value) {
				dst = appendPlain(dst, lp, key, r)
				continue
			}
			so, _ := b.make(lp.topic, lp.part, keyview.ArenaString(key), r)
			if dst, err = so.appendJSON(dst); err != nil {
				return dst, err
			}
		}
	case p.offs != nil:
		for i := range p.offs {
			if i > 0 || p.comma {
				dst = append(dst, ',')
			}
			if dst, err = p.offs[i].appendJSON(dst); err != nil {
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
