package snapshot

import "io"

// SetPieceSizes makes the documents st.Put writes split into pieces of
// keys source offsets and groups sink groups.
func SetPieceSizes(st *Store, keys, groups int) { st.pieceSizes = pieceSizes{keys, groups} }

// EncodeInPieces is s.Encode with pieces of keys source offsets and
// groups sink groups.
func EncodeInPieces(s *Snapshot, w io.Writer, keys, groups int) error {
	return s.encode(w, pieceSizes{keys, groups})
}
