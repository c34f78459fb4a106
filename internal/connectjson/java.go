package connectjson

import "math"

// CanonicalKey returns the key bytes Connect's own framework code uses for
// connector's partition m: JsonConverter.toConnectData decodes the partition
// into a new HashMap<>(), putting its fields in m's order, and that map is
// serialized again. This is the key that GET /connectors/{name}/offsets looks
// up, that DELETE (reset) tombstones and that PATCH writes. It equals the
// key a task writes only when the task built its partition with
// new HashMap<>() too (as JDBC, MirrorMaker 2 and Debezium SQL Server and
// MongoDB do), or has a single field.
//
// The decoded map follows Connect: a key that occurs more than once keeps
// its first position and its last value; a big integer becomes a Long holding
// its low 64 bits; nested objects become HashMaps too. A Double made with
// [DoubleValue] (not parsed) is first taken through one write and read, as a
// task's map is: NaN and the infinities come back as strings and -0.0 as 0.0.
func CanonicalKey(connector string, m Map) []byte {
	return MarshalKey(connector, connectMap(m))
}

// RESTMap returns m as Connect's REST API renders a partition or an offset
// in GET /connectors/{name}/offsets: the map Connect decodes from the stored
// bytes (see [CanonicalKey]), written by Jackson's ObjectMapper in HashMap
// order, with the same escaping and number formats as [Marshal]. Connect
// leaves out of that listing a partition whose key or offset holds a nested
// object or array; RESTMap renders such maps anyway.
func RESTMap(m Map) []byte { return Marshal(connectMap(m)) }

// Equal reports whether Java's Map.equals holds for the maps Connect decodes
// from a and b (see [CanonicalKey]): field order does not matter, and neither
// does how a value was escaped or spelled in JSON, but types do: Long 1,
// Double 1.0 and String "1" all differ. It is how Connect decides that two
// keys name the same partition in its REST listing.
func Equal(a, b Map) bool { return equalMaps(connectMap(a), connectMap(b)) }

// connectMap returns the Java HashMap that JsonConverter.toConnectData builds
// from m, in its iteration order.
func connectMap(m Map) Map {
	index := make(map[string]int, len(m))
	fields := make(Map, 0, len(m))
	for _, f := range m {
		k := javaString(f.Key)
		if i, ok := index[k]; ok {
			fields[i].Value = f.Value // Jackson's ObjectNode: last value, first position
			continue
		}
		index[k] = len(fields)
		fields = append(fields, Field{Key: k, Value: f.Value})
	}
	out := make(Map, 0, len(fields))
	for _, k := range HashMapOrder(fields.Keys()) {
		out = append(out, Field{Key: k, Value: connectValue(fields[index[k]].Value)})
	}
	return out
}

// connectValue returns the Java value Connect decodes from v.
func connectValue(v Value) Value {
	switch v.kind {
	case KindString:
		return StringValue(javaString(v.str))
	case KindBigInt:
		return LongValue(v.Long())
	case KindDouble:
		if v.raw != nil {
			return DoubleValue(v.dbl) // already decoded the way Connect does
		}
		switch {
		case math.IsNaN(v.dbl) || math.IsInf(v.dbl, 0):
			return StringValue(FormatDouble(v.dbl)) // written as a JSON string
		case v.dbl == 0:
			return DoubleValue(0) // read back through BigDecimal, which has no -0
		}
		return DoubleValue(v.dbl)
	case KindObject:
		return ObjectValue(connectMap(v.obj))
	case KindArray:
		arr := make([]Value, len(v.arr))
		for i, e := range v.arr {
			arr[i] = connectValue(e)
		}
		return ArrayValue(arr...)
	}
	return Value{kind: v.kind, num: v.num}
}

// equalMaps is Java's Map.equals for maps without duplicate keys.
func equalMaps(a, b Map) bool {
	if len(a) != len(b) {
		return false
	}
	for _, fa := range a {
		vb, ok := b.Get(fa.Key)
		if !ok || !equalValues(fa.Value, vb) {
			return false
		}
	}
	return true
}

// equalValues is Java's equals for decoded values.
func equalValues(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case KindString, KindBigInt:
		return a.str == b.str
	case KindDouble: // Double.equals compares doubleToLongBits
		return math.Float64bits(a.dbl) == math.Float64bits(b.dbl) || (math.IsNaN(a.dbl) && math.IsNaN(b.dbl))
	case KindObject:
		return equalMaps(a.obj, b.obj)
	case KindArray:
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !equalValues(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	}
	return a.num == b.num
}
