// Package connectjson reproduces, in Go, how Kafka Connect's internal
// JsonConverter (schemas.enable=false, Jackson's UTF8JsonGenerator) writes
// source offset keys and values, and how Connect's REST API renders them.
//
// The two types to know are [Map], an ordered list of fields exactly as they
// appear in the bytes, and [Value], one decoded JSON value that keeps the Java
// type Connect gives it (String, Long, Double, Boolean, null).
//
// The package has these jobs:
//
//   - Parse keys and values without re-encoding them: [ParseKey] splits a key
//     into the connector name and its partition [Map] and also returns the exact
//     bytes of the partition object; [ParseMap] parses an offset value.
//   - Show offsets the way GET /connectors/{name}/offsets does: [RESTMap];
//     and own Connect's offsets REST body, {"offsets":[{"partition",
//     "offset"}]}: [OffsetEntry], [EncodeOffsets], [DecodeOffsets],
//     [CheckFlat] (no nested values) and the sink connector's maps
//     ([SinkPartition], [SinkOffset]). snapshot, restore and the fake
//     Connect server all read and write the body through these.
//   - Build the bytes a worker would write when a key must be made from a
//     file: [Marshal], [MarshalKey] and [CanonicalKey].
//
// # Which bytes a worker writes and looks up
//
// A worker writes the key as MarshalKey(connector, partition) with the
// partition's fields in the iteration order of the Java map the task built.
// That order is the connector's business (a HashMap, a singletonMap, a
// LinkedHashMap...), so a restore must copy the original key bytes whenever it
// can. Connect's own framework code (REST GET, PATCH and DELETE of offsets)
// instead decodes a key into a new HashMap and serializes that again; those are
// the bytes [CanonicalKey] returns. For connectors that build their partition
// with new HashMap<>() (JDBC, MirrorMaker 2, Debezium SQL Server and MongoDB)
// the two agree. A stored key is in the form Connect's REST API reads and
// resets exactly when it equals CanonicalKey of the connector and partition
// that ParseKey finds in it.
//
// # Model of Connect's decoding
//
// The package models JsonConverter.toConnectData as of Kafka 3.6 and later
// (ObjectMapper.readTree with ALLOW_LEADING_ZEROS_FOR_NUMBERS and
// USE_BIG_DECIMAL_FOR_FLOATS; then integers become Long, decimals Double and
// objects a new HashMap filled in JSON order) and the output of Jackson 2.x's
// UTF8JsonGenerator. testdata/java holds a small Java program that runs real
// Jackson configured the same way, and the golden files it wrote; the tests
// compare this package against them. Details worth knowing:
//
//   - Like Jackson, parsing stops after the first complete JSON value: bytes
//     after it are ignored. An initial UTF-8 byte order mark is skipped.
//   - Decimals go through BigDecimal, which has no negative zero: -0.0 reads
//     as 0.0. An integer outside int64 becomes a Long of its low 64 bits.
//   - Jackson decodes malformed UTF-8 without complaint when the lead byte is
//     C0..F7 and the continuation bytes are 10xxxxxx (overlong forms,
//     encoded surrogates, values above U+10FFFF); so does this package.
//
// Known limits:
//
//   - Doubles are formatted like Double.toString on JDK 19 and later
//     (JDK-4511638). JDK 17 and older print a few values with more digits,
//     for example 1.0E23 as 9.999999999999999E22: in the tests, 2 of 800
//     random doubles and none of 800 short decimals differ, but many
//     subnormals do. Keys that hold doubles are where copying the original
//     bytes matters most.
//   - Java HashMap order is modelled exactly, including the resize that a
//     bucket of 9 or more colliding keys forces while the table is smaller than
//     64, but not the order of a treeified bucket (9 or more keys in one bucket
//     of a table of 64 or more).
//   - A field name that is not valid UTF-8 (a lead byte F8..FF or 80..BF) is
//     rejected. Jackson rejects it too when parsing it fresh, but a worker's
//     long-lived parser may accept it, with the bad byte dropped, if it has
//     seen a similar name before: its symbol table matches names by bytes
//     before decoding them.
//   - Nesting deeper than 1000 levels is rejected, as Jackson 2.15 and later
//     do. Jackson's detection of UTF-16 and UTF-32 input is not modelled, and
//     neither are its other 2.15+ size limits.
//
// Everything here is a pure function of its arguments and safe for concurrent
// use.
package connectjson
