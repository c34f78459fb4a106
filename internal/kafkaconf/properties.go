package kafkaconf

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// ParseProperties reads r in the format of java.util.Properties.load(InputStream),
// which is how Kafka and Kafka Connect read worker and client .properties files:
//
//   - the input is ISO-8859-1: each byte is one character, so non-ASCII
//     characters must be written as \uXXXX escapes (a UTF-8 file reads exactly as
//     the Java worker reads it, byte for byte);
//   - lines end with \n, \r or \r\n; a line whose first non-blank character is
//     '#' or '!' is a comment; blank lines are skipped;
//   - leading spaces, tabs and form feeds of a line are skipped;
//   - a line ending in an odd number of backslashes continues on the next line,
//     whose leading blanks are skipped;
//   - the key ends at the first unescaped '=', ':' or blank; blanks around the
//     separator are skipped, and trailing blanks of the value are kept;
//   - \t \n \r \f and \uXXXX are escapes (surrogate pairs combine), any other
//     escaped character stands for itself (so "\=" and "\:" and "\ " put
//     separators in keys), and a lone backslash at the end of the input is dropped.
//
// A later key replaces an earlier one. The only error is a malformed \uXXXX
// escape or a read error; the error names the line, never the value, as values
// may be secrets.
func ParseProperties(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read properties: %w", err)
	}
	in := make([]rune, len(b))
	for i, c := range b {
		in[i] = rune(c) // ISO-8859-1: the byte is the code point
	}
	lr := lineReader{in: in, lineNo: 1}
	props := make(map[string]string)
	for {
		line, start, ok := lr.next()
		if !ok {
			return props, nil
		}
		key, value, err := splitProperty(line)
		if err != nil {
			return nil, fmt.Errorf("parse properties line %d: %w", start, err)
		}
		props[key] = value
	}
}

// lineReader is a port of java.util.Properties.LineReader: it returns logical
// lines with comments, blank lines, leading blanks and continuations removed,
// but escapes left in.
type lineReader struct {
	in     []rune
	off    int
	lineNo int // natural line number of in[off]
	skipLF bool
}

func isBlank(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

// read returns the next character and counts natural lines: "\r\n" is one
// line end.
func (lr *lineReader) read() rune {
	c := lr.in[lr.off]
	lr.off++
	if c == '\r' || (c == '\n' && (lr.off < 2 || lr.in[lr.off-2] != '\r')) {
		lr.lineNo++
	}
	return c
}

// next returns the next logical line and the natural line it starts on.
func (lr *lineReader) next() (line []rune, startLine int, ok bool) {
	var (
		skipWhiteSpace     = true
		appendedLineBegin  = false
		precedingBackslash = false
	)
	for {
		if lr.off >= len(lr.in) {
			if len(line) == 0 {
				return nil, 0, false
			}
			if precedingBackslash {
				line = line[:len(line)-1]
			}
			return line, startLine, true
		}
		c := lr.read()
		if lr.skipLF {
			lr.skipLF = false
			if c == '\n' {
				continue
			}
		}
		if skipWhiteSpace {
			if isBlank(c) {
				continue
			}
			if !appendedLineBegin && (c == '\r' || c == '\n') {
				continue
			}
			skipWhiteSpace = false
			appendedLineBegin = false
		}
		if len(line) == 0 && (c == '#' || c == '!') {
			// A comment runs to the end of its natural line; a trailing
			// backslash does not continue it.
			for lr.off < len(lr.in) {
				if c = lr.read(); c == '\n' || c == '\r' {
					break
				}
			}
			skipWhiteSpace = true
			continue
		}
		if c != '\n' && c != '\r' {
			if len(line) == 0 {
				startLine = lr.lineNo
			}
			line = append(line, c)
			if c == '\\' {
				precedingBackslash = !precedingBackslash
			} else {
				precedingBackslash = false
			}
			continue
		}
		// End of a natural line.
		if len(line) == 0 {
			skipWhiteSpace = true
			continue
		}
		if lr.off >= len(lr.in) {
			if precedingBackslash {
				line = line[:len(line)-1]
			}
			return line, startLine, true
		}
		if !precedingBackslash {
			return line, startLine, true
		}
		// The backslash is not part of the line; the next natural line
		// continues this one after its leading blanks.
		line = line[:len(line)-1]
		skipWhiteSpace = true
		appendedLineBegin = true
		precedingBackslash = false
		if c == '\r' {
			lr.skipLF = true
		}
	}
}

// splitProperty splits a logical line into its unescaped key and value, as
// java.util.Properties.load0 does.
func splitProperty(line []rune) (key, value string, err error) {
	limit := len(line)
	keyLen, valueStart := 0, limit
	hasSep, precedingBackslash := false, false
	for keyLen < limit {
		c := line[keyLen]
		if (c == '=' || c == ':') && !precedingBackslash {
			valueStart = keyLen + 1
			hasSep = true
			break
		}
		if isBlank(c) && !precedingBackslash {
			valueStart = keyLen + 1
			break
		}
		if c == '\\' {
			precedingBackslash = !precedingBackslash
		} else {
			precedingBackslash = false
		}
		keyLen++
	}
	for valueStart < limit {
		c := line[valueStart]
		if !isBlank(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valueStart++
	}
	if key, err = unescape(line[:keyLen]); err != nil {
		return "", "", fmt.Errorf("key: %w", err)
	}
	if value, err = unescape(line[valueStart:]); err != nil {
		// The key is not a secret; the value may be.
		return "", "", fmt.Errorf("value of %q: %w", key, err)
	}
	return key, value, nil
}

// unescape is java.util.Properties.loadConvert: it resolves \t \n \r \f and
// \uXXXX, and drops the backslash before any other character. Characters are
// collected as UTF-16 code units so that escaped surrogate pairs combine; a lone
// surrogate becomes U+FFFD.
func unescape(in []rune) (string, error) {
	var (
		units []uint16
		ascii = true
	)
	for _, c := range in {
		if c == '\\' || c > 0x7f {
			ascii = false
			break
		}
	}
	if ascii {
		return string(in), nil
	}
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			units = append(units, uint16(c)) // ISO-8859-1: always < 0x100
			continue
		}
		i++
		if i >= len(in) {
			break // a lone trailing backslash is dropped
		}
		c = in[i]
		switch c {
		case 't':
			c = '\t'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 'f':
			c = '\f'
		case 'u':
			if i+5 > len(in) {
				return "", ErrMalformedProperties
			}
			var v uint16
			for _, h := range in[i+1 : i+5] {
				var d rune
				switch {
				case h >= '0' && h <= '9':
					d = h - '0'
				case h >= 'a' && h <= 'f':
					d = h - 'a' + 10
				case h >= 'A' && h <= 'F':
					d = h - 'A' + 10
				default:
					return "", ErrMalformedProperties
				}
				v = v<<4 | uint16(d)
			}
			i += 4
			units = append(units, v)
			continue
		}
		units = append(units, uint16(c))
	}
	var sb strings.Builder
	for _, r := range utf16.Decode(units) {
		sb.WriteRune(r)
	}
	return sb.String(), nil
}
