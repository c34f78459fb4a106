// Package english holds the one helper every command's text uses for
// counts, so that 1 is singular everywhere: "1 connector", "2 connectors".
package english

import (
	"strconv"
	"strings"
)

// Count returns "1 <one>" or "<n> <many>".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Wrap breaks s into lines of at most width columns at spaces, the lines
// after the first indented by indent; a word longer than a line is left
// whole.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(word) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}
