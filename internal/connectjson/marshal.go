package connectjson

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal returns m as compact JSON, byte for byte as Connect's JsonConverter
// writes a map whose iteration order is m's order: no white space, strings
// escaped as Jackson does (see [MarshalKey]), longs as plain integers and
// doubles as Java's Double.toString prints them (100.0, 1.0E7, 1.0E-4). Nested
// objects and arrays are written compactly in their own order. Duplicate keys
// are written as they are. An empty or nil m gives {}; Marshal never returns
// a tombstone.
func Marshal(m Map) []byte { return appendObject(nil, m) }

// MarshalKey returns the offset key [connector, m] as a worker writes it,
// with m's fields in m's order; [CanonicalKey] gives Java HashMap order.
//
// Strings are escaped as Jackson's UTF8JsonGenerator does: '"' and '\' get a
// backslash; U+0008, U+0009, U+000A, U+000C and U+000D become \b \t \n \f \r
// and the other control characters below U+0020 \u00XX with upper-case hex;
// everything else in the BMP, including < > & / U+007F U+2028 and U+2029, is
// written as raw UTF-8; a character outside the BMP is written as its two
// escaped UTF-16 surrogates with upper-case hex, so U+1F600 becomes
// \uD83D\uDE00. A lone surrogate held as WTF-8 (see [Value]) is written as its
// escape, such as \uD800; other bytes that are not UTF-8 as U+FFFD.
func MarshalKey(connector string, m Map) []byte {
	b := append(make([]byte, 0, 64), '[')
	b = appendString(b, connector)
	b = append(b, ',')
	b = appendObject(b, m)
	return append(b, ']')
}

func appendObject(b []byte, m Map) []byte {
	b = append(b, '{')
	for i, f := range m {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.Key)
		b = append(b, ':')
		b = appendValue(b, f.Value)
	}
	return append(b, '}')
}

func appendValue(b []byte, v Value) []byte {
	switch v.kind {
	case KindString:
		return appendString(b, v.str)
	case KindLong:
		return strconv.AppendInt(b, v.num, 10)
	case KindDouble:
		if math.IsNaN(v.dbl) || math.IsInf(v.dbl, 0) {
			// JsonWriteFeature.WRITE_NAN_AS_STRINGS is on by default.
			return appendString(b, FormatDouble(v.dbl))
		}
		return append(b, FormatDouble(v.dbl)...)
	case KindBool:
		return strconv.AppendBool(b, v.num != 0)
	case KindBigInt:
		return append(b, v.str...)
	case KindObject:
		return appendObject(b, v.obj)
	case KindArray:
		b = append(b, '[')
		for i, e := range v.arr {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	}
	return append(b, "null"...)
}

const upperHex = "0123456789ABCDEF"

// shortEscapes holds Jackson's two-character escapes for ASCII; 'u' marks a
// control character written as \u00XX.
var shortEscapes = func() (t [0x80]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'u'
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = 'b', 't', 'n', 'f', 'r'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch e := shortEscapes[c]; e {
			case 0:
				b = append(b, c)
			case 'u':
				b = append(b, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xF])
			default:
				b = append(b, '\\', e)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			if u, ok := decodeSurrogate([]byte(s[i:min(i+3, len(s))])); ok {
				b = appendUnitEscape(b, u) // a lone surrogate, held as WTF-8
				i += 3
				continue
			}
			b = append(b, "\uFFFD"...)
		case r >= 0x10000:
			r -= 0x10000
			b = appendUnitEscape(b, uint16(0xD800+r>>10))
			b = appendUnitEscape(b, uint16(0xDC00+r&0x3FF))
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendUnitEscape(b []byte, u uint16) []byte {
	return append(b, '\\', 'u', upperHex[u>>12], upperHex[u>>8&0xF], upperHex[u>>4&0xF], upperHex[u&0xF])
}

// FormatDouble returns Java's Double.toString(f), as specified since JDK 19:
// the shortest decimal that reads back as f (at least two digits when one
// would do, choosing the closest), written as plain decimal with at least one
// fractional digit when 1.0E-3 <= |f| < 1.0E7 (0.001, 100.0, 1234567.0) and
// as d.dddE±n otherwise (1.0E7, 1.0E-4, 4.9E-324). Zero is 0.0 or -0.0; NaN,
// Infinity and -Infinity are spelled that way.
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	neg := f < 0
	digits, exp := javaDigits(math.Abs(f))
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	switch {
	case exp >= 0 && exp < 7:
		if len(digits) <= exp+1 {
			sb.WriteString(digits)
			sb.WriteString(strings.Repeat("0", exp+1-len(digits)))
			sb.WriteString(".0")
		} else {
			sb.WriteString(digits[:exp+1])
			sb.WriteByte('.')
			sb.WriteString(digits[exp+1:])
		}
	case exp < 0 && exp >= -3:
		sb.WriteString("0.")
		sb.WriteString(strings.Repeat("0", -exp-1))
		sb.WriteString(digits)
	default:
		sb.WriteByte(digits[0])
		sb.WriteByte('.')
		if len(digits) > 1 {
			sb.WriteString(digits[1:])
		} else {
			sb.WriteByte('0')
		}
		sb.WriteByte('E')
		sb.WriteString(strconv.Itoa(exp))
	}
	return sb.String()
}

// javaDigits returns the significant digits of the decimal Double.toString
// selects for a positive finite f, without trailing zeros, and its exponent:
// f ≈ d.ddd × 10^exp.
func javaDigits(f float64) (digits string, exp int) {
	digits, exp = splitE(strconv.FormatFloat(f, 'e', -1, 64))
	if len(digits) > 1 {
		return digits, exp
	}
	// The shortest decimal has one digit. Java then picks, among the decimals
	// of one or two digits that read back as f, the one closest to f: the
	// correctly rounded two-digit decimal, which for a double always reads
	// back (checked against Java for every double whose shortest form has one
	// digit; 4.9E-324 is where it matters).
	two := strconv.FormatFloat(f, 'e', 1, 64)
	if g, _ := strconv.ParseFloat(two, 64); g == f {
		return splitE(two)
	}
	return digits, exp
}

// splitE splits FormatFloat's 'e' output "d.ddde±xx" into its digits without
// trailing zeros and the exponent.
func splitE(s string) (string, int) {
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	digits := strings.Replace(mant, ".", "", 1)
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		digits = "0"
	}
	return digits, exp
}
