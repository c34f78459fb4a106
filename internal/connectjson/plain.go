package connectjson

import "encoding/json"

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
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c < 0x20 || c >= 0x7f || c == '\\':
			return -1
		}
	}
	return -1
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
