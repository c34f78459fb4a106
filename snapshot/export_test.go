package snapshot

import (
	"context"
	"io"
	"time"
)

// SetPieceSizes makes the documents st.Put writes split into pieces of
// keys source offsets and groups sink groups.
func SetPieceSizes(st *Store, keys, groups int) { st.pieceSizes = pieceSizes{keys, groups} }

// EncodeInPieces is s.Encode with pieces of keys source offsets and
// groups sink groups.
func EncodeInPieces(s *Snapshot, w io.Writer, keys, groups int) error {
	return s.encode(w, pieceSizes{keys, groups})
}

// CompactLevelsAt writes the merged levels of epoch e as if level 1's last
// boundary were minute and level 2's hour (tests cannot wait for the
// wall clock's).
func (s *Store) CompactLevelsAt(ctx context.Context, e EpochInfo, minute, hour time.Time) ([]SegmentInfo, error) {
	return s.compactAt(ctx, e, func(level int) time.Time {
		if level == LevelHour {
			return hour
		}
		return minute
	})
}

// SetEarly makes c's CaptureStreamedOnce cut each partition into frames of
// keys source offsets and compress early every partition of minKeys kept
// keys or more, however little of the read is left and however few bytes
// it holds.
func SetEarly(c *Capturer, keys, minKeys int) {
	c.early = &earlyKnobs{z: pieceSizes{keys, pieceGroups}, minKeys: minKeys}
}
