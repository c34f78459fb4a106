package connectjson

import "unicode/utf8"

// Java strings are sequences of UTF-16 code units and may hold lone
// surrogates. This package holds them in Go strings as WTF-8: UTF-8, except
// that a lone surrogate is encoded as its own 3-byte sequence (ED A0..BF xx).

// javaStringHash returns Java's String.hashCode of s: h = 31*h + c over the
// UTF-16 code units of s, in int32 arithmetic. Lone surrogates held as WTF-8
// count as one code unit; other bytes that are not UTF-8 count as U+FFFD.
func javaStringHash(s string) int32 {
	var h int32
	forEachUnit(s, func(u uint16) { h = 31*h + int32(u) })
	return h
}

// forEachUnit calls fn with each UTF-16 code unit of s, as a Java String
// would hold it.
func forEachUnit(s string, fn func(uint16)) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			fn(uint16(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			if u, ok := decodeSurrogate([]byte(s[i:min(i+3, len(s))])); ok {
				fn(u)
				i += 3
				continue
			}
		}
		if r >= 0x10000 {
			r -= 0x10000
			fn(uint16(0xD800 + r>>10))
			fn(uint16(0xDC00 + r&0x3FF))
		} else {
			fn(uint16(r))
		}
		i += size
	}
}

// javaString returns s as a Java String holds it: bytes that are not UTF-8
// (other than WTF-8 surrogates) become U+FFFD.
func javaString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	w := wtf8Builder{highAt: -1}
	forEachUnit(s, w.addUnit)
	return string(w.buf)
}

// decodeSurrogate decodes a UTF-16 surrogate encoded as 3 bytes (ED A0..BF
// 80..BF, WTF-8), which Go's UTF-8 decoder rejects.
func decodeSurrogate(b []byte) (uint16, bool) {
	if len(b) < 3 || b[0] != 0xED || b[1] < 0xA0 || b[1] > 0xBF || b[2] < 0x80 || b[2] > 0xBF {
		return 0, false
	}
	return 0xD000 | uint16(b[1]&0x3F)<<6 | uint16(b[2]&0x3F), true
}

// wtf8Builder builds a string from UTF-16 code units and runes, joining a high
// surrogate followed by a low one into one supplementary character, as a Java
// String would hold them.
type wtf8Builder struct {
	buf      []byte
	highAt   int // index in buf of a pending high surrogate, or -1 when none
	highUnit uint16
}

func (w *wtf8Builder) addUnit(u uint16) {
	switch {
	case u >= 0xDC00 && u <= 0xDFFF && w.highAt >= 0 && w.highAt == len(w.buf)-3:
		r := 0x10000 + (rune(w.highUnit)-0xD800)<<10 + (rune(u) - 0xDC00)
		w.buf = utf8.AppendRune(w.buf[:w.highAt], r)
		w.highAt = -1
	case u >= 0xD800 && u <= 0xDFFF:
		w.highAt = -1
		if u < 0xDC00 {
			w.highAt, w.highUnit = len(w.buf), u
		}
		w.buf = append(w.buf, 0xE0|byte(u>>12), 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
	default:
		w.highAt = -1
		w.buf = utf8.AppendRune(w.buf, rune(u))
	}
}
