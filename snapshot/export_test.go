package snapshot

// SetPieceSizes makes documents split into pieces of keys source offsets
// and groups sink groups until the returned func is called.
func SetPieceSizes(keys, groups int) (restore func()) {
	k, g := pieceKeys, pieceGroups
	pieceKeys, pieceGroups = keys, groups
	return func() { pieceKeys, pieceGroups = k, g }
}
