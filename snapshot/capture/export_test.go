package capture

import "github.com/offsetkeeper/offsetkeeper/snapshot"

// SetEarly makes c's CaptureStreamedOnce cut each partition into frames of
// keys source offsets and compress early every partition of minKeys kept
// keys or more, however little of the read is left and however few bytes
// it holds.
func SetEarly(c *Capturer, keys, minKeys int) {
	c.early = &earlyKnobs{z: snapshot.PieceSizes{Keys: keys, Groups: snapshot.PieceGroups}, minKeys: minKeys}
}
