// Package snapshot is the heart of offsetkeeper: the snapshot format, its
// capture from a Kafka cluster and the store that keeps snapshots in object
// storage.
//
// The two types to know are [Snapshot], one immutable, versioned document
// holding every Kafka Connect offset of a cluster at one moment, and [Store],
// which writes snapshots to a gocloud.dev/blob bucket as single, compressed,
// checksummed objects and reads them back, verifying the checksum every time.
// [Capture] and [Capturer] build a Snapshot from a live cluster.
//
// Guarantees:
//   - Source offset keys and values are kept as the exact bytes read from the
//     offsets topic. Nothing is ever decoded and re-encoded on the way back.
//   - A snapshot is listed only once it is whole: it is written with
//     IfNotExist in one object, and a failed write leaves nothing behind.
//   - Readers accept format versions MinVersion..Version and name the version
//     they found otherwise.
package snapshot

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Format versions this build reads; it writes Version.
const (
	Version    = 1
	MinVersion = 1
)

// Reasons a snapshot was taken.
const (
	ReasonManual    = "manual"
	ReasonScheduled = "scheduled"
	ReasonUndo      = "undo"
)

// Target states of a connector, as the Connect worker reads them.
const (
	StateStarted = "STARTED"
	StatePaused  = "PAUSED"
	StateStopped = "STOPPED"
)

// Connector types.
const (
	TypeSource  = "source"
	TypeSink    = "sink"
	TypeUnknown = "unknown"
)

// Topic roles.
const (
	RoleOffsets = "offsets"
	RoleConfig  = "config"
)

// Errors returned by this package. Callers compare with errors.Is.
var (
	// ErrNotFound: no snapshot with that ID exists in the store.
	ErrNotFound = errors.New("snapshot not found")
	// ErrChecksum: the stored object does not match its SHA-256.
	ErrChecksum = errors.New("snapshot checksum mismatch")
	// ErrCorrupt: the object or document cannot be decoded.
	ErrCorrupt = errors.New("snapshot is corrupt")
	// ErrUnsupportedVersion: the document has a format version this build does not read.
	ErrUnsupportedVersion = errors.New("unsupported snapshot format version")
	// ErrExists: a snapshot with that ID is already stored (snapshots are immutable).
	ErrExists = errors.New("snapshot already exists")
	// ErrEncrypted: the snapshot is encrypted and the Store has no Keeper.
	ErrEncrypted = errors.New("snapshot is encrypted")
	// ErrDecrypt: the Store's Keeper does not decrypt the snapshot (a wrong
	// key, or no permission to use a KMS key).
	ErrDecrypt = errors.New("snapshot does not decrypt with the key given")
)

// Snapshot is one capture of every Kafka Connect offset of a cluster. It is
// immutable once stored. Slices are sorted (see Normalize) so two captures
// of the same state encode to the same document, apart from ID and time.
type Snapshot struct {
	// Version is the format version; always first in the document.
	Version int `json:"version"`
	// ID is assigned by Store.Put when empty; IDs sort by creation time.
	ID             string    `json:"id"`
	CreatedAt      time.Time `json:"created_at"`
	ProgramVersion string    `json:"program_version"`
	// ClusterID is the Kafka cluster id the snapshot was read from.
	ClusterID string `json:"cluster_id"`
	// Reason is why it was taken: manual, scheduled or undo.
	Reason string `json:"reason"`
	// Scope lists the connectors captured when the capture was limited to
	// some (an undo snapshot, say); empty means the whole cluster.
	Scope []string `json:"scope,omitempty"`
	// Topics are the offsets and config topics read, with the offsets read up to.
	Topics     []Topic     `json:"topics"`
	Connectors []Connector `json:"connectors"`
	// SourceOffsets are the live keys of every offsets topic read.
	SourceOffsets []SourceOffset `json:"source_offsets"`
	// SinkGroups are the consumer groups of sink connectors.
	SinkGroups []SinkGroup `json:"sink_groups"`
	// Warnings are things an operator should know about this capture
	// (unparsed keys, a key present in two partitions, ...).
	Warnings []string `json:"warnings,omitempty"`
}

// Topic is one topic read for the snapshot.
type Topic struct {
	Name       string           `json:"name"`
	Role       string           `json:"role"`
	Partitions []TopicPartition `json:"partitions"`
}

// TopicPartition records the offsets a partition was read between:
// StartOffset is the log start, EndOffset the last stable offset taken when
// the capture started (exclusive).
type TopicPartition struct {
	Partition   int32 `json:"partition"`
	StartOffset int64 `json:"start_offset"`
	EndOffset   int64 `json:"end_offset"`
}

// Connector is what the config topic says about one connector, or what the
// offsets imply about a connector that has no config in this cluster.
type Connector struct {
	Name string `json:"name"`
	// Type is source, sink or unknown. Sinks are told by their required
	// topics or topics.regex setting.
	Type  string `json:"type"`
	Class string `json:"class,omitempty"`
	// HasConfig is false for a connector known only from its offsets or group.
	HasConfig bool `json:"has_config"`
	// ConfigHash is the SHA-256 of the connector's config record value bytes.
	ConfigHash string `json:"config_hash,omitempty"`
	// TargetState is STARTED, PAUSED or STOPPED, read as the worker reads it
	// (state.v2 first); empty without a config.
	TargetState string `json:"target_state,omitempty"`
	// Tasks is the task count of the latest commit-<name> record, -1 if none.
	Tasks int `json:"tasks"`
	// Group is the sink connector's resolved consumer group.
	Group string `json:"group,omitempty"`
	// OffsetsTopic is the connector's own offsets.storage.topic, if set.
	OffsetsTopic string `json:"offsets_topic,omitempty"`
	// ExactlyOnce is the connector's exactly.once.support setting, if set.
	ExactlyOnce string `json:"exactly_once_support,omitempty"`
}

// Stopped reports whether the worker considers the connector stopped: no
// config at all, or target state STOPPED with zero tasks.
func (c Connector) Stopped() bool {
	return !c.HasConfig || (c.TargetState == StateStopped && c.Tasks == 0)
}

// SourceOffset is one live key of an offsets topic: the last write of that
// exact key in that partition, when it was not a tombstone.
type SourceOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the record offset of the write that won.
	Offset int64 `json:"offset"`
	Key    Bytes `json:"key"`
	Value  Bytes `json:"value"`
	// Connector is the key's namespace; empty when the key is not
	// [name, {map}] (see ParseError).
	Connector string `json:"connector,omitempty"`
	// SourcePartition and SourceOffset are the decoded partition and offset
	// maps, informative only: the bytes above are what a restore writes.
	SourcePartition json.RawMessage `json:"source_partition,omitempty"`
	SourceOffset    json.RawMessage `json:"source_offset,omitempty"`
	// ParseError says why the key did not decode; the record is still kept.
	ParseError string `json:"parse_error,omitempty"`
}

// SinkGroup is one sink connector's consumer group.
type SinkGroup struct {
	Group string `json:"group"`
	// Connector is the connector whose group this is, if one is known.
	Connector string `json:"connector,omitempty"`
	// State is the group state (Empty, Stable, Dead, ...).
	State   string       `json:"state"`
	Members int          `json:"members"`
	Offsets []SinkOffset `json:"offsets"`
}

// SinkOffset is one committed group offset: the next offset to read.
type SinkOffset struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata,omitempty"`
}

// Bytes holds exact bytes losslessly in JSON: a JSON string when they are
// valid UTF-8, {"base64":"..."} otherwise, null for nil.
type Bytes []byte

// MarshalJSON implements json.Marshaler.
func (b Bytes) MarshalJSON() ([]byte, error) {
	return b.appendJSON(nil), nil
}

// appendJSON appends the JSON form of b to dst, exactly as encoding/json
// writes it with HTML escaping off.
func (b Bytes) appendJSON(dst []byte) []byte {
	switch {
	case b == nil:
		return append(dst, "null"...)
	case utf8.Valid(b):
		return appendString(dst, b)
	}
	dst = append(dst, `{"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, `"}`...)
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*b = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = Bytes(s)
		if *b == nil {
			*b = Bytes{}
		}
		return nil
	case len(data) > 0 && data[0] == '{':
		var o struct {
			Base64 *string `json:"base64"`
		}
		if err := json.Unmarshal(data, &o); err != nil {
			return err
		}
		if o.Base64 == nil {
			return errors.New(`bytes object without "base64"`)
		}
		raw, err := base64.StdEncoding.DecodeString(*o.Base64)
		if err != nil {
			return fmt.Errorf("decode base64 bytes: %w", err)
		}
		if raw == nil {
			raw = []byte{}
		}
		*b = raw
		return nil
	}
	return fmt.Errorf("bytes must be a string, {\"base64\":...} or null, got %.20q", data)
}

// Normalize sorts every slice into its canonical order: connectors and
// groups by name, source offsets by topic, partition and key bytes, sink
// offsets by topic and partition. Capture calls it; so may anyone building
// a Snapshot by hand.
func (s *Snapshot) Normalize() {
	sortIfNeeded(s.Topics, func(a, b Topic) int {
		if a.Role != b.Role {
			return -strings.Compare(a.Role, b.Role) // offsets before config
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, t := range s.Topics {
		sortIfNeeded(t.Partitions, func(a, b TopicPartition) int { return cmp.Compare(a.Partition, b.Partition) })
	}
	sortIfNeeded(s.Connectors, func(a, b Connector) int { return strings.Compare(a.Name, b.Name) })
	sortIfNeeded(s.SourceOffsets, func(a, b SourceOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		return bytes.Compare(a.Key, b.Key)
	})
	sortIfNeeded(s.SinkGroups, func(a, b SinkGroup) int { return strings.Compare(a.Group, b.Group) })
	for _, g := range s.SinkGroups {
		sortIfNeeded(g.Offsets, func(a, b SinkOffset) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return cmp.Compare(a.Partition, b.Partition)
		})
	}
}

// sortIfNeeded sorts s by cmp unless it is sorted already: a capture
// builds its slices in order, and checking is much cheaper than sorting.
func sortIfNeeded[S ~[]E, E any](s S, cmp func(a, b E) int) {
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortFunc(s, cmp)
	}
}

// Connector returns the named connector, or false.
func (s *Snapshot) Connector(name string) (Connector, bool) {
	for _, c := range s.Connectors {
		if c.Name == name {
			return c, true
		}
	}
	return Connector{}, false
}

// SourceOffsetsOf returns the source offsets whose key names the connector.
func (s *Snapshot) SourceOffsetsOf(connector string) []SourceOffset {
	var out []SourceOffset
	for _, o := range s.SourceOffsets {
		if o.Connector == connector {
			out = append(out, o)
		}
	}
	return out
}

// SinkGroupOf returns the connector's sink group, or false.
func (s *Snapshot) SinkGroupOf(connector string) (SinkGroup, bool) {
	for _, g := range s.SinkGroups {
		if g.Connector == connector {
			return g, true
		}
	}
	return SinkGroup{}, false
}

// Unparsed counts the source keys that are not [name, {map}].
func (s *Snapshot) Unparsed() int {
	n := 0
	for _, o := range s.SourceOffsets {
		if o.Connector == "" {
			n++
		}
	}
	return n
}

// Encode writes the snapshot as one JSON document. HTML characters are not
// escaped, so the document reads as the bytes it holds.
//
// The document is exactly what encoding/json writes for a Snapshot (with
// SetEscapeHTML(false)), field order and all, but it is streamed to w in
// pieces of about encodeChunk bytes: the source offsets and sink groups,
// nearly all of a large snapshot, are written by hand without reflection
// and never held whole in memory.
func (s *Snapshot) Encode(w io.Writer) error {
	e := docEncoder{w: w, buf: make([]byte, 0, encodeChunk+4096)}
	if err := e.snapshot(s); err != nil {
		return fmt.Errorf("encode snapshot %s: %w", s.ID, err)
	}
	return nil
}

// encodeChunk is the size of the pieces Encode writes.
const encodeChunk = 64 << 10

// docEncoder streams a Snapshot document.
type docEncoder struct {
	w   io.Writer
	buf []byte
}

// flush writes out buf once it holds encodeChunk bytes, or always when
// force is set.
func (e *docEncoder) flush(force bool) error {
	if len(e.buf) < encodeChunk && !force {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	return err
}

// value appends v as encoding/json writes it, HTML not escaped.
func (e *docEncoder) value(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	e.buf = append(e.buf, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
	return nil
}

func (e *docEncoder) field(name string) {
	e.buf = append(e.buf, ',', '"')
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, '"', ':')
}

func (e *docEncoder) snapshot(s *Snapshot) error {
	e.buf = append(e.buf, `{"version":`...)
	e.buf = strconv.AppendInt(e.buf, int64(s.Version), 10)
	e.field("id")
	e.buf = appendString(e.buf, s.ID)
	e.field("created_at")
	if err := e.value(s.CreatedAt); err != nil {
		return err
	}
	e.field("program_version")
	e.buf = appendString(e.buf, s.ProgramVersion)
	e.field("cluster_id")
	e.buf = appendString(e.buf, s.ClusterID)
	e.field("reason")
	e.buf = appendString(e.buf, s.Reason)
	if len(s.Scope) > 0 {
		e.field("scope")
		if err := e.value(s.Scope); err != nil {
			return err
		}
	}
	e.field("topics")
	if err := e.value(s.Topics); err != nil {
		return err
	}
	e.field("connectors")
	if err := e.value(s.Connectors); err != nil {
		return err
	}
	e.field("source_offsets")
	if s.SourceOffsets == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, '[')
		for i := range s.SourceOffsets {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			var err error
			if e.buf, err = s.SourceOffsets[i].appendJSON(e.buf); err != nil {
				return err
			}
			if err := e.flush(false); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	}
	e.field("sink_groups")
	if s.SinkGroups == nil {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = append(e.buf, '[')
		for i := range s.SinkGroups {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = s.SinkGroups[i].appendJSON(e.buf)
			if err := e.flush(false); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	}
	if len(s.Warnings) > 0 {
		e.field("warnings")
		if err := e.value(s.Warnings); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}', '\n')
	return e.flush(true)
}

// appendJSON appends o as encoding/json writes it (HTML not escaped).
func (o *SourceOffset) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"topic":`...)
	dst = appendString(dst, o.Topic)
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(o.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, o.Offset, 10)
	dst = append(dst, `,"key":`...)
	dst = o.Key.appendJSON(dst)
	dst = append(dst, `,"value":`...)
	dst = o.Value.appendJSON(dst)
	if o.Connector != "" {
		dst = append(dst, `,"connector":`...)
		dst = appendString(dst, o.Connector)
	}
	var err error
	if len(o.SourcePartition) > 0 {
		dst = append(dst, `,"source_partition":`...)
		if dst, err = appendRaw(dst, o.SourcePartition); err != nil {
			return dst, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
		}
	}
	if len(o.SourceOffset) > 0 {
		dst = append(dst, `,"source_offset":`...)
		if dst, err = appendRaw(dst, o.SourceOffset); err != nil {
			return dst, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
		}
	}
	if o.ParseError != "" {
		dst = append(dst, `,"parse_error":`...)
		dst = appendString(dst, o.ParseError)
	}
	return append(dst, '}'), nil
}

// appendJSON appends g as encoding/json writes it (HTML not escaped).
func (g *SinkGroup) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"group":`...)
	dst = appendString(dst, g.Group)
	if g.Connector != "" {
		dst = append(dst, `,"connector":`...)
		dst = appendString(dst, g.Connector)
	}
	dst = append(dst, `,"state":`...)
	dst = appendString(dst, g.State)
	dst = append(dst, `,"members":`...)
	dst = strconv.AppendInt(dst, int64(g.Members), 10)
	dst = append(dst, `,"offsets":`...)
	if g.Offsets == nil {
		return append(dst, "null}"...)
	}
	dst = append(dst, '[')
	for i, o := range g.Offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"topic":`...)
		dst = appendString(dst, o.Topic)
		dst = append(dst, `,"partition":`...)
		dst = strconv.AppendInt(dst, int64(o.Partition), 10)
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, o.Offset, 10)
		dst = append(dst, `,"leader_epoch":`...)
		dst = strconv.AppendInt(dst, int64(o.LeaderEpoch), 10)
		if o.Metadata != "" {
			dst = append(dst, `,"metadata":`...)
			dst = appendString(dst, o.Metadata)
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// appendRaw appends a json.RawMessage as encoding/json writes it:
// compacted, and an error if it is not valid JSON. The usual flat object
// without white space is appended as it is.
func appendRaw(dst, raw []byte) ([]byte, error) {
	if flatObject(raw, 0) == len(raw) {
		return append(dst, raw...), nil
	}
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, raw); err != nil {
		return dst, err
	}
	return b.Bytes(), nil
}

// appendString appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping off: '"', '\\' and control characters escaped
// (\b, \f, \n, \r, \t or \u00XX), invalid UTF-8 as \ufffd, U+2028 and
// U+2029 as \u2028 and \u2029, everything else as it is.
func appendString[T ~[]byte | ~string](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		// As encoding/json: decode from a copy of at most 4 bytes, which
		// stays on the stack for either type.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Decode reads one JSON snapshot document. It rejects a version outside
// MinVersion..Version with ErrUnsupportedVersion naming the version found,
// before decoding anything else.
func Decode(data []byte) (*Snapshot, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: decode document: %v", ErrCorrupt, err)
	}
	if head.Version == nil {
		return nil, fmt.Errorf("%w: document has no version field", ErrCorrupt)
	}
	if v := *head.Version; v < MinVersion || v > Version {
		return nil, fmt.Errorf("%w %d: this build reads versions %d to %d; upgrade offsetkeeper", ErrUnsupportedVersion, v, MinVersion, Version)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: decode version %d document: %v", ErrCorrupt, *head.Version, err)
	}
	return &s, nil
}

// Filter returns a copy of the snapshot holding only the named connectors:
// their entries, source offsets and sink groups. Scope records the names.
func (s *Snapshot) Filter(connectors []string) *Snapshot {
	keep := make(map[string]bool, len(connectors))
	for _, c := range connectors {
		keep[c] = true
	}
	out := *s
	out.Connectors, out.SourceOffsets, out.SinkGroups = nil, []SourceOffset{}, []SinkGroup{}
	for _, c := range s.Connectors {
		if keep[c.Name] {
			out.Connectors = append(out.Connectors, c)
		}
	}
	for _, o := range s.SourceOffsets {
		if o.Connector != "" && keep[o.Connector] {
			out.SourceOffsets = append(out.SourceOffsets, o)
		}
	}
	for _, g := range s.SinkGroups {
		if g.Connector != "" && keep[g.Connector] {
			out.SinkGroups = append(out.SinkGroups, g)
		}
	}
	out.Scope = append([]string(nil), connectors...)
	sort.Strings(out.Scope)
	return &out
}
