// Package english holds the one helper every command's text uses for
// counts, so that 1 is singular everywhere: "1 connector", "2 connectors".
package english

import (
	"bytes"
	"slices"
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
// fits is the text itself (not a copy).
func Fit(s string, width int) string {
	if len(s) <= width {
		return s // bytes ≥ runes
	}
	if b, broke := appendFit(nil, s, width); broke {
		return string(b)
	}
	return s
}

// AppendFit appends s to dst with its lines broken as Fit breaks them and
// returns the extended buffer. A restore prints a line per key through it
// into one buffer it reuses: no line is copied to a string and back.
func AppendFit(dst, s []byte, width int) []byte {
	if b, broke := appendFit(dst, s, width); broke {
		return b
	}
	return append(dst, s...)
}

// text is what fitting reads: a string, or the bytes a line was built in.
type text interface{ string | []byte }

// appendFit appends s to dst as Fit returns it and reports true, or, when
// no line of s is wider than width, returns dst as it was and false. Each
// line is read once, and text before the first wide line is copied only
// once one is found.
func appendFit[T text](dst []byte, s T, width int) (_ []byte, broke bool) {
	done := 0 // s[:done] is in dst
	for start := 0; start < len(s); {
		end := len(s)
		if i := indexByte(s[start:], '\n'); i >= 0 {
			end = start + i
		}
		// A line of no more bytes than width fits (bytes ≥ runes); a wider
		// one of ASCII does not (a byte is then a column).
		if l := s[start:end]; len(l) > width {
			if isASCII := ascii(l); isASCII || runeCount(l) > width {
				if !broke {
					dst = slices.Grow(dst, len(s)+len(s)/width*(width/4+5))
					broke = true
				}
				dst = append(dst, s[done:start]...)
				dst = appendFitLine(dst, l, width, isASCII)
				done = end
			}
		}
		start = end + 1
	}
	if !broke {
		return dst, false
	}
	return append(dst, s[done:]...), true
}

// appendFitLine appends line, wider than width, broken as FitLine breaks
// it with its continuations indented by the line's own indentation plus
// four spaces.
func appendFitLine[T text](dst []byte, line T, width int, isASCII bool) []byte {
	lead := leadingSpaces(line)
	n := min(lead, width/4) + 4
	if !isASCII {
		return append(dst, fitLineRunes(string(line), width, spaces(n))...)
	}
	if n >= width/2 {
		n = width / 4 // as appendFitASCII cuts a wide indent
	}
	return appendFitASCII(dst, line, width, newlineSpaces(n), lead)
}

// indexByte is strings.IndexByte or bytes.IndexByte.
func indexByte[T text](s T, c byte) int {
	switch s := any(s).(type) {
	case string:
		return strings.IndexByte(s, c)
	case []byte:
		return bytes.IndexByte(s, c)
	}
	panic("english: text is a string or bytes")
}

// runeCount is utf8.RuneCountInString or utf8.RuneCount.
func runeCount[T text](s T) int {
	switch s := any(s).(type) {
	case string:
		return utf8.RuneCountInString(s)
	case []byte:
		return utf8.RuneCount(s)
	}
	panic("english: text is a string or bytes")
}

// leadingSpaces is the number of spaces s starts with.
func leadingSpaces[T text](s T) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

// blanks is where spaces and newlineSpaces take their indents from.
const blanks = "\n                                                                "

// spaces is n spaces.
func spaces(n int) string {
	if n < len(blanks) {
		return blanks[1 : 1+n]
	}
	return strings.Repeat(" ", n)
}

// newlineSpaces is a newline and n spaces: where a broken line goes on.
func newlineSpaces(n int) string {
	if n < len(blanks) {
		return blanks[:1+n]
	}
	return "\n" + strings.Repeat(" ", n)
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
	if !ascii(line) || !ascii(indent) {
		return fitLineRunes(line, width, indent)
	}
	if len(indent) >= width/2 {
		indent = indent[:width/4]
	}
	b := make([]byte, 0, len(line)+(len(line)/max(width/2, 1)+1)*(len(indent)+1))
	return string(appendFitASCII(b, line, width, "\n"+indent, leadingSpaces(line)))
}

// ascii reports whether s is all ASCII: a byte is then a column, and a
// plan of many keys is fitted without converting each line to runes. It
// ORs the bytes together sixteen at a time and tests their high bits once
// (the text a restore prints is ASCII, so it reads it all anyway).
func ascii[T text](s T) bool {
	var high uint64
	for len(s) >= 16 {
		w := s[:16]
		high |= word(w[:8]) | word(w[8:])
		s = s[16:]
	}
	if len(s) >= 8 {
		high |= word(s)
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		high |= uint64(s[i])
	}
	return high&0x8080808080808080 == 0
}

// word is the first eight bytes of w as one little-endian word: its loads
// combine into one.
func word[T text](w T) uint64 {
	_ = w[7] // one bounds check
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// appendFitASCII appends to dst what fitLineRunes returns, over bytes, for
// a line of ASCII that starts with lead spaces; newlineIndent is a newline
// and the indent of the lines after the first, cut as fitLineRunes cuts
// it (to width/4 when it is width/2 or more).
func appendFitASCII[T text](dst []byte, line T, width int, newlineIndent string, lead int) []byte {
	room := width
	for len(line) > room {
		cut, next := breakAtBytes(line, room, lead)
		for cut > 0 && line[cut-1] == ' ' {
			cut-- // the spaces at a break are dropped
		}
		dst = append(dst, line[:cut]...)
		dst = append(dst, newlineIndent...)
		line = line[next:]
		line = line[leadingSpaces(line):]
		room, lead = width-(len(newlineIndent)-1), 0
	}
	return append(dst, line...)
}

// breakAtBytes is breakAt over the bytes of an ASCII line longer than
// room.
func breakAtBytes[T text](s T, room, lead int) (cut, next int) {
	w := s[:room+1] // what the loops read: no bounds checks in them
	for i := room; i > lead; i-- {
		if w[i] == ' ' {
			return i, i + 1
		}
	}
	for i := room - 1; i > lead; i-- {
		switch w[i] {
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
