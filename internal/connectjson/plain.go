package connectjson

import (
	"encoding/binary"
	"encoding/json"
)

// PlainKey is a fast path of [ParseKey] for the keys nearly every connector
// writes: ["name",{...}] with a plain name (printable ASCII, no escapes)
// and a flat plain partition object (see [PlainObjectEnd]), and nothing
// around them, not even white space. For such a key it returns the bytes of
// the name and of the partition object: every key it accepts, ParseKey
// accepts too, with that name as the connector and that object as
// rawPartition. For any other key ok is false and ParseKey has to read it.
// Both results alias key. It does not allocate.
func PlainKey(key []byte) (name, rawPartition []byte, ok bool) {
	if len(key) < 7 || key[0] != '[' || key[1] != '"' || key[len(key)-1] != ']' {
		return nil, nil, false
	}
	i := plainString(key, 1)
	if i < 0 || i+1 >= len(key) || key[i] != ',' {
		return nil, nil, false
	}
	name = key[2 : i-1]
	end := PlainObjectEnd(key, i+1)
	if end != len(key)-1 {
		return nil, nil, false
	}
	return name, key[i+1 : end : end], true
}

// PlainObjectEnd returns the index just past the JSON object starting at
// b[i] when it is flat and plain: no white space; field names and string
// values of printable ASCII other than '"' and '\\' (no escapes); values
// that are such strings, integers of 1 to 18 digits without leading zeros
// (a minus allowed), true, false or null. Otherwise it returns -1. Both
// encoding/json and [ParseMap] accept every such object.
func PlainObjectEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i++
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i = plainString(b, i); i < 0 || i >= len(b) || b[i] != ':' {
			return -1
		}
		i++
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			i = plainString(b, i)
		case c == '-' || (c >= '0' && c <= '9'):
			i = plainInt(b, i)
		case c == 't':
			i = literal(b, i, "true")
		case c == 'f':
			i = literal(b, i, "false")
		case c == 'n':
			i = literal(b, i, "null")
		default:
			return -1
		}
		if i < 0 || i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// plainString returns the index just past the JSON string starting at
// b[i] == '"' when it holds only printable ASCII other than '"' and '\\'
// (no escapes), or -1.
func plainString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	j := i + 1
	// Eight bytes at a time up to the first that is not plain: the closing
	// quote, or what makes the string not plain. Keys and offsets are read
	// by the million, and their strings (names, paths, topics) are long.
	for ; len(b)-j >= 8; j += 8 {
		if !plainWord(binary.LittleEndian.Uint64(b[j:])) {
			break
		}
	}
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c < 0x20 || c >= 0x7f || c == '\\':
			return -1
		}
	}
	return -1
}

// ones and highs are 1 and 0x80 in each byte of a word.
const ones, highs = 0x0101010101010101, 0x8080808080808080

// plainWord reports whether none of the eight bytes of x ends or spoils a
// plain string: none is '"' or '\\', below 0x20 or from 0x7f up.
func plainWord(x uint64) bool {
	zero := func(v uint64) uint64 { return (v - ones) &^ v } // a byte of v is 0, in its high bit
	return (unprintable(x)|zero(x^('"'*ones))|zero(x^('\\'*ones)))&highs == 0
}

// unprintable has a high bit set where x has a byte below 0x20 or from
// 0x7f up, though maybe not only there: each test is exact for "any
// byte", which is all it is asked.
func unprintable(x uint64) uint64 {
	// From 0x7f up: adding one carries into the next byte only from 0xff,
	// itself from 0x7f up.
	return x | (x + ones) | (x-0x20*ones)&^x
}

// PrintableASCII reports whether every byte of b is printable ASCII (0x20
// to 0x7e), eight bytes at a time.
func PrintableASCII(b []byte) bool {
	var bad uint64
	for ; len(b) >= 8; b = b[8:] {
		bad |= unprintable(binary.LittleEndian.Uint64(b))
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return bad&highs == 0
}

// plainInt returns the index just past the integer at b[i]: an optional
// minus and 1 to 18 digits, no leading zero. Otherwise -1.
func plainInt(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if n := i - start; n == 0 || n > 18 || (n > 1 && b[start] == '0') {
		return -1
	}
	return i
}

func literal(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// Valid is json.Valid with a fast path for flat objects of plain ASCII
// strings, integers, booleans and nulls (what connectors write as offset
// values: see PlainObjectEnd); what the fast path accepts json.Valid
// accepts too.
func Valid(b []byte) bool {
	if PlainObjectEnd(b, 0) == len(b) {
		return true
	}
	return json.Valid(b)
}
