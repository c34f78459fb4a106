package connectjson

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Errors returned by [ParseKey] and [ParseMap]. Test with errors.Is; the
// error text itself is short and says what was found.
var (
	// ErrSyntax: the bytes are not JSON that Jackson would read.
	// Connect logs such a key and ignores it for REST and reset, but keeps it
	// in its offset store under its raw bytes.
	ErrSyntax = errors.New("not valid JSON")
	// ErrNotSourceKey: valid JSON, but not [connector, {partition}].
	// Connect ignores such a key the same way.
	ErrNotSourceKey = errors.New("not a source offset key")
	// ErrNotObject: an offset value that is valid JSON but not an object.
	// Connect reads it as no offset and logs an error.
	ErrNotObject = errors.New("not a JSON object")
	// ErrTombstone: a nil offset value, which is a Kafka tombstone. Connect
	// forgets the partition: it is no longer listed by the REST API.
	ErrTombstone = errors.New("tombstone")
	// ErrNullOffset: an offset value that is JSON null or holds no JSON at all
	// (empty or white space). Connect reads it as no offset but, unlike a
	// tombstone, still lists the partition, with "offset": null.
	ErrNullOffset = errors.New("null offset")
)

// parseError is a short message that unwraps to one of the sentinels above.
type parseError struct {
	msg  string
	kind error
}

func (e *parseError) Error() string { return e.msg }
func (e *parseError) Unwrap() error { return e.kind }

// maxDepth is Jackson's default StreamReadConstraints nesting limit (2.15+).
const maxDepth = 1000

// ParseKey parses a source offset key, accepting what Connect accepts (see
// OffsetUtils.processPartitionKey): a JSON array of exactly two elements, a
// string and an object. White space around the array is allowed and, as with
// Jackson, anything after the array is ignored. Strings are decoded as
// Jackson decodes them, malformed UTF-8 included (see the package doc).
//
// rawPartition is the exact sub-slice of key that holds the partition object,
// so its original field order and escaping stay visible. partition and its
// values alias key as well: do not modify key afterwards.
//
// Errors wrap [ErrSyntax] or [ErrNotSourceKey] and read like
// "key is a JSON string, not [connector, {partition}]" or
// "key array has 3 elements, not 2".
func ParseKey(key []byte) (connector string, partition Map, rawPartition []byte, err error) {
	p := parser{in: key}
	v, ok, err := p.parseDocument()
	if err != nil {
		return "", nil, nil, &parseError{"key is not valid JSON: " + err.Error(), ErrSyntax}
	}
	if !ok {
		return "", nil, nil, &parseError{"key is empty", ErrNotSourceKey}
	}
	if v.kind != KindArray {
		return "", nil, nil, &parseError{"key is " + jsonKind(v) + ", not [connector, {partition}]", ErrNotSourceKey}
	}
	if n := len(v.arr); n != 2 {
		return "", nil, nil, &parseError{fmt.Sprintf("key array has %d elements, not 2", n), ErrNotSourceKey}
	}
	name, part := v.arr[0], v.arr[1]
	if name.kind != KindString {
		return "", nil, nil, &parseError{"key connector is " + jsonKind(name) + ", not a string", ErrNotSourceKey}
	}
	if part.kind == KindNull {
		return "", nil, nil, &parseError{"key partition is null", ErrNotSourceKey}
	}
	if part.kind != KindObject {
		return "", nil, nil, &parseError{"key partition is " + jsonKind(part) + ", not an object", ErrNotSourceKey}
	}
	return name.str, part.obj, part.raw, nil
}

// ParseMap parses an offset value: a JSON object, with white space around it
// allowed and anything after it ignored, as Jackson does. The values of the
// returned Map alias b: do not modify b afterwards.
//
// A nil b is a tombstone and gives [ErrTombstone]. JSON null, and a non-nil b
// with no JSON in it, give [ErrNullOffset]. Other errors wrap [ErrSyntax] or
// [ErrNotObject].
func ParseMap(b []byte) (Map, error) {
	if b == nil {
		return nil, &parseError{"value is a tombstone", ErrTombstone}
	}
	p := parser{in: b}
	v, ok, err := p.parseDocument()
	switch {
	case err != nil:
		return nil, &parseError{"value is not valid JSON: " + err.Error(), ErrSyntax}
	case !ok:
		return nil, &parseError{"value is empty", ErrNullOffset}
	case v.kind == KindNull:
		return nil, &parseError{"value is null", ErrNullOffset}
	case v.kind != KindObject:
		return nil, &parseError{"value is " + jsonKind(v) + ", not an object", ErrNotObject}
	}
	return v.obj, nil // never nil: an empty object gives an empty Map
}

// jsonKind names the JSON type of v for error messages.
func jsonKind(v Value) string {
	switch v.kind {
	case KindNull:
		return "null"
	case KindString:
		return "a JSON string"
	case KindBool:
		return "a JSON boolean"
	case KindObject:
		return "a JSON object"
	case KindArray:
		return "a JSON array"
	}
	return "a JSON number"
}

// parser is a strict JSON reader with Jackson's defaults plus leading zeros.
type parser struct {
	in    []byte
	pos   int
	depth int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf(format+" at offset %d", append(args, p.pos)...)
}

// unexpected reports the byte at p.pos, or the end of input.
func (p *parser) unexpected(what string) error {
	if p.pos >= len(p.in) {
		return fmt.Errorf("unexpected end of input, want %s", what)
	}
	return p.errorf("unexpected %s, want %s", quoteByte(p.in[p.pos]), what)
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02X", c)
}

// parseDocument reads the first JSON value of the input. ok is false when the
// input holds only white space (Jackson's MissingNode).
func (p *parser) parseDocument() (v Value, ok bool, err error) {
	if len(p.in) >= 3 && p.in[0] == 0xEF && p.in[1] == 0xBB && p.in[2] == 0xBF {
		p.pos = 3 // UTF-8 byte order mark, skipped by Jackson's bootstrapper
	}
	p.skipSpace()
	if p.pos == len(p.in) {
		return Value{}, false, nil
	}
	if v, err = p.parseValue(); err != nil {
		return Value{}, false, err
	}
	if err := p.checkRootEnd(v); err != nil {
		return Value{}, false, err
	}
	return v, true, nil
}

// checkRootEnd applies Jackson's two checks on what follows a root-level
// scalar (anything after a root-level object, array or string is ignored):
// a number must be followed by white space, and true, false or null must
// not run on into an identifier character ("truex").
func (p *parser) checkRootEnd(v Value) error {
	if p.pos >= len(p.in) {
		return nil
	}
	c := p.in[p.pos]
	switch v.kind {
	case KindLong, KindDouble, KindBigInt:
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return p.errorf("unexpected %s after a root-level number, want white space", quoteByte(c))
		}
	case KindBool, KindNull:
		if c < '0' || c == ']' || c == '}' {
			return nil
		}
		r, size := utf8.DecodeRune(p.in[p.pos:])
		if (r == utf8.RuneError && size <= 1) || r == '_' || r == 0x7F || (r >= 0x80 && r <= 0x9F) || unicode.IsLetter(r) ||
			unicode.IsDigit(r) || unicode.In(r, unicode.Sc, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Nl, unicode.Cf) {
			// Character.isJavaIdentifierPart, or not UTF-8
			return p.errorf("unrecognized token %q", string(v.raw)+string(r))
		}
	}
	return nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) parseValue() (Value, error) {
	if p.pos >= len(p.in) {
		return Value{}, p.unexpected("a value")
	}
	start := p.pos
	var v Value
	var err error
	switch c := p.in[p.pos]; {
	case c == '{':
		v, err = p.parseObject()
	case c == '[':
		v, err = p.parseArray()
	case c == '"':
		var s string
		s, err = p.parseString(false)
		v = Value{kind: KindString, str: s}
	case c == '-' || (c >= '0' && c <= '9'):
		v, err = p.parseNumber()
	case c == 't':
		v, err = p.parseLiteral("true", BoolValue(true))
	case c == 'f':
		v, err = p.parseLiteral("false", BoolValue(false))
	case c == 'n':
		v, err = p.parseLiteral("null", NullValue())
	default:
		return Value{}, p.unexpected("a value")
	}
	if err != nil {
		return Value{}, err
	}
	v.raw = p.in[start:p.pos:p.pos]
	return v, nil
}

func (p *parser) parseLiteral(word string, v Value) (Value, error) {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.in) || p.in[p.pos] != word[i] {
			return Value{}, p.unexpected(strconv.Quote(word))
		}
		p.pos++
	}
	return v, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errorf("nesting deeper than %d", maxDepth)
	}
	p.pos++ // the '{' or '['
	return nil
}

func (p *parser) parseObject() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	m := Map{}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		p.depth--
		return Value{kind: KindObject, obj: m}, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return Value{}, p.unexpected("a field name")
		}
		key, err := p.parseString(true)
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return Value{}, p.unexpected("':'")
		}
		p.pos++
		p.skipSpace()
		v, err := p.parseValue()
		if err != nil {
			return Value{}, err
		}
		m = append(m, Field{Key: key, Value: v})
		p.skipSpace()
		if p.pos < len(p.in) && p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.in) && p.in[p.pos] == '}' {
			p.pos++
			p.depth--
			return Value{kind: KindObject, obj: m}, nil
		}
		return Value{}, p.unexpected("',' or '}'")
	}
}

func (p *parser) parseArray() (Value, error) {
	if err := p.enter(); err != nil {
		return Value{}, err
	}
	arr := []Value{}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		p.depth--
		return Value{kind: KindArray, arr: arr}, nil
	}
	for {
		p.skipSpace()
		v, err := p.parseValue()
		if err != nil {
			return Value{}, err
		}
		arr = append(arr, v)
		p.skipSpace()
		if p.pos < len(p.in) && p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.in) && p.in[p.pos] == ']' {
			p.pos++
			p.depth--
			return Value{kind: KindArray, arr: arr}, nil
		}
		return Value{}, p.unexpected("',' or ']'")
	}
}

// parseNumber reads a JSON number; leading zeros are allowed, as Connect's
// JsonDeserializer enables ALLOW_LEADING_ZEROS_FOR_NUMBERS (Kafka 3.6+).
func (p *parser) parseNumber() (Value, error) {
	start := p.pos
	neg := p.in[p.pos] == '-'
	if neg {
		p.pos++
	}
	intStart := p.pos
	for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
		p.pos++
	}
	if p.pos == intStart {
		return Value{}, p.unexpected("a digit")
	}
	intDigits := p.in[intStart:p.pos]
	isFloat := false
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		isFloat = true
		p.pos++
		fracStart := p.pos
		for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
			p.pos++
		}
		if p.pos == fracStart {
			return Value{}, p.unexpected("a digit after '.'")
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		isFloat = true
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		expStart := p.pos
		for p.pos < len(p.in) && isDigit(p.in[p.pos]) {
			p.pos++
		}
		if p.pos == expStart {
			return Value{}, p.unexpected("a digit in the exponent")
		}
	}
	lit := string(p.in[start:p.pos])
	if isFloat {
		return Value{kind: KindDouble, dbl: parseJavaDouble(lit)}, nil
	}
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return Value{kind: KindLong, num: n}, nil
	}
	// Out of int64 range: Jackson makes a BigInteger. Keep its canonical text.
	digits := intDigits
	for len(digits) > 1 && digits[0] == '0' {
		digits = digits[1:]
	}
	s := string(digits)
	if neg {
		s = "-" + s
	}
	return Value{kind: KindBigInt, str: s}, nil
}

// parseJavaDouble converts a syntactically valid JSON float literal the way
// Connect does: to a BigDecimal (USE_BIG_DECIMAL_FOR_FLOATS), then
// doubleValue(). Rounding is the same as Go's and overflow gives an infinity.
// A BigDecimal has no negative zero, so "-0.0" gives +0.0, while a negative
// literal that underflows ("-1e-400") gives -0.0.
func parseJavaDouble(lit string) float64 {
	zero := true
	for i := 0; i < len(lit) && lit[i] != 'e' && lit[i] != 'E'; i++ {
		if c := lit[i]; c >= '1' && c <= '9' {
			zero = false
			break
		}
	}
	if zero {
		return 0
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		panic("connectjson: unparsable float literal " + lit) // the grammar was checked
	}
	return f
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseString reads a JSON string at p.pos (which holds '"') and returns it as
// UTF-8, with lone surrogates as WTF-8. Like Jackson, it rejects raw control
// characters and unknown escapes. name tells whether the string is a field
// name, which Jackson decodes slightly differently (see jacksonUTF8).
func (p *parser) parseString(name bool) (string, error) {
	p.pos++
	start := p.pos
	// Fast path: no escapes, only ASCII.
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		if c == '"' {
			s := string(p.in[start:p.pos])
			p.pos++
			return s, nil
		}
		if c < 0x20 || c == '\\' || c >= 0x80 {
			break
		}
		p.pos++
	}
	w := wtf8Builder{highAt: -1}
	w.buf = append(w.buf, p.in[start:p.pos]...)
	for {
		if p.pos >= len(p.in) {
			return "", p.unexpected("'\"'")
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(w.buf), nil
		case c < 0x20:
			return "", p.errorf("raw control character U+%04X in string", c)
		case c == '\\':
			if err := p.parseEscape(&w); err != nil {
				return "", err
			}
		case c < 0x80:
			w.addUnit(uint16(c))
			p.pos++
		default:
			u1, u2, size := jacksonUTF8(p.in[p.pos:], name)
			if size == 0 {
				return "", p.errorf("invalid UTF-8 in string")
			}
			w.addUnit(u1)
			if size == 4 {
				w.addUnit(u2)
			}
			p.pos += size
		}
	}
}

// jacksonUTF8 decodes one multi-byte character the way Jackson 2.x's
// UTF8StreamJsonParser does, returning its UTF-16 code units (u2 only when
// size is 4) and its length in bytes, or size 0 when Jackson reports an
// error. Jackson checks only the lead byte (C0..F7) and that continuation
// bytes are 10xxxxxx: overlong forms, encoded surrogates and values above
// U+10FFFF are all decoded, the last ones into odd surrogates. For a 4-byte
// sequence, field names add the high surrogate offset where string values
// OR it in; the two differ only for overlong forms.
func jacksonUTF8(b []byte, name bool) (u1, u2 uint16, size int) {
	c := b[0]
	switch {
	case c&0xE0 == 0xC0:
		size = 2
	case c&0xF0 == 0xE0:
		size = 3
	case c&0xF8 == 0xF0:
		size = 4
	default:
		return 0, 0, 0
	}
	if len(b) < size {
		return 0, 0, 0
	}
	v := int32(c) & (0x7F >> size)
	for _, d := range b[1:size] {
		if d&0xC0 != 0x80 {
			return 0, 0, 0
		}
		v = v<<6 | int32(d&0x3F)
	}
	if size < 4 {
		return uint16(v), 0, size
	}
	v -= 0x10000
	if name {
		u1 = uint16(0xD800 + v>>10)
	} else {
		u1 = uint16(0xD800 | v>>10)
	}
	return u1, uint16(0xDC00 | v&0x3FF), 4
}

func (p *parser) parseEscape(w *wtf8Builder) error {
	if p.pos+1 >= len(p.in) {
		p.pos = len(p.in)
		return p.unexpected("an escape")
	}
	c := p.in[p.pos+1]
	var u uint16
	switch c {
	case '"', '\\', '/':
		u = uint16(c)
	case 'b':
		u = '\b'
	case 'f':
		u = '\f'
	case 'n':
		u = '\n'
	case 'r':
		u = '\r'
	case 't':
		u = '\t'
	case 'u':
		if p.pos+6 > len(p.in) {
			p.pos = len(p.in)
			return p.unexpected("4 hex digits")
		}
		for i := 2; i < 6; i++ {
			d, ok := hexVal(p.in[p.pos+i])
			if !ok {
				p.pos += i
				return p.errorf("invalid hex digit %s in \\u escape", quoteByte(p.in[p.pos]))
			}
			u = u<<4 | uint16(d)
		}
		w.addUnit(u)
		p.pos += 6
		return nil
	default:
		p.pos++
		return p.errorf("invalid escape \\%s", string(rune(c)))
	}
	w.addUnit(u)
	p.pos += 2
	return nil
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
