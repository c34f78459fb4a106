package snapshot

// SetEarly makes c's CaptureStreamedOnce cut each partition into frames of
// keys source offsets and compress early every partition of minKeys kept
// keys or more, however little of the read is left and however few bytes
// it holds.
func SetEarly(c *Capturer, keys, minKeys int) {
	c.early = &earlyKnobs{z: pieceSizes{keys, pieceGroups}, minKeys: minKeys}
}
