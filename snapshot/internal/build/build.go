// Package build builds a snapshot's entries from what a capture or a
// journal replay read, for snapshot/capture and snapshot/journal, which
// both build them: the source offsets of a partition's view
// (OffsetBuilder, and the radix sort of its keys, SortKeyEntries), the
// keys found in two partitions (DuplicateWarnings), and the config topic
// replayed as Kafka Connect's KafkaConfigBackingStore replays it
// (ConfigState).
package build

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// OffsetBuilder makes the source offsets of a Capture from the views.
type OffsetBuilder struct {
	Scoped     bool
	InScope    func(string) bool
	Connectors map[string]*snapshot.Connector
	Names      map[string]string // interned connector names
	lastName   string
	entries    []KeyEntry
}

// Make returns the SourceOffset of the live key k of partition p of topic,
// and whether the capture keeps it (a scoped capture keeps only the keys of
// its connectors).
func (b *OffsetBuilder) Make(topic string, p int32, k string, r keyview.Record) (snapshot.SourceOffset, bool) {
	kb := keyview.StringBytes(k)
	so := snapshot.SourceOffset{Topic: topic, Partition: p, Offset: r.Offset, Key: snapshot.Bytes(kb), Value: snapshot.Bytes(r.Value)}
	name, raw, perr := snapshot.ParseSourceKey(kb, b.Names)
	if perr != nil {
		if b.Scoped {
			return so, false
		}
		so.ParseError = perr.Error()
		return so, true
	}
	if !b.InScope(name) {
		return so, false
	}
	so.Connector = name
	so.SourcePartition = json.RawMessage(raw)
	if len(r.Value) > 0 && r.Value[0] == '{' && connectjson.Valid(r.Value) {
		so.SourceOffset = json.RawMessage(r.Value)
	}
	return so, true
}

// Register adds a connector known only from its offsets.
func (b *OffsetBuilder) Register(name string) {
	if name == b.lastName || name == "" {
		return
	}
	if b.Connectors[name] == nil {
		b.Connectors[name] = &snapshot.Connector{Name: name, Type: snapshot.TypeSource, Tasks: -1}
	}
	b.lastName = name
}

// Build appends the source offsets of partition p of topic to out, in key
// order, and returns the kept keys that are off their murmur2 partition.
func (b *OffsetBuilder) Build(out []snapshot.SourceOffset, topic string, p, nparts int32, pv *keyview.PartView) ([]snapshot.SourceOffset, []string) {
	b.entries = b.entries[:0]
	for k, i := range pv.All() {
		b.entries = append(b.entries, KeyEntry{Key: k, Rec: i})
	}
	SortKeyEntries(b.entries, 0)
	var suspects []string
	for _, e := range b.entries {
		so, kept := b.Make(topic, p, e.Key, pv.Record(e.Rec))
		if !kept {
			continue
		}
		if snapshot.PartitionFor(so.Key, nparts) != p {
			suspects = append(suspects, e.Key)
		}
		out = append(out, so)
	}
	return out, suspects
}

// Update appends the source offsets of partition p of topic to out as
// build would, from what the last Capture built and the keys written since
// (pv.dirty), and keeps the result for the next Capture. Its cost is a copy
// of the partition's offsets plus the work of the keys written.
func (b *OffsetBuilder) Update(out []snapshot.SourceOffset, topic string, p, nparts int32, pv *keyview.PartView) []snapshot.SourceOffset {
	dirty := make([]string, 0, len(pv.Dirty))
	for k := range pv.Dirty {
		dirty = append(dirty, k)
	}
	slices.Sort(dirty)
	bp := pv.Built.(*BuiltPart)
	old := bp.Offsets
	byKey := func(o snapshot.SourceOffset, k string) int { return strings.Compare(string(o.Key), k) }
	// The usual case, keys whose values moved, is an update in place of
	// the Capturer's copy; keys added or removed take a merge into a new one.
	inPlace := true
	for _, k := range dirty {
		_, found := slices.BinarySearchFunc(old, k, byKey)
		_, live := pv.Lookup(keyview.StringBytes(k))
		if !found || !live {
			inPlace = false
			break
		}
	}
	if inPlace {
		for _, k := range dirty {
			j, _ := slices.BinarySearchFunc(old, k, byKey)
			i, _ := pv.Lookup(keyview.StringBytes(k))  // live: checked above
			so, _ := b.Make(topic, p, k, pv.Record(i)) // kept: its key was
			old[j] = so
		}
		clear(pv.Dirty)
		return append(out, old...)
	}
	next := make([]snapshot.SourceOffset, 0, len(old)+len(dirty))
	i := 0
	for _, k := range dirty {
		j, found := slices.BinarySearchFunc(old[i:], k, byKey)
		next = append(next, old[i:i+j]...)
		i += j
		if found {
			i++ // replaced or removed
		}
		idx, live := pv.Lookup(keyview.StringBytes(k))
		if !live {
			continue
		}
		so, kept := b.Make(topic, p, k, pv.Record(idx))
		if !kept {
			continue
		}
		if snapshot.PartitionFor(so.Key, nparts) != p && !slices.Contains(bp.Suspects, k) {
			bp.Suspects = append(bp.Suspects, k)
		}
		next = append(next, so)
	}
	next = append(next, old[i:]...)
	bp.Offsets = next
	clear(pv.Dirty)
	return append(out, next...)
}

// KeyEntry is a live key of a partition view and its record's index.
type KeyEntry struct {
	Key  string
	word uint64 // scratch for SortKeyEntries
	Rec  int32
}

// radixSortWords sorts es by word, stably: a least-significant-digit radix
// sort, one byte per pass, skipping the bytes all words share.
func radixSortWords(es []KeyEntry) {
	if len(es) <= 64 {
		slices.SortStableFunc(es, func(a, b KeyEntry) int { return cmp.Compare(a.word, b.word) })
		return
	}
	src, dst := es, make([]KeyEntry, len(es))
	for shift := 0; shift < 64; shift += 8 {
		// at[d+1] counts digit d, so d is an int: a byte 0xFF plus one
		// would wrap to 0 and the digit's words would land past the end.
		var at [257]int
		for i := range src {
			at[int(byte(src[i].word>>shift))+1]++
		}
		if at[int(byte(src[0].word>>shift))+1] == len(src) {
			continue // every word has this byte: nothing moves
		}
		for d := 1; d < len(at); d++ {
			at[d] += at[d-1]
		}
		for i := range src {
			d := byte(src[i].word >> shift)
			dst[at[d]] = src[i]
			at[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &es[0] {
		copy(es, src)
	}
}

// SortKeyEntries sorts es, whose keys all share their first depth bytes,
// by key bytes. The keys of one partition share long prefixes
// (["connector",{"filename":"/data/...), on which string comparisons
// would spend most of their time, so this is a most-significant-digit
// radix sort with 8-byte digits: it skips the bytes all keys share, sorts
// by the next 8 as one integer, and goes on within each run of keys that
// agree on them.
func SortKeyEntries(es []KeyEntry, depth int) {
	if len(es) < 2 {
		return
	}
	if len(es) <= 12 {
		slices.SortFunc(es, func(a, b KeyEntry) int { return strings.Compare(a.Key[depth:], b.Key[depth:]) })
		return
	}
	first := es[0].Key
	lcp := len(first) - depth
	for _, e := range es[1:] {
		n := depth
		for n < depth+lcp && n < len(e.Key) && e.Key[n] == first[n] {
			n++
		}
		lcp = n - depth
	}
	depth += lcp
	for i := range es {
		var w uint64
		for j := 0; j < 8; j++ {
			w <<= 8
			if depth+j < len(es[i].Key) {
				w |= uint64(es[i].Key[depth+j])
			}
		}
		es[i].word = w
	}
	radixSortWords(es)
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].word == es[i].word {
			j++
		}
		if j-i > 1 {
			// Keys that end within these 8 bytes are prefixes of the
			// others (the missing bytes counted as zeros): shortest first.
			run := es[i:j]
			slices.SortStableFunc(run, func(a, b KeyEntry) int {
				return cmp.Compare(min(len(a.Key), depth+9), min(len(b.Key), depth+9))
			})
			k := 0
			for k < len(run) && len(run[k].Key) <= depth+8 {
				k++
			}
			SortKeyEntries(run[k:], depth+8)
		}
		i = j
	}
}

func SortedPartitions(parts map[int32]*keyview.PartView) []int32 {
	ps := make([]int32, 0, len(parts))
	for p := range parts {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// DuplicateWarnings reports the keys of suspects (kept keys found off
// their murmur2 partition) that are live in more than one partition of v.
// A key that every partition holds on its murmur2 partition only cannot be
// live twice, so only suspects need looking at. Whether a key is kept
// depends on its bytes alone, so every copy of a kept key is kept too.
func DuplicateWarnings(v *keyview.TopicView, suspects []string) []string {
	return DuplicateWarningsIn(v, suspects, nil)
}

// ConfigState is the worker's view of the config topic, built by applying
// its records in log order as KafkaConfigBackingStore does.
type ConfigState struct {
	Connectors map[string]*connConfig
	states     map[string]string // target-state-<name>, kept apart: it may precede the config
	tasks      map[string]int    // commit-<name>
	Records    int64
}

type connConfig struct {
	Props map[string]string
	hash  string
}

func NewConfigState() *ConfigState {
	return &ConfigState{Connectors: map[string]*connConfig{}, states: map[string]string{}, tasks: map[string]int{}}
}

func (s *ConfigState) Apply(r keyview.LogRecord) {
	s.Records++
	key := string(r.Key)
	switch {
	case strings.HasPrefix(key, "connector-"):
		name := strings.TrimPrefix(key, "connector-")
		if r.Value == nil {
			delete(s.Connectors, name)
			delete(s.tasks, name)
			return
		}
		props, ok := ConnectorProperties(r.Value)
		if !ok {
			return // the worker logs and ignores it too
		}
		sum := sha256.Sum256(r.Value)
		s.Connectors[name] = &connConfig{Props: props, hash: hex.EncodeToString(sum[:])}
	case strings.HasPrefix(key, "target-state-"):
		name := strings.TrimPrefix(key, "target-state-")
		if r.Value == nil {
			delete(s.states, name)
			return
		}
		var v map[string]any
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return
		}
		st, ok := v["state.v2"].(string)
		if !ok {
			st, _ = v["state"].(string)
		}
		switch st {
		case snapshot.StateStarted, snapshot.StatePaused, snapshot.StateStopped:
			s.states[name] = st
		}
	case strings.HasPrefix(key, "commit-"):
		name := strings.TrimPrefix(key, "commit-")
		if r.Value == nil {
			return
		}
		var v struct {
			Tasks *int `json:"tasks"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Tasks == nil {
			return
		}
		s.tasks[name] = *v.Tasks
	}
}

// ConnectorProperties reads the properties of a connector-<name> record
// value, {"properties":{...}}; false when the worker would ignore it.
func ConnectorProperties(value []byte) (map[string]string, bool) {
	if props, ok := PlainProperties(value); ok {
		return props, true
	}
	var v struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(value, &v); err != nil || v.Properties == nil {
		return nil, false
	}
	props := make(map[string]string, len(v.Properties))
	for k, val := range v.Properties {
		if s, ok := val.(string); ok {
			props[k] = s
		} else if val != nil {
			props[k] = fmt.Sprint(val)
		}
	}
	return props, true
}

// PlainProperties reads a connector config record value as the worker
// writes nearly all of them, {"properties":{...}} with nothing but plain
// strings (see connectjson.PlainObjectEnd) as names and values, without
// encoding/json, which is slow for thousands of configs. Anything else, it
// reports false and the caller decodes the value in full; for what it
// accepts both give the same map.
func PlainProperties(v []byte) (map[string]string, bool) {
	const prefix = `{"properties":`
	if len(v) < len(prefix)+3 || string(v[:len(prefix)]) != prefix || v[len(v)-1] != '}' ||
		connectjson.PlainObjectEnd(v, len(prefix)) != len(v)-1 {
		return nil, false
	}
	obj := v[len(prefix) : len(v)-1]
	props := make(map[string]string, bytes.Count(obj, []byte(`":"`)))
	i := 1 // past '{'
	for i < len(obj)-1 {
		// "name":"value" then ',' or the final '}'; a plain object holds
		// no escapes and no white space.
		end := bytes.IndexByte(obj[i+1:], '"') + i + 1
		name := obj[i+1 : end]
		i = end + 2 // past '"' and ':'
		if obj[i] != '"' {
			return nil, false // a number, boolean or null: the full decode formats it
		}
		end = bytes.IndexByte(obj[i+1:], '"') + i + 1
		props[string(name)] = string(obj[i+1 : end])
		i = end + 2 // past '"' and ',' (or '}')
	}
	return props, true
}

// Connector is the worker's view of one configured connector.
func (s *ConfigState) Connector(name string) snapshot.Connector {
	cc := s.Connectors[name]
	// The props map is never changed once made (a new record makes a new
	// one), so the snapshot shares it.
	c := snapshot.Connector{Name: name, HasConfig: true, ConfigHash: cc.hash, Config: cc.Props, Tasks: -1, Type: snapshot.TypeSource}
	c.Class = cc.Props["connector.class"]
	if snapshot.ConnectorType(cc.Props) == snapshot.TypeSink {
		c.Type = snapshot.TypeSink
		c.Group = cc.Props["consumer.override.group.id"]
		if c.Group == "" {
			c.Group = snapshot.DefaultGroupPrefix + name
		}
	} else {
		c.OffsetsTopic = cc.Props["offsets.storage.topic"]
		c.ExactlyOnce = cc.Props["exactly.once.support"]
	}
	// No target state record means STARTED, as the worker reads it.
	c.TargetState = snapshot.StateStarted
	if st, ok := s.states[name]; ok {
		c.TargetState = st
	}
	if n, ok := s.tasks[name]; ok {
		c.Tasks = n
	}
	return c
}

// BuiltPart is the source offsets a Capture made of one partition, kept by
// an incremental Capturer so that the next Capture redoes only the keys
// written since.
type BuiltPart struct {
	Offsets []snapshot.SourceOffset // in key order
	// Suspects are kept keys found off their murmur2 partition (some may
	// be gone since: DuplicateWarnings checks).
	Suspects []string
}

// DuplicateWarningsIn is DuplicateWarnings for a capture whose early work
// let go of some partitions' views: liveIn says whether a key is live in
// partition p (nil: look it up in the view).
func DuplicateWarningsIn(v *keyview.TopicView, suspects []string, liveIn func(v *keyview.TopicView, p int32, pv *keyview.PartView, key string) bool) []string {
	if liveIn == nil {
		liveIn = func(_ *keyview.TopicView, _ int32, pv *keyview.PartView, key string) bool {
			_, ok := pv.Lookup(keyview.StringBytes(key))
			return ok
		}
	}
	var out []string
	done := make(map[string]bool, len(suspects))
	ps := SortedPartitions(v.Parts)
	for _, k := range suspects {
		if done[k] {
			continue
		}
		done[k] = true
		var parts []string
		for _, p := range ps {
			if liveIn(v, p, v.Parts[p], k) {
				parts = append(parts, fmt.Sprint(p))
			}
		}
		if len(parts) > 1 {
			out = append(out, fmt.Sprintf("key %s lives in partitions %s of topic %q; a worker's view of it is nondeterministic (written to a wrong partition by hand, or partitions were added)", k, strings.Join(parts, ", "), v.Name))
		}
	}
	return out
}
