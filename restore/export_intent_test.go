package restore

// SetTestPoint sets the function a restore calls at its named points (see
// testPoint), for the tests that kill a restore there.
func SetTestPoint(f func(point string)) { testPoint = f }
