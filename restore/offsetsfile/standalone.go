package offsetsfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"math"
	"slices"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// A standalone Connect worker (connect-standalone) keeps its source offsets
// in the file offset.storage.file.filename: Kafka's FileOffsetBackingStore
// writes it with ObjectOutputStream.writeObject(HashMap<byte[],byte[]>),
// every key and value the exact bytes a distributed worker writes to its
// offsets topic (docs connect-offsets.md §8 gives the layout byte for byte).
//
// The reader here parses the Java serialization stream by hand and accepts
// only that: one java.util.HashMap whose keys and values are byte arrays or
// null. Any other class is an error naming it; nothing in the file is ever
// run, as Kafka's own SafeObjectInputStream means to ensure.

// StandaloneMagic starts every Java serialization stream (STREAM_MAGIC and
// STREAM_VERSION 5): how restore --from-file tells a standalone offsets file.
var StandaloneMagic = []byte{0xAC, 0xED, 0x00, 0x05}

// StandaloneEntry is one entry of a standalone worker's offsets file: the
// exact key and value bytes. A nil Value is a tombstone, which the file
// keeps as an entry (MemoryOffsetBackingStore.set puts the null); a nil Key
// is Java's null key.
type StandaloneEntry struct {
	Key, Value []byte
}

// Java serialization constants (java.io.ObjectStreamConstants).
const (
	tcNull         = 0x70
	tcReference    = 0x71
	tcClassDesc    = 0x72
	tcObject       = 0x73
	tcString       = 0x74
	tcArray        = 0x75
	tcClass        = 0x76
	tcBlockData    = 0x77
	tcEndBlockData = 0x78
	tcReset        = 0x79
	tcBlockDataLng = 0x7A
	tcException    = 0x7B
	tcLongString   = 0x7C
	tcProxyDesc    = 0x7D
	tcEnum         = 0x7E
	baseHandle     = 0x7E0000

	scWriteMethod  = 0x01
	scSerializable = 0x02

	hashMapClass          = "java.util.HashMap"
	hashMapUID            = 362498820763181265 // 0x0507DAC1C31660D1
	byteArrClass          = "[B"
	byteArrUID            = -5984413125824719648 // 0xACF317F8060854E0
	byteArrUIDBits uint64 = 0xACF317F8060854E0
)

// IsStandaloneFile reports whether data starts with the Java serialization
// magic, as every standalone offsets file does.
func IsStandaloneFile(data []byte) bool { return bytes.HasPrefix(data, StandaloneMagic) }

// ReadStandaloneFile parses a standalone worker's offsets file and returns
// its entries in file order (which Java leaves arbitrary). It never
// allocates more than the file's size: every length is checked against the
// bytes left before anything is read. A stream that is not exactly one
// HashMap of byte arrays (another class, a class descriptor that is not
// the JDK's, data after the map) is an error that says where and what.
// An empty file is not a standalone file here (a worker reads it as empty,
// but it has no magic to be told by); callers decide.
func ReadStandaloneFile(data []byte) ([]StandaloneEntry, error) {
	r := &javaReader{b: data}
	entries, err := r.file()
	if err != nil {
		return nil, fmt.Errorf("read standalone offsets file: byte %d: %w", r.i, err)
	}
	return entries, nil
}

// javaReader reads a Java serialization stream of a HashMap<byte[],byte[]>.
type javaReader struct {
	b []byte
	i int
	// handles are the objects assigned a wire handle, in order: a class
	// descriptor (its class name), the map, or a byte array.
	handles []javaHandle
}

type javaHandle struct {
	class string // for a class descriptor: the class it describes
	array []byte // for a byte array
	isArr bool
}

func (r *javaReader) file() ([]StandaloneEntry, error) {
	if !IsStandaloneFile(r.b) {
		return nil, fmt.Errorf("not a Java serialization stream (no magic AC ED 00 05)")
	}
	r.i = len(StandaloneMagic)
	if err := r.expect(tcObject, "TC_OBJECT (the map)"); err != nil {
		return nil, err
	}
	if err := r.classDesc(hashMapClass); err != nil {
		return nil, err
	}
	r.handles = append(r.handles, javaHandle{}) // the map itself
	// HashMap's serializable fields, in the descriptor's order.
	lfBits, err := r.u32()
	if err != nil {
		return nil, err
	}
	if lf := math.Float32frombits(lfBits); !(lf > 0) || math.IsInf(float64(lf), 0) {
		return nil, fmt.Errorf("HashMap loadFactor %v is not a positive number (Java refuses it too)", lf)
	}
	if _, err := r.u32(); err != nil { // threshold: ignored by readObject
		return nil, err
	}
	// writeObject's block: buckets (ignored by readObject) and size.
	if err := r.expect(tcBlockData, "TC_BLOCKDATA (buckets and size)"); err != nil {
		return nil, err
	}
	n, err := r.byte()
	if err != nil {
		return nil, err
	}
	if n != 8 {
		return nil, fmt.Errorf("HashMap block data of %d bytes, want 8 (buckets, size)", n)
	}
	if _, err := r.u32(); err != nil {
		return nil, err
	}
	size, err := r.u32()
	if err != nil {
		return nil, err
	}
	if int32(size) < 0 {
		return nil, fmt.Errorf("HashMap size %d is negative", int32(size))
	}
	// Each entry takes at least 2 bytes (two TC_NULL): never trust size
	// for an allocation beyond what the file can hold.
	if int64(size) > int64(len(r.b)-r.i)/2 {
		return nil, fmt.Errorf("HashMap size %d does not fit in the %d bytes left", size, len(r.b)-r.i)
	}
	entries := make([]StandaloneEntry, 0, size)
	for k := range int(size) {
		key, err := r.byteArray()
		if err != nil {
			return nil, fmt.Errorf("entry %d key: %w", k, err)
		}
		value, err := r.byteArray()
		if err != nil {
			return nil, fmt.Errorf("entry %d value: %w", k, err)
		}
		entries = append(entries, StandaloneEntry{Key: key, Value: value})
	}
	if err := r.expect(tcEndBlockData, "TC_ENDBLOCKDATA (end of the map)"); err != nil {
		return nil, err
	}
	if r.i != len(r.b) {
		return nil, fmt.Errorf("%d bytes after the map (a standalone offsets file holds one map)", len(r.b)-r.i)
	}
	return entries, nil
}

// classDesc reads a new class descriptor (TC_CLASSDESC) and requires it to
// be exactly the JDK's descriptor of want, which has no superclass.
func (r *javaReader) classDesc(want string) error {
	at := r.i
	tc, err := r.byte()
	if err != nil {
		return err
	}
	if tc != tcClassDesc {
		return r.unexpected(at, tc, "TC_CLASSDESC ("+want+")")
	}
	name, err := r.utf()
	if err != nil {
		return err
	}
	if name != want {
		return fmt.Errorf("class %q is not allowed: a standalone offsets file holds only a %s of byte[] (the class was not loaded)", name, hashMapClass)
	}
	uid, err := r.u64()
	if err != nil {
		return err
	}
	r.handles = append(r.handles, javaHandle{class: name})
	flags, err := r.byte()
	if err != nil {
		return err
	}
	nfields, err := r.u16()
	if err != nil {
		return err
	}
	var wantUID int64
	var wantFlags byte
	var wantFields []string
	switch name {
	case hashMapClass:
		wantUID, wantFlags, wantFields = hashMapUID, scWriteMethod|scSerializable, []string{"FloadFactor", "Ithreshold"}
	default:
		wantUID, wantFlags = byteArrUID, scSerializable
	}
	if int64(uid) != wantUID {
		return fmt.Errorf("class %s has serialVersionUID %d, want the JDK's %d", name, int64(uid), wantUID)
	}
	if flags != wantFlags {
		return fmt.Errorf("class %s has descriptor flags %#02x, want %#02x", name, flags, wantFlags)
	}
	if int(nfields) != len(wantFields) {
		return fmt.Errorf("class %s has %d serializable fields, want %d", name, nfields, len(wantFields))
	}
	for _, f := range wantFields {
		typ, err := r.byte()
		if err != nil {
			return err
		}
		fname, err := r.utf()
		if err != nil {
			return err
		}
		if string(typ)+fname != f {
			return fmt.Errorf("class %s field %c %q, want %c %q", name, typ, fname, f[0], f[1:])
		}
	}
	// No class annotation, no superclass.
	if err := r.expect(tcEndBlockData, "TC_ENDBLOCKDATA (end of "+name+"'s class annotation)"); err != nil {
		return err
	}
	return r.expect(tcNull, "TC_NULL (no superclass of "+name+")")
}

// byteArray reads one map key or value: null, a new byte array, or a
// reference to one read before.
func (r *javaReader) byteArray() ([]byte, error) {
	at := r.i
	tc, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		h, err := r.handle()
		if err != nil {
			return nil, err
		}
		if !h.isArr {
			return nil, fmt.Errorf("reference to %s where a byte[] belongs", orThe(h.class, "the map itself"))
		}
		return h.array, nil
	case tcArray:
	default:
		return nil, r.unexpected(at, tc, "a byte[] or null")
	}
	// The array's class: new the first time, then a reference.
	at = r.i
	tc, err = r.byte()
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcClassDesc:
		r.i = at
		if err := r.classDesc(byteArrClass); err != nil {
			return nil, err
		}
	case tcReference:
		h, err := r.handle()
		if err != nil {
			return nil, err
		}
		if h.isArr || h.class != byteArrClass {
			return nil, fmt.Errorf("array of class %s is not allowed: only byte[]", orThe(h.class, "(not a class)"))
		}
	default:
		return nil, r.unexpected(at, tc, "the class of a byte[]")
	}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if int32(n) < 0 || int64(n) > int64(len(r.b)-r.i) {
		return nil, fmt.Errorf("byte[] of length %d, but %d bytes are left", int32(n), len(r.b)-r.i)
	}
	arr := bytes.Clone(r.b[r.i : r.i+int(n)])
	if arr == nil {
		arr = []byte{}
	}
	r.i += int(n)
	r.handles = append(r.handles, javaHandle{array: arr, isArr: true})
	return arr, nil
}

func orThe(s, alt string) string {
	if s == "" {
		return alt
	}
	return "class " + s
}

// handle reads a TC_REFERENCE's handle and returns what it names.
func (r *javaReader) handle() (javaHandle, error) {
	v, err := r.u32()
	if err != nil {
		return javaHandle{}, err
	}
	i := int64(v) - baseHandle
	if i < 0 || i >= int64(len(r.handles)) {
		return javaHandle{}, fmt.Errorf("reference to handle %#x, which was not assigned", v)
	}
	return r.handles[i], nil
}

// unexpected says what tc at is, and what was wanted.
func (r *javaReader) unexpected(at int, tc byte, want string) error {
	r.i = at
	what := map[byte]string{
		tcNull: "TC_NULL", tcReference: "TC_REFERENCE", tcClassDesc: "TC_CLASSDESC", tcObject: "TC_OBJECT",
		tcString: "TC_STRING (a java.lang.String)", tcArray: "TC_ARRAY", tcClass: "TC_CLASS (a java.lang.Class)",
		tcBlockData: "TC_BLOCKDATA", tcEndBlockData: "TC_ENDBLOCKDATA", tcReset: "TC_RESET",
		tcBlockDataLng: "TC_BLOCKDATALONG", tcException: "TC_EXCEPTION", tcLongString: "TC_LONGSTRING (a java.lang.String)",
		tcProxyDesc: "TC_PROXYCLASSDESC (a dynamic proxy class)", tcEnum: "TC_ENUM (a Java enum)",
	}[tc]
	if what == "" {
		what = fmt.Sprintf("byte %#02x", tc)
	}
	if tc == tcObject {
		// Name the class, when it is spelled out right there.
		if r.i+4 <= len(r.b) && r.b[r.i+1] == tcClassDesc {
			rr := &javaReader{b: r.b, i: r.i + 2}
			if name, err := rr.utf(); err == nil {
				return fmt.Errorf("an object of class %q is not allowed where %s belongs: a standalone offsets file holds only a %s of byte[] (the class was not loaded)", name, want, hashMapClass)
			}
		}
	}
	return fmt.Errorf("%s where %s belongs", what, want)
}

func (r *javaReader) expect(tc byte, what string) error {
	at := r.i
	b, err := r.byte()
	if err != nil {
		return err
	}
	if b != tc {
		return r.unexpected(at, b, what)
	}
	return nil
}

func (r *javaReader) need(n int) error {
	if len(r.b)-r.i < n {
		return fmt.Errorf("the file ends early (%d more bytes expected)", n-(len(r.b)-r.i))
	}
	return nil
}

func (r *javaReader) byte() (byte, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	r.i++
	return r.b[r.i-1], nil
}

func (r *javaReader) u16() (uint16, error) {
	if err := r.need(2); err != nil {
		return 0, err
	}
	r.i += 2
	return binary.BigEndian.Uint16(r.b[r.i-2:]), nil
}

func (r *javaReader) u32() (uint32, error) {
	if err := r.need(4); err != nil {
		return 0, err
	}
	r.i += 4
	return binary.BigEndian.Uint32(r.b[r.i-4:]), nil
}

func (r *javaReader) u64() (uint64, error) {
	if err := r.need(8); err != nil {
		return 0, err
	}
	r.i += 8
	return binary.BigEndian.Uint64(r.b[r.i-8:]), nil
}

// utf reads a modified-UTF-8 string with a 2-byte length (class and field
// names; the ones accepted are ASCII, so no decoding is needed).
func (r *javaReader) utf() (string, error) {
	n, err := r.u16()
	if err != nil {
		return "", err
	}
	if err := r.need(int(n)); err != nil {
		return "", err
	}
	r.i += int(n)
	return string(r.b[r.i-int(n) : r.i]), nil
}

// AppendStandaloneFile appends to dst the offsets file a standalone worker
// writes for entries, byte for byte as FileOffsetBackingStore.save writes a
// HashMap of that size (the JDK's HashMap descriptor, loadFactor 0.75, the
// threshold and bucket count the map has after size puts into a new
// HashMap). Entries are written in the order given; Java's order is
// arbitrary and a worker reads any. The caller must not give two equal keys.
func AppendStandaloneFile(dst []byte, entries []StandaloneEntry) []byte {
	dst = append(dst, StandaloneMagic...)
	dst = append(dst, tcObject, tcClassDesc)
	dst = appendUTF(dst, hashMapClass)
	dst = binary.BigEndian.AppendUint64(dst, uint64(hashMapUID))
	dst = append(dst, scWriteMethod|scSerializable, 0, 2)
	dst = append(dst, 'F')
	dst = appendUTF(dst, "loadFactor")
	dst = append(dst, 'I')
	dst = appendUTF(dst, "threshold")
	dst = append(dst, tcEndBlockData, tcNull)
	buckets, threshold := hashMapCapacity(len(entries))
	dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(0.75))
	dst = binary.BigEndian.AppendUint32(dst, uint32(threshold))
	dst = append(dst, tcBlockData, 8)
	dst = binary.BigEndian.AppendUint32(dst, uint32(buckets))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)))
	// Handles: 0 HashMap desc, 1 the map, 2 the [B desc once written.
	arrDesc := false
	appendArray := func(b []byte) {
		if b == nil {
			dst = append(dst, tcNull)
			return
		}
		dst = append(dst, tcArray)
		if !arrDesc {
			dst = append(dst, tcClassDesc)
			dst = appendUTF(dst, byteArrClass)
			dst = binary.BigEndian.AppendUint64(dst, byteArrUIDBits)
			dst = append(dst, scSerializable, 0, 0, tcEndBlockData, tcNull)
			arrDesc = true
		} else {
			dst = append(dst, tcReference)
			dst = binary.BigEndian.AppendUint32(dst, baseHandle+2)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
		dst = append(dst, b...)
	}
	for _, e := range entries {
		appendArray(e.Key)
		appendArray(e.Value)
	}
	return append(dst, tcEndBlockData)
}

// hashMapCapacity is the table size and threshold of a new HashMap after
// n puts: 16 and 12 once it holds anything, doubling while n exceeds three
// quarters of the table; an empty one has no table yet (threshold 0) and
// writeObject reports the default 16 buckets.
func hashMapCapacity(n int) (buckets, threshold int) {
	if n == 0 {
		return 16, 0
	}
	c := 16
	for n > c*3/4 && c < 1<<30 {
		c *= 2
	}
	return c, c * 3 / 4
}

func appendUTF(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// parseStandalone is ParseOffsetsFile for a standalone offsets file: every
// entry must be a source offset key [name, {partition}] (a standalone
// worker keeps nothing else there) and appear once.
func parseStandalone(name string, data []byte) (*OffsetsFile, error) {
	f := &OffsetsFile{Name: name, Format: FormatStandalone}
	p := &problems{name: name}
	es, err := ReadStandaloneFile(data)
	if err != nil {
		p.add("%v", err)
	}
	seen := map[string]int{}
	for i, e := range es {
		switch {
		case e.Key == nil:
			p.add("entry %d: a null key, which no offsets topic can hold", i)
			continue
		case seen[string(e.Key)] > 0:
			p.add("entry %d: key %s is also entry %d (a worker would keep either)", i, restore.DisplayKey(e.Key), seen[string(e.Key)]-1)
			continue
		}
		seen[string(e.Key)] = i + 1
		if _, _, _, err := connectjson.ParseKey(e.Key); err != nil {
			p.add("entry %d: key %s: %v", i, restore.DisplayKey(e.Key), err)
			continue
		}
		f.Standalone = append(f.Standalone, e)
	}
	if len(es) == 0 && err == nil {
		p.add("the file holds no offsets")
	}
	f.problems = slices.Clone(p.list)
	return f, p.err()
}

// standaloneConnectors are the connectors a standalone file has keys of.
func (f *OffsetsFile) standaloneConnectors() []string {
	var out []string
	for _, e := range f.Standalone {
		if n, _, _, err := connectjson.ParseKey(e.Key); err == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// standalone applies a standalone file's entries to the live offsets of
// its connectors: a key gets the file's value bytes where it lives here
// (any partition of the topic the connector reads), else it is added on
// its murmur2 partition of that topic; a null value (a tombstone the
// worker kept as an entry) removes the key. Keys the file does not name
// stay as they are.
func (b *fileSnap) standalone() {
	names := b.f.standaloneConnectors()
	b.out = b.live.Filter(names)
	b.out.Scope = names
	targets := map[string]string{}
	for _, name := range names {
		conn, ok := b.known(name)
		if !ok {
			conn = snapshot.Connector{Name: name, Type: snapshot.TypeSource, Tasks: -1}
		}
		if _, ok := b.out.Connector(name); !ok {
			b.out.Connectors = append(b.out.Connectors, conn)
		}
		targets[name] = b.opts.OffsetsTopics[0]
		if conn.OffsetsTopic != "" {
			targets[name] = conn.OffsetsTopic
		}
	}
	parts := map[string]int32{}
	for _, t := range b.live.Topics {
		if t.Role == snapshot.RoleOffsets {
			parts[t.Name] = int32(len(t.Partitions))
		}
	}
	// The changed copy of the live offsets the file makes.
	offs := b.out.SourceTable().Collect()
	remove := map[int]bool{}
	for i, e := range b.f.Standalone {
		name, _, raw, _ := connectjson.ParseKey(e.Key)
		target := targets[name]
		found := false
		for j := range offs {
			o := &offs[j]
			if o.Topic != target || !bytes.Equal(o.Key, e.Key) {
				continue
			}
			found = true
			if e.Value == nil {
				remove[j] = true
			} else {
				o.Value, o.SourceOffset = snapshot.Bytes(e.Value), jsonOrNil(e.Value)
			}
		}
		if found || e.Value == nil {
			continue
		}
		n := parts[target]
		if n == 0 {
			b.p.add("entry %d: offsets topic %q of connector %q does not exist here", i, target, name)
			continue
		}
		offs = append(offs, snapshot.SourceOffset{
			Topic: target, Partition: snapshot.PartitionFor(e.Key, n), Offset: -1,
			Key: e.Key, Value: e.Value, Connector: name,
			SourcePartition: json.RawMessage(raw), SourceOffset: jsonOrNil(e.Value),
		})
	}
	if len(remove) > 0 {
		kept := offs[:0:0]
		for j, o := range offs {
			if !remove[j] {
				kept = append(kept, o)
			}
		}
		offs = kept
	}
	b.out.SetSourceOffsets(offs)
}

// jsonOrNil is b as informative JSON, nil when it is not valid JSON.
func jsonOrNil(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	return nil
}

// StandaloneEntries are the source offsets of snap's connectors (all of
// them when connectors is empty) as a standalone worker's offsets file
// holds them: one entry per key, the primary copy when a key is in several
// topics or partitions (the connector's own offsets topic first, then the
// key's murmur2 partition), sorted by key. A standalone worker has one
// offsets file, so every connector's keys go in the one map.
func StandaloneEntries(snap *snapshot.Snapshot, connectors []string) []StandaloneEntry {
	own := map[string]string{}
	for _, c := range snap.Connectors {
		own[c.Name] = c.OffsetsTopic
	}
	parts := map[string]int32{}
	for _, t := range snap.Topics {
		if t.Role == snapshot.RoleOffsets {
			parts[t.Name] = int32(len(t.Partitions))
		}
	}
	rank := func(o *snapshot.SourceOffset) int {
		r := 0
		if own[o.Connector] != "" && o.Topic == own[o.Connector] {
			r += 2
		}
		if n := parts[o.Topic]; n > 0 && snapshot.PartitionFor(o.Key, n) == o.Partition {
			r++
		}
		return r
	}
	best := map[string]*snapshot.SourceOffset{}
	t := snap.SourceTable()
	for i := range int32(t.Len()) {
		o := t.At(i)
		if o.Connector == "" || (len(connectors) > 0 && !slices.Contains(connectors, o.Connector)) {
			continue
		}
		if b, ok := best[string(o.Key)]; !ok || rank(o) > rank(b) {
			best[string(o.Key)] = o
		}
	}
	out := make([]StandaloneEntry, 0, len(best))
	for _, o := range best {
		out = append(out, StandaloneEntry{Key: o.Key, Value: o.Value})
	}
	slices.SortFunc(out, func(a, b StandaloneEntry) int { return bytes.Compare(a.Key, b.Key) })
	return out
}
