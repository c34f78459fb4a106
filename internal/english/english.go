// Package english holds the one helper every command's text uses for
// counts, so that 1 is singular everywhere: "1 connector", "2 connectors".
package english

import (
	"strconv"
	"strings"
	"unicode/utf8"
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

// Fit breaks every line of s wider than width columns (runes) with
// FitLine, each continuation indented by its line's own indentation plus
// four spaces; lines that fit are left as they are, so Fit of text that
// fits is the text itself. A restore prints a line per key through it, so
// each line is read once and text that fits is not copied.
func Fit(s string, width int) string {
	if len(s) <= width {
		return s // bytes ≥ runes
	}
	var b strings.Builder
	done := 0 // s[:done] is in b
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		l := s[start:end]
		if over, isASCII := measure(l, width); over {
			if b.Len() == 0 {
				b.Grow(len(s) + len(s)/width*(width/4+5))
			}
			b.WriteString(s[done:start])
			lead := len(l) - len(strings.TrimLeft(l, " "))
			indent := spaces(min(lead, width/4) + 4)
			if isASCII {
				writeFitASCII(&b, l, width, indent)
			} else {
				b.WriteString(fitLineRunes(l, width, indent))
			}
			done = end
		}
		start = end + 1
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// measure reports whether line is wider than width runes, and whether it
// is all ASCII (a byte is then a column).
func measure(line string, width int) (over, isASCII bool) {
	if len(line) <= width {
		return false, true // ASCII or not, it fits: the caller needs no more
	}
	if ascii(line) {
		return true, true
	}
	return utf8.RuneCountInString(line) > width, false
}

// blanks is where spaces takes its indents from.
const blanks = "                                                                "

// spaces is n spaces.
func spaces(n int) string {
	if n <= len(blanks) {
		return blanks[:n]
	}
	return strings.Repeat(" ", n)
}

// FitLine breaks line (one line, no newline) into lines of at most width
// columns, the lines after the first indented by indent. It breaks at the
// last space that fits (dropping the spaces there); a word wider than the
// room left, such as a JSON offset or a path, breaks after its last ',',
// '/', ';' or ':' that fits, and only a word without any of them is cut
// at the width. Nothing but the breaks and the indent is added or
// removed: the whole value is still in --output json.
func FitLine(line string, width int, indent string) string {
	if len(line) <= width {
		return line // bytes ≥ runes
	}
	var b strings.Builder
	if ascii(line) && ascii(indent) {
		b.Grow(len(line) + (len(line)/max(width/2, 1)+1)*(len(indent)+1))
		writeFitASCII(&b, line, width, indent)
		return b.String()
	}
	return fitLineRunes(line, width, indent)
}

// ascii reports whether s is all ASCII: a byte is then a column, and a
// plan of many keys is fitted without converting each line to runes. It
// tests eight bytes at a time (the loads combine into one).
func ascii(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// writeFitASCII writes to b what fitLineRunes returns, over bytes, for a
// line and indent of ASCII.
func writeFitASCII(b *strings.Builder, line string, width int, indent string) {
	if len(indent) >= width/2 {
		indent = indent[:width/4]
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	first := true
	for {
		room := width
		if !first {
			room -= len(indent)
			b.WriteByte('\n')
			b.WriteString(indent)
		}
		if len(line) <= room {
			b.WriteString(line)
			return
		}
		cut, next := breakAtBytes(line, room, lead)
		b.WriteString(strings.TrimRight(line[:cut], " "))
		line = strings.TrimLeft(line[next:], " ")
		first, lead = false, 0
	}
}

// breakAtBytes is breakAt over the bytes of an ASCII line.
func breakAtBytes(s string, room, lead int) (cut, next int) {
	for i := room; i > lead; i-- {
		if s[i] == ' ' {
			return i, i + 1
		}
	}
	for i := room - 1; i > lead; i-- {
		switch s[i] {
		case ',', '/', ';', ':':
			return i + 1, i + 1
		}
	}
	return room, room
}

// fitLineRunes is FitLine for a line with runes beyond ASCII.
func fitLineRunes(line string, width int, indent string) string {
	r := []rune(line)
	if len(r) <= width {
		return line
	}
	in := []rune(indent)
	if len(in) >= width/2 {
		in = in[:width/4]
	}
	lead := 0 // a line's own indentation is no place to break
	for lead < len(r) && r[lead] == ' ' {
		lead++
	}
	var b strings.Builder
	first := true
	for {
		room := width
		if !first {
			room -= len(in)
			b.WriteString("\n" + string(in))
		}
		if len(r) <= room {
			b.WriteString(string(r))
			return b.String()
		}
		cut, next := breakAt(r, room, lead)
		b.WriteString(strings.TrimRight(string(r[:cut]), " "))
		r = r[next:]
		for len(r) > 0 && r[0] == ' ' {
			r = r[1:]
		}
		first, lead = false, 0
	}
}

// breakAt finds where to break r to fit room columns: the text before cut
// stays on the line, the next line starts at next. A space (after lead)
// wins over a punctuation mark; a cut at room is the last resort.
func breakAt(r []rune, room, lead int) (cut, next int) {
	for i := room; i > lead; i-- {
		if r[i] == ' ' {
			return i, i + 1
		}
	}
	for i := room - 1; i > lead; i-- {
		switch r[i] {
		case ',', '/', ';', ':':
			return i + 1, i + 1
		}
	}
	return room, room
}
