//go:build !race

package connect

// raceEnabled builds the binary under test with -race too.
const raceEnabled = false
