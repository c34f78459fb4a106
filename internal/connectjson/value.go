package connectjson

import (
	"math/big"
	"strconv"
)

// Kind is the Java type that Connect decodes a JSON value to.
type Kind uint8

// The kinds of [Value]. The zero Kind is KindNull.
const (
	KindNull   Kind = iota // JSON null; Java null
	KindString             // java.lang.String
	KindLong               // java.lang.Long: a JSON integer that fits in int64
	KindDouble             // java.lang.Double: a JSON number with '.', 'e' or 'E'
	KindBool               // java.lang.Boolean
	KindBigInt             // a JSON integer outside int64; Connect keeps only its low 64 bits as a Long
	KindObject             // a JSON object; Connect decodes it to a HashMap, offsets may not contain one
	KindArray              // a JSON array; Connect decodes it to an ArrayList, offsets may not contain one
)

var kindNames = [...]string{
	KindNull:   "null",
	KindString: "string",
	KindLong:   "long",
	KindDouble: "double",
	KindBool:   "boolean",
	KindBigInt: "big integer",
	KindObject: "object",
	KindArray:  "array",
}

// String returns the kind's name: "null", "string", "long", "double",
// "boolean", "big integer", "object" or "array".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one decoded JSON value with its Java type. The zero Value is null.
//
// A string is held as UTF-8. A Java string may hold a lone UTF-16 surrogate
// (JSON "\uD800" decodes to one); such a code unit is held as its 3-byte
// generalized UTF-8 form (WTF-8), so it survives a round trip.
//
// Values returned by [ParseKey] and [ParseMap] also remember the exact bytes
// they were parsed from ([Value.Raw]). Values are immutable; the Map and
// []Value returned by [Value.Object] and [Value.Array] must not be modified.
type Value struct {
	kind Kind
	str  string  // KindString: the text; KindBigInt: the canonical decimal literal
	num  int64   // KindLong; KindBool (0 or 1)
	dbl  float64 // KindDouble
	obj  Map     // KindObject
	arr  []Value // KindArray
	raw  []byte  // the input bytes of a parsed value; nil for a constructed one
}

// NullValue returns the JSON null.
func NullValue() Value { return Value{} }

// StringValue returns a Java String holding s.
func StringValue(s string) Value { return Value{kind: KindString, str: s} }

// LongValue returns a Java Long. Connect also writes Integer, Short and Byte
// values this way.
func LongValue(n int64) Value { return Value{kind: KindLong, num: n} }

// DoubleValue returns a Java Double. NaN and the infinities are written as the
// JSON strings "NaN", "Infinity" and "-Infinity", as Jackson does by default.
func DoubleValue(f float64) Value { return Value{kind: KindDouble, dbl: f} }

// BoolValue returns a Java Boolean.
func BoolValue(b bool) Value {
	v := Value{kind: KindBool}
	if b {
		v.num = 1
	}
	return v
}

// ObjectValue returns a nested object holding m's fields in m's order.
// Connect rejects nested values in offsets it writes, but decodes them.
func ObjectValue(m Map) Value { return Value{kind: KindObject, obj: m} }

// ArrayValue returns a nested array of vs.
func ArrayValue(vs ...Value) Value { return Value{kind: KindArray, arr: vs} }

// Kind returns v's kind.
func (v Value) Kind() Kind { return v.kind }

// Str returns the text of a KindString value, the decimal literal (no leading
// zeros) of a KindBigInt value, and "" otherwise.
func (v Value) Str() string {
	if v.kind == KindString || v.kind == KindBigInt {
		return v.str
	}
	return ""
}

// Long returns a KindLong value; for a KindBigInt value the low 64 bits of
// the integer, which is what Connect keeps (BigInteger.longValue); 0 otherwise.
func (v Value) Long() int64 {
	switch v.kind {
	case KindLong:
		return v.num
	case KindBigInt:
		n, _ := new(big.Int).SetString(v.str, 10)
		mask := new(big.Int).Lsh(big.NewInt(1), 64)
		n.Mod(n, mask) // two's complement low 64 bits, as a non-negative number
		return int64(n.Uint64())
	}
	return 0
}

// Double returns a KindDouble value and 0 otherwise.
func (v Value) Double() float64 {
	if v.kind == KindDouble {
		return v.dbl
	}
	return 0
}

// Bool returns a KindBool value and false otherwise.
func (v Value) Bool() bool { return v.kind == KindBool && v.num != 0 }

// Object returns the fields of a KindObject value and nil otherwise.
func (v Value) Object() Map {
	if v.kind == KindObject {
		return v.obj
	}
	return nil
}

// Array returns the elements of a KindArray value and nil otherwise.
func (v Value) Array() []Value {
	if v.kind == KindArray {
		return v.arr
	}
	return nil
}

// Raw returns the exact input bytes v was parsed from, such as 1.50 or
// "caf\u00e9", or nil if v was not parsed. It aliases the parsed input.
func (v Value) Raw() []byte { return v.raw }

// String returns v as compact JSON, written the way Connect writes it.
func (v Value) String() string { return string(appendValue(nil, v)) }

// Field is one key and value of a [Map].
type Field struct {
	Key   string
	Value Value
}

// Map is a JSON object as an ordered list of fields, in the order of the bytes
// it was parsed from (or in the order given, when built by hand). A parsed Map
// keeps duplicate keys; Connect keeps the last value of a duplicated key, at
// the position of its first occurrence.
type Map []Field

// Get returns the value of key, the last one if the key occurs more than once
// (as Connect reads it), and whether key is present.
func (m Map) Get(key string) (Value, bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i].Key == key {
			return m[i].Value, true
		}
	}
	return Value{}, false
}

// Keys returns m's keys in m's order, duplicates included.
func (m Map) Keys() []string {
	keys := make([]string, len(m))
	for i, f := range m {
		keys[i] = f.Key
	}
	return keys
}

// String returns Marshal(m) as a string.
func (m Map) String() string { return string(Marshal(m)) }
