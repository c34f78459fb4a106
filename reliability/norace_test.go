//go:build !race

package reliability

// raceEnabled builds the binary under test with -race too.
const raceEnabled = false
