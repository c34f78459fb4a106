package snapshot

import "errors"

// This file is the seam between a snapshot and a capture that streams its
// source offsets: a capture that is only stored (the snapshot command, the
// daemon) encodes them straight from what it read, never holding a
// SourceOffset (about 160 bytes) per key next to the bytes they point to.

// OffsetStream is the source offsets of a streamed snapshot (see
// Snapshot.SetStream), as the capture that read them encodes them.
type OffsetStream interface {
	// Len is the number of source offsets the stream encodes.
	Len() int
	// Unparsed counts those that have no connector: keys that are not
	// [name, {map}], or whose name is empty.
	Unparsed() int
	// ByConnector counts the others by connector, in a new map.
	ByConnector() map[string]int
	// Runs returns the source offsets in the document's order, in runs of
	// at most n each (a run the capture compressed early may hold more).
	// It fails with ErrStale once the capture's state moved on, and with
	// ErrSpent once a one-shot stream was spent.
	Runs(n int) ([]OffsetRun, error)
	// Spend tells the stream that it is being encoded for the last time,
	// by Store.Put: it reports whether it is a one-shot stream (see
	// Snapshot.EncodeOnce), whose runs are then released as they are
	// encoded and whose Runs fails from then on.
	Spend() bool
	// EncodeOnce makes the stream a one-shot one when what it reads is its
	// own (a capture that keeps nothing for the next one).
	EncodeOnce()
}

// OffsetRun is a run of a stream's source offsets, encoded on its own.
type OffsetRun interface {
	// Len is the number of source offsets it holds.
	Len() int
	// Frames returns the run already encoded and compressed, as zstd
	// frames of the document from its first source offset on (without a
	// leading comma), or nil when AppendTo encodes it. The error is what
	// compressing it early failed with.
	Frames() ([][]byte, error)
	// AppendTo appends the run's source offsets to dst, comma-separated and
	// starting with a comma when comma is set. names interns connector
	// names; one goroutine uses one map.
	AppendTo(dst []byte, comma bool, names map[string]string) ([]byte, error)
	// Release lets go of what the run holds once it was encoded from a
	// spent one-shot stream.
	Release()
}

// ErrSpent is what encoding a streamed snapshot gives after Store.Put
// encoded it once under EncodeOnce.
var ErrSpent = errors.New("streamed snapshot was stored once (EncodeOnce) and its source offsets are gone: capture again to encode it again")

// EncodeOnce marks a streamed snapshot (Capturer.CaptureStreamed) of a
// Capturer that is not incremental for a single Put: Put lets the keys and
// values of each partition go as soon as it has encoded them, so that the
// compressed body it holds grows while what was read shrinks, instead of
// on top of it. Once Put began, encoding the snapshot again fails; its
// counts (SourceKeys, Unparsed, SourceKeysByConnector) stay. It does
// nothing to any other snapshot: an incremental Capturer keeps its views
// for the next capture.
func (s *Snapshot) EncodeOnce() {
	if s.Streamed() {
		s.src.stream.EncodeOnce()
	}
}

// SourceKeys is the number of source offsets: SourceTable().Len(), for a
// streamed snapshot (CaptureStreamed) the number it will encode.
func (s *Snapshot) SourceKeys() int { return s.SourceTable().Len() }

// SourceKeysByConnector counts the source offsets of every connector
// (keys that are not [name, {map}] are not counted); it works on streamed
// snapshots too.
func (s *Snapshot) SourceKeysByConnector() map[string]int { return s.SourceTable().ByConnector() }

// Streamed reports whether s is a streamed snapshot, whose source offsets
// are not held in memory (see Capturer.CaptureStreamed).
func (s *Snapshot) Streamed() bool { return s.src != nil && s.src.stream != nil }

// SetStream makes s a streamed snapshot whose source offsets st encodes
// (Capturer.CaptureStreamed), in place of the table it held.
func (s *Snapshot) SetStream(st OffsetStream) { s.src = &SourceTable{stream: st} }

// SetSourceOffsets makes a full table of offs (NewSourceTable, which keeps
// them) the source offsets of s, in place of the table it held: how a
// capture, a decoder or a test builds a snapshot's source offsets. A nil
// offs encodes as null.
func (s *Snapshot) SetSourceOffsets(offs []SourceOffset) { s.src = NewSourceTable(offs) }

// SetSourceTable makes t the source offsets of s, in place of the table it
// held (nil: none, encoded as null).
func (s *Snapshot) SetSourceTable(t *SourceTable) { s.src = t }

// SpendStream tells the stream of a streamed snapshot that Store.Put
// encodes it for the last time (OffsetStream.Spend), and reports whether
// it is a one-shot stream, whose runs are let go of as they are encoded.
// It is false for any other snapshot.
func (s *Snapshot) SpendStream() bool { return s.Streamed() && s.src.stream.Spend() }

// WithSourceOffsets is SetSourceOffsets returning s, to build a snapshot
// in one expression: (&Snapshot{...}).WithSourceOffsets(offs).
func (s *Snapshot) WithSourceOffsets(offs []SourceOffset) *Snapshot {
	s.SetSourceOffsets(offs)
	return s
}

// AppendSourceOffsets appends offs to the source offsets of s, as append
// would to a slice of them: a builder's step, on a snapshot that alone
// holds its full table (a compact or streamed one is first made full, a
// copy).
func (s *Snapshot) AppendSourceOffsets(offs ...SourceOffset) {
	var held []SourceOffset
	if t := s.src; t != nil && t.full {
		held = t.offs
	} else if t != nil {
		held = t.Collect()
	}
	s.src = NewSourceTable(append(held, offs...))
}
