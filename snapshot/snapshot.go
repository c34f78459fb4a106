// Package snapshot is the snapshot format: the document, its encoding and
// decoding, what a store lists of it, and the retention policy. It holds
// no Kafka client and no bucket.
//
// The type to know is [Snapshot], one immutable, versioned document holding
// every Kafka Connect offset of a cluster at one moment. [Info] is what a
// store lists of one without reading it, and [ApplyPolicy] the retention
// policy over a store's Info list, a pure function that the daemon and the
// prune command both call. [SourceTable] is the one form a Snapshot holds
// its source offsets in: full (SourceOffset values), compact (what a
// restore reads), or streamed from a capture through an [OffsetStream]
// into a store without being built.
//
// The rooms around it: snapshot/capture reads a cluster into snapshots and
// journal entries (snapshot/internal/build builds them, for capture and
// the journal's replay); snapshot/store keeps snapshots and the journal in
// a gocloud.dev/blob bucket (docs/format.md, docs/journal.md).
//
// Guarantees:
//   - Source offset keys and values are kept as the exact bytes read from the
//     offsets topic. Nothing is ever decoded and re-encoded on the way back.
//   - Decode accepts format versions MinVersion..Version and names the
//     version it found otherwise.
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
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
)

// Format versions this build reads; it writes Version.
const (
	Version    = 1
	MinVersion = 1
)

// CapturedConnectREST is Snapshot.Captured of a snapshot read through the
// Connect REST API (GET /connectors/{name}/offsets) instead of the Kafka
// topics. Such a snapshot has no Topics; each source offset is one
// partition Connect listed, its Key Connect's normalised key
// (connectjson.CanonicalKey: the bytes Connect's GET looks up and PATCH
// writes, not necessarily those a task wrote), its Value the offset as
// Connect renders it (connectjson.RESTMap, or null when Connect listed
// the partition without an offset), its Topic the connector's own
// offsets.storage.topic ("" for the worker's) and its Partition
// NoPartition. Sink offsets are what Connect listed for the connector,
// under its group. It is restored through Connect only.
const CapturedConnectREST = "connect-rest"

// NoPartition is SourceOffset.Partition in a CapturedConnectREST
// snapshot: Connect's REST API does not say which partition of the
// offsets topic holds a key.
const NoPartition int32 = -1

// Reasons a snapshot was taken.
const (
	ReasonManual    = "manual"
	ReasonScheduled = "scheduled"
	ReasonUndo      = "undo"
)

// Kinds of snapshot, by what they cover (Info.Kind, Snapshot.Kind).
const (
	// KindFull covers the whole cluster: every connector.
	KindFull = "full"
	// KindScoped covers the connectors a capture was limited to
	// (snapshot --connector); Scope names them.
	KindScoped = "scoped"
	// KindUndo is taken by a restore before it writes, of the connectors
	// it is about to write; restoring it reverts that restore.
	KindUndo = "undo"
)

// KindOf is the kind of a snapshot taken for reason over scope.
func KindOf(reason string, scope []string) string {
	switch {
	case reason == ReasonUndo:
		return KindUndo
	case len(scope) > 0:
		return KindScoped
	}
	return KindFull
}

// Kind returns what s covers: KindUndo for an undo snapshot, KindScoped
// for a capture limited to some connectors (Scope), KindFull otherwise.
func (s *Snapshot) Kind() string { return KindOf(s.Reason, s.Scope) }

// ViaREST reports whether s was captured through the Connect REST API
// (Captured is CapturedConnectREST).
func (s *Snapshot) ViaREST() bool { return s != nil && s.Captured == CapturedConnectREST }

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
	// ErrAmbiguous: an ID prefix matches several stored snapshots.
	ErrAmbiguous = errors.New("ambiguous snapshot ID prefix")
	// ErrStoreNotFound: a local store directory does not exist (see
	// OpenExistingStore).
	ErrStoreNotFound = errors.New("store does not exist")
	// ErrExists: a snapshot with that ID is already stored (snapshots are immutable).
	ErrExists = errors.New("snapshot already exists")
	// ErrEncrypted: the snapshot is encrypted and the Store has no Keeper.
	ErrEncrypted = errors.New("snapshot is encrypted")
	// ErrDecrypt: the Store's Keeper does not decrypt the snapshot (a wrong
	// key, or no permission to use a KMS key).
	ErrDecrypt = errors.New("snapshot does not decrypt with the key given")
	// ErrStale: a streamed snapshot (Capturer.CaptureStreamed) was encoded
	// after its incremental Capturer captured again, so the partition views
	// it reads from have moved on; encode (Put) one before the next Capture.
	ErrStale = errors.New("streamed snapshot is stale: its Capturer captured again; encode (Put) a streamed snapshot before the next Capture")
	// ErrNoCredentials: the cloud store's SDK found no usable credentials
	// (none set, a missing key file, an instance metadata service that does
	// not answer); the message names what to set.
	ErrNoCredentials = errors.New("no usable cloud credentials")
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
	// Captured says how the offsets were read: "" from the Kafka topics
	// (the offsets topics and the sink groups, exact bytes), or
	// CapturedConnectREST through the Connect REST API (see
	// CapturedConnectREST for what such a snapshot holds).
	Captured string `json:"captured,omitempty"`
	// ConnectURL names the Connect REST API a CapturedConnectREST
	// snapshot was read through (the worker that answered).
	ConnectURL string `json:"connect_url,omitempty"`
	// Topics are the offsets and config topics read, with the offsets read up to.
	Topics     []Topic     `json:"topics"`
	Connectors []Connector `json:"connectors"`
	// src holds the source offsets, the live keys of every offsets topic
	// read, encoded as "source_offsets" (a nil src as null): read them
	// with SourceTable, set them with SetSourceOffsets.
	src *SourceTable
	// SinkGroups are the consumer groups of sink connectors.
	SinkGroups []SinkGroup `json:"sink_groups"`
	// SinkTopics are the sink topics the sink groups hold offsets for, as
	// they were at capture (sinkguard.go); empty in older snapshots.
	SinkTopics []SinkTopic `json:"sink_topics,omitempty"`
	// Warnings are things an operator should know about this capture
	// (unparsed keys, a key present in two partitions, ...).
	Warnings []string `json:"warnings,omitempty"`

	// Unread names each sink connector's group the capture could not
	// classify or read: its offsets are not in SinkGroups, so a restore
	// of this snapshot leaves that connector's sink offsets as they are.
	// Absent when every group was read (and in snapshots older than the
	// field).
	Unread []UnreadGroup `json:"unread_groups,omitempty"`
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

	// PluginVersion is the version of the connector's plugin on the
	// workers, when the capture could ask Connect's REST API (GET
	// /connector-plugins); "" when unknown, and in older snapshots.
	PluginVersion string `json:"plugin_version,omitempty"`

	// HasConfig is false for a connector known only from its offsets or group.
	HasConfig bool `json:"has_config"`
	// ConfigHash is the SHA-256 of the connector's config record value bytes.
	ConfigHash string `json:"config_hash,omitempty"`
	// Config is the connector's whole config as the config topic holds it
	// (the properties of its connector-<name> record; ConfigProvider
	// placeholders such as ${file:...} stay placeholders); nil without a
	// config, and in snapshots taken before configs were kept. It is as
	// sensitive as the config topic: show masks what looks like a secret.
	Config map[string]string `json:"config,omitempty"`
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
// config at all, or target state STOPPED with zero tasks. No task commit
// at all (Tasks -1) counts as zero, as the herder's taskCount does: a
// Connector created STOPPED (POST /connectors with initial_state) never
// had any.
func (c Connector) Stopped() bool {
	return !c.HasConfig || (c.TargetState == StateStopped && c.Tasks <= 0)
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

	// Type is the group's type as the broker names it: "classic" (JoinGroup,
	// described by DescribeGroups) or "consumer" (KIP-848, Kafka 4.0+,
	// described by ConsumerGroupDescribe). Empty in snapshots taken before
	// the field: those groups were read as classic.
	Type string `json:"type,omitempty"`

	// State is the group state (Empty, Stable, Dead, ...).
	State   string       `json:"state"`
	Members int          `json:"members"`
	Offsets []SinkOffset `json:"offsets"`

	// What the sink guard needs (sinkguard.go), optional: ProtocolType
	// is the classic group's protocol type ("consumer" for a Connect
	// sink, "" for a group that only admin commits made), and EmptySince
	// when the group became Empty, nil when nobody knows.
	ProtocolType string     `json:"protocol_type,omitempty"`
	EmptySince   *time.Time `json:"empty_since,omitempty"`
}

// UnreadGroup is a sink connector's group a capture could not read.
type UnreadGroup struct {
	Group string `json:"group"`
	// Connector is the sink connector whose group it is, if known.
	Connector string `json:"connector,omitempty"`
	// Type is the group type the broker listed, if any.
	Type string `json:"type,omitempty"`
	// Reason says what failed and what to do.
	Reason string `json:"reason"`
}

// SinkOffset is one committed group offset: the next offset to read.
type SinkOffset struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata,omitempty"`
	// LastConsumed is the last record the group consumed before Offset,
	// read at capture (see LastConsumed); nil when it was not read (an
	// offset of 0, a snapshot older than the field, or a fetch that
	// failed, which the snapshot's Warnings name).
	LastConsumed *LastConsumed `json:"last_consumed,omitempty"`
}

// LastConsumed is the record before a sink partition's committed offset:
// the last one the connector consumed. Its timestamp lets a restore into
// another cluster find the same record there (restore --translate
// timestamp).
type LastConsumed struct {
	// Offset is the record's offset (Offset-1 of the committed offset
	// unless compaction removed that record), or -1 when no consumed
	// record is left in the log: the committed offset is at or before the
	// partition's log start.
	Offset int64 `json:"offset"`
	// Timestamp is the record's timestamp in Unix milliseconds.
	Timestamp int64 `json:"timestamp"`
	// LogAppendTime is set when the topic stamps records with the broker's
	// append time (message.timestamp.type=LogAppendTime) instead of the
	// producer's CreateTime: such timestamps do not survive a copy.
	LogAppendTime bool `json:"log_append_time,omitempty"`
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
		return AppendString(dst, b)
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
	if s.src != nil && s.src.full {
		sortSourceOffsets(s.src.offs)
	}
	sortIfNeeded(s.SinkGroups, func(a, b SinkGroup) int { return strings.Compare(a.Group, b.Group) })
	sortIfNeeded(s.SinkTopics, func(a, b SinkTopic) int { return strings.Compare(a.Name, b.Name) })
	for _, g := range s.SinkGroups {
		sortIfNeeded(g.Offsets, func(a, b SinkOffset) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return cmp.Compare(a.Partition, b.Partition)
		})
	}
}

// sortSourceOffsets sorts offs by topic, partition and key bytes.
func sortSourceOffsets(offs []SourceOffset) {
	sortIfNeeded(offs, func(a, b SourceOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
			return c
		}
		return bytes.Compare(a.Key, b.Key)
	})
}

// sortIfNeeded sorts s by cmp unless it is sorted already: a capture
// builds its slices in order, and checking is much cheaper than sorting.
func sortIfNeeded[S ~[]E, E any](s S, cmp func(a, b E) int) {
	if !slices.IsSortedFunc(s, cmp) {
		slices.SortFunc(s, cmp)
	}
}

// PartitionCount is the partition count s recorded for topic, 0 if none
// (or s is nil).
func (s *Snapshot) PartitionCount(topic string) int32 {
	if s == nil {
		return 0
	}
	for _, t := range s.Topics {
		if t.Name == topic {
			return int32(len(t.Partitions))
		}
	}
	return 0
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
	for _, o := range s.SourceTable().All() {
		if o.Connector == connector {
			out = append(out, *o)
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
func (s *Snapshot) Unparsed() int { return s.SourceTable().Unparsed() }

// Encode writes the snapshot as one JSON document. HTML characters are not
// escaped, so the document reads as the bytes it holds.
//
// The document is exactly what encoding/json writes for a Snapshot (with
// SetEscapeHTML(false)), field order and all, but it is streamed to w in
// pieces of about encodeChunk bytes: the source offsets and sink groups,
// nearly all of a large snapshot, are written by hand without reflection
// and never held whole in memory.
func (s *Snapshot) Encode(w io.Writer) error { return s.encode(w, PieceSizes{}) }

// EncodeInPieces is Encode with the document cut into pieces of keys
// source offsets and groups sink groups: the same bytes whatever the sizes,
// which the tests check on small documents.
func EncodeInPieces(s *Snapshot, w io.Writer, keys, groups int) error {
	return s.encode(w, PieceSizes{keys, groups})
}

func (s *Snapshot) encode(w io.Writer, z PieceSizes) error {
	if s.CompactOffsets() {
		return fmt.Errorf("encode snapshot %s: %w", s.ID, ErrCompact)
	}
	ps, err := s.Pieces(z)
	if err != nil {
		return fmt.Errorf("encode snapshot %s: %w", s.ID, err)
	}
	names := make(map[string]string)
	buf := make([]byte, 0, encodeChunk+4096)
	for i := range ps {
		if buf, err = ps[i].AppendTo(buf, names); err != nil {
			return fmt.Errorf("encode snapshot %s: %w", s.ID, err)
		}
		if len(buf) >= encodeChunk || i == len(ps)-1 {
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("encode snapshot %s: %w", s.ID, err)
			}
			buf = buf[:0]
		}
	}
	return nil
}

// encodeChunk is the size of the pieces Encode writes.
const encodeChunk = 64 << 10

// docEncoder appends the parts of a Snapshot document that are not
// source offsets or sink groups.
type docEncoder struct {
	buf []byte
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

// head appends the document up to and including "source_offsets":.
func (e *docEncoder) head(s *Snapshot) error {
	e.buf = append(e.buf, `{"version":`...)
	e.buf = strconv.AppendInt(e.buf, int64(s.Version), 10)
	e.field("id")
	e.buf = AppendString(e.buf, s.ID)
	e.field("created_at")
	if err := e.value(s.CreatedAt); err != nil {
		return err
	}
	e.field("program_version")
	e.buf = AppendString(e.buf, s.ProgramVersion)
	e.field("cluster_id")
	e.buf = AppendString(e.buf, s.ClusterID)
	e.field("reason")
	e.buf = AppendString(e.buf, s.Reason)
	if len(s.Scope) > 0 {
		e.field("scope")
		if err := e.value(s.Scope); err != nil {
			return err
		}
	}
	if s.Captured != "" {
		e.field("captured")
		e.buf = AppendString(e.buf, s.Captured)
	}
	if s.ConnectURL != "" {
		e.field("connect_url")
		e.buf = AppendString(e.buf, s.ConnectURL)
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
	return nil
}

// tail appends the document from the end of "sink_groups" on.
func (e *docEncoder) tail(s *Snapshot) error {
	if len(s.SinkTopics) > 0 {
		e.field("sink_topics")
		if err := e.value(s.SinkTopics); err != nil {
			return err
		}
	}
	if len(s.Warnings) > 0 {
		e.field("warnings")
		if err := e.value(s.Warnings); err != nil {
			return err
		}
	}
	if len(s.Unread) > 0 {
		e.field("unread_groups")
		if err := e.value(s.Unread); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}', '\n')
	return nil
}

// AppendJSON appends o as encoding/json writes it (HTML not escaped).
func (o *SourceOffset) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"topic":`...)
	dst = AppendString(dst, o.Topic)
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
		dst = AppendString(dst, o.Connector)
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
		dst = AppendString(dst, o.ParseError)
	}
	return append(dst, '}'), nil
}

// appendJSON appends g as encoding/json writes it (HTML not escaped).
func (g *SinkGroup) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"group":`...)
	dst = AppendString(dst, g.Group)
	if g.Connector != "" {
		dst = append(dst, `,"connector":`...)
		dst = AppendString(dst, g.Connector)
	}
	if g.Type != "" {
		dst = append(dst, `,"type":`...)
		dst = AppendString(dst, g.Type)
	}
	dst = append(dst, `,"state":`...)
	dst = AppendString(dst, g.State)
	dst = append(dst, `,"members":`...)
	dst = strconv.AppendInt(dst, int64(g.Members), 10)
	dst = append(dst, `,"offsets":`...)
	if g.Offsets == nil {
		return append(g.appendGuardJSON(append(dst, "null"...)), '}')
	}
	dst = append(dst, '[')
	for i, o := range g.Offsets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"topic":`...)
		dst = AppendString(dst, o.Topic)
		dst = append(dst, `,"partition":`...)
		dst = strconv.AppendInt(dst, int64(o.Partition), 10)
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, o.Offset, 10)
		dst = append(dst, `,"leader_epoch":`...)
		dst = strconv.AppendInt(dst, int64(o.LeaderEpoch), 10)
		if o.Metadata != "" {
			dst = append(dst, `,"metadata":`...)
			dst = AppendString(dst, o.Metadata)
		}
		if lc := o.LastConsumed; lc != nil {
			dst = append(dst, `,"last_consumed":{"offset":`...)
			dst = strconv.AppendInt(dst, lc.Offset, 10)
			dst = append(dst, `,"timestamp":`...)
			dst = strconv.AppendInt(dst, lc.Timestamp, 10)
			if lc.LogAppendTime {
				dst = append(dst, `,"log_append_time":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	return append(g.appendGuardJSON(dst), '}')
}

// appendRaw appends a json.RawMessage as encoding/json writes it:
// compacted, and an error if it is not valid JSON. The usual flat object
// without white space is appended as it is.
func appendRaw(dst, raw []byte) ([]byte, error) {
	if connectjson.PlainObjectEnd(raw, 0) == len(raw) {
		return append(dst, raw...), nil
	}
	b := bytes.NewBuffer(dst)
	if err := json.Compact(b, raw); err != nil {
		return dst, err
	}
	return b.Bytes(), nil
}

// plain8 reports whether the 8 bytes of s at i are printable ASCII other
// than '"' and '\\', which appendString copies as they are; it tests them
// at once, as one word.
func plain8[T ~[]byte | ~string](s T, i int) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
	// The classic "has a zero byte" and "has a byte below n" tests: exact
	// as to whether any byte matches, which is all that is asked here.
	q, b := w^(ones*'"'), w^(ones*'\\')
	control := (w - ones*0x20) &^ w               // a byte below 0x20
	quote := (q - ones) &^ q                      // a '"'
	backslash := (b - ones) &^ b                  // a '\\'
	return (control|quote|backslash|w)&highs == 0 // w: a byte of 0x80 or more
}

// AppendString appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping off: '"', '\\' and control characters escaped
// (\b, \f, \n, \r, \t or \u00XX), invalid UTF-8 as \ufffd, U+2028 and
// U+2029 as \u2028 and \u2029, everything else as it is.
func AppendString[T ~[]byte | ~string](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plain8(s, i) {
			i += 8
			continue
		}
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
	if s, ok := decodeFast(data); ok {
		return s, nil
	}
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
	if err := s.decodeJSON(data); err != nil {
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
	out.Connectors, out.SinkGroups = nil, []SinkGroup{}
	if s.CompactOffsets() {
		out.src = s.src.filter(keep)
	} else {
		// A filtered copy holds its source offsets (none of a stream).
		out.SetSourceOffsets(s.src.filterFull(keep))
	}
	for _, c := range s.Connectors {
		if keep[c.Name] {
			out.Connectors = append(out.Connectors, c)
		}
	}
	for _, g := range s.SinkGroups {
		if g.Connector != "" && keep[g.Connector] {
			out.SinkGroups = append(out.SinkGroups, g)
		}
	}
	out.SinkTopics = sinkTopicsOf(s.SinkTopics, out.SinkGroups)
	out.Scope = append([]string(nil), connectors...)
	sort.Strings(out.Scope)
	return &out
}

// decodeFast decodes a document as Encode writes it, giving exactly what
// the encoding/json path of Decode gives, or reports false to leave the
// document to that path (anything unusual, any error).
//
// The source offsets, nearly all of a large document, are read by a strict
// parser of the form Encode writes (fields in their order, no white
// space), which validates what it reads and copies keys and values into a
// few large chunks. The rest of the document, with the source offsets
// replaced by [], goes through encoding/json: a document is valid JSON
// exactly when both parts are, since the array stands where [] stands.
// A top-level field that encoding/json would also match to version or
// source_offsets (another case, an escape, a duplicate) sends the whole
// document to the slow path.
func decodeFast(data []byte) (*Snapshot, bool) {
	s, _, ok := decodeFastAt(data)
	return s, ok
}

// decodeFastAt is decodeFast, also returning where the source offsets
// array starts in data.
func decodeFastAt(data []byte) (*Snapshot, int, bool) {
	var (
		version     = -1
		soStart     = -1
		soEnd       int
		sgStart     = -1
		sgEnd       int
		seenVersion bool
		offsets     []SourceOffset
		groups      []SinkGroup
		ok          bool
	)
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, 0, false
	}
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		if data[i] != '"' {
			return nil, 0, false
		}
		end := skipString(data, i)
		if end < 0 {
			return nil, 0, false
		}
		name := data[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return nil, 0, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, 0, false
		}
		start := skipSpace(data, i+1)
		switch {
		case string(name) == "source_offsets" && soStart < 0:
			// Parsed where it stands: nearly all of the document.
			if offsets, i, ok = decodeSourceOffsets(data, start); !ok {
				return nil, 0, false
			}
		case string(name) == "sink_groups" && sgStart < 0:
			// So are the sink groups: 100,000 offsets took encoding/json
			// longer than the 200,000 source offsets take here.
			if groups, i, ok = decodeSinkGroups(data, start); !ok {
				return nil, 0, false
			}
		default:
			if i = skipValue(data, start, 0); i < 0 {
				return nil, 0, false
			}
		}
		switch {
		case bytes.EqualFold(name, []byte("version")):
			v, err := strconv.Atoi(string(data[start:i]))
			if seenVersion || string(name) != "version" || err != nil || data[start] == '-' || data[start] == '+' {
				return nil, 0, false
			}
			seenVersion, version = true, v
		case bytes.EqualFold(name, []byte("source_offsets")):
			if soStart >= 0 || string(name) != "source_offsets" {
				return nil, 0, false
			}
			soStart, soEnd = start, i
		case bytes.EqualFold(name, []byte("sink_groups")):
			if sgStart >= 0 || string(name) != "sink_groups" {
				return nil, 0, false
			}
			sgStart, sgEnd = start, i
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if version < MinVersion || version > Version || soStart < 0 || sgStart < 0 {
		return nil, 0, false
	}
	// encoding/json reads the rest, the two arrays replaced by [] (null
	// stays null).
	type cut struct {
		start, end int
		null       bool
	}
	cuts := []cut{{soStart, soEnd, offsets == nil}, {sgStart, sgEnd, groups == nil}}
	if sgStart < soStart {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	rest := make([]byte, 0, len(data)-(soEnd-soStart)-(sgEnd-sgStart)+8)
	at := 0
	for _, c := range cuts {
		rest = append(rest, data[at:c.start]...)
		if c.null {
			rest = append(rest, "null"...)
		} else {
			rest = append(rest, "[]"...)
		}
		at = c.end
	}
	rest = append(rest, data[at:]...)
	var s Snapshot
	if s.decodeJSON(rest) != nil {
		return nil, 0, false
	}
	s.SetSourceOffsets(offsets)
	s.SinkGroups = groups
	return &s, soStart, true
}

// decodeSinkGroups reads the sink groups array starting at b[i] as
// SinkGroup.appendJSON writes it, returning the index past it; anything
// else is false, for encoding/json to read.
func decodeSinkGroups(b []byte, i int) ([]SinkGroup, int, bool) {
	d := OffsetDecoder{b: b, i: i, interned: map[string]string{}}
	if d.lit("null") {
		return nil, d.i, true
	}
	if !d.lit("[") {
		return nil, 0, false
	}
	out := []SinkGroup{}
	var ok bool
	// Each group's offsets are read into buf, then copied into arena, a
	// chunk shared by many groups and capped to each: appended one at a
	// time, a group of 50 held 64 (and the garbage of the ones before).
	var buf, arena []SinkOffset
	for n := 0; !d.lit("]"); n++ {
		if n > 0 && !d.lit(",") {
			return nil, 0, false
		}
		var g SinkGroup
		if !d.lit(`{"group":`) {
			return nil, 0, false
		}
		if g.Group, ok = d.str(false); !ok {
			return nil, 0, false
		}
		if d.lit(`,"connector":`) {
			if g.Connector, ok = d.str(false); !ok {
				return nil, 0, false
			}
		}
		if d.lit(`,"type":`) {
			if g.Type, ok = d.str(true); !ok {
				return nil, 0, false
			}
		}
		if !d.lit(`,"state":`) {
			return nil, 0, false
		}
		if g.State, ok = d.str(true); !ok || !d.lit(`,"members":`) {
			return nil, 0, false
		}
		members, ok := d.int(64)
		if !ok || !d.lit(`,"offsets":`) {
			return nil, 0, false
		}
		g.Members = int(members)
		if !d.lit("null") {
			if !d.lit("[") {
				return nil, 0, false
			}
			buf = buf[:0]
			for m := 0; !d.lit("]"); m++ {
				if m > 0 && !d.lit(",") {
					return nil, 0, false
				}
				var o SinkOffset
				if o.Topic, o.Partition, o.Offset, ok = d.position(); !ok || !d.lit(`,"leader_epoch":`) {
					return nil, 0, false
				}
				e, ok := d.int(32)
				if !ok {
					return nil, 0, false
				}
				o.LeaderEpoch = int32(e)
				if d.lit(`,"metadata":`) {
					if o.Metadata, ok = d.str(false); !ok {
						return nil, 0, false
					}
				}
				if d.lit(`,"last_consumed":{"offset":`) {
					if o.LastConsumed, ok = d.lastConsumed(); !ok {
						return nil, 0, false
					}
				}
				if !d.lit("}") {
					return nil, 0, false
				}
				buf = append(buf, o)
			}
			g.Offsets, arena = carve(arena, buf)
		}
		if !d.sinkGroupGuard(&g) || !d.lit("}") {
			return nil, 0, false
		}
		out = append(out, g)
	}
	return out, d.i, true
}

// sinkArenaChunk is how many sink offsets decodeSinkGroups allocates at a
// time.
const sinkArenaChunk = 4096

// carve copies offs into the front of arena (a new chunk when it does not
// fit) and returns the copy, capped to its length, and the rest of arena.
// An empty offs is an empty, non-nil slice.
func carve(arena, offs []SinkOffset) (_, rest []SinkOffset) {
	if len(offs) == 0 {
		return []SinkOffset{}, arena
	}
	if len(offs) > cap(arena) {
		arena = make([]SinkOffset, 0, max(len(offs), sinkArenaChunk))
	}
	arena = append(arena, offs...)
	n := len(offs)
	return arena[:n:n], arena[n:n]
}

// decodeSourceOffsets reads the source_offsets array at b[i] as Encode
// writes it and returns the index just past it; false for anything else,
// or anything invalid.
func decodeSourceOffsets(b []byte, i int) ([]SourceOffset, int, bool) {
	if i >= len(b) || b[i] != '[' {
		return nil, 0, false
	}
	d := OffsetDecoder{b: b, i: i + 1, interned: map[string]string{}}
	// The offsets are collected in chunks and copied once into a slice of
	// the exact size: one slice grown by append copied every offset about
	// five times over (a 160-byte struct).
	var chunks [][]SourceOffset
	out := make([]SourceOffset, 0, 1024)
	for n := 0; !d.lit("]"); n++ {
		if n > 0 && !d.lit(",") {
			return nil, 0, false
		}
		o, ok := d.sourceOffset()
		if !ok {
			return nil, 0, false
		}
		if len(out) == cap(out) {
			chunks = append(chunks, out)
			out = make([]SourceOffset, 0, min(2*cap(out), 64<<10))
		}
		out = append(out, o)
	}
	if len(chunks) > 0 {
		n := len(out)
		for _, c := range chunks {
			n += len(c)
		}
		all := make([]SourceOffset, 0, n)
		for _, c := range chunks {
			all = append(all, c...)
		}
		out = append(all, out...)
	}
	return out, d.i, true
}

// sourceOffset reads one source offset object as SourceOffset.appendJSON
// writes it.
func (d *OffsetDecoder) sourceOffset() (SourceOffset, bool) {
	var o SourceOffset
	var ok bool
	if o.Topic, o.Partition, o.Offset, ok = d.position(); !ok || !d.lit(`,"key":`) {
		return o, false
	}
	if o.Key, ok = d.bytes(); !ok || !d.lit(`,"value":`) {
		return o, false
	}
	if o.Value, ok = d.bytes(); !ok {
		return o, false
	}
	if d.lit(`,"connector":`) {
		if o.Connector, ok = d.str(true); !ok {
			return o, false
		}
	}
	// The partition object is nearly always the key's second element
	// byte for byte, and the offset object the value: they then share
	// the key's and value's bytes instead of copies of their own
	// (80 bytes a key, a large part of a restore's heap).
	if d.lit(`,"source_partition":`) {
		var within []byte
		if n := len(o.Key); n > 0 && o.Key[n-1] == ']' {
			within = o.Key[:n-1]
		}
		if o.SourcePartition, ok = d.raw(within, true); !ok {
			return o, false
		}
	}
	if d.lit(`,"source_offset":`) {
		if o.SourceOffset, ok = d.raw(o.Value, false); !ok {
			return o, false
		}
	}
	if d.lit(`,"parse_error":`) {
		if o.ParseError, ok = d.str(false); !ok {
			return o, false
		}
	}
	if !d.lit("}") {
		return o, false
	}
	return o, true
}

// OffsetDecoder is the cursor of decodeSourceOffsets.
type OffsetDecoder struct {
	b        []byte
	i        int
	arena    keyview.Arena // keys, values and raw messages
	scratch  []byte
	interned map[string]string
}

// position reads {"topic":T,"partition":P,"offset":O, how every source
// and sink offset begins.
func (d *OffsetDecoder) position() (topic string, partition int32, offset int64, ok bool) {
	if !d.lit(`{"topic":`) {
		return "", 0, 0, false
	}
	if topic, ok = d.str(true); !ok || !d.lit(`,"partition":`) {
		return "", 0, 0, false
	}
	p, ok := d.int(32)
	if !ok || !d.lit(`,"offset":`) {
		return "", 0, 0, false
	}
	if offset, ok = d.int(64); !ok {
		return "", 0, 0, false
	}
	return topic, int32(p), offset, true
}

// lit consumes s if the input continues with it.
// lastConsumed reads the rest of a last_consumed object as Encode writes
// it, after its `{"offset":`.
func (d *OffsetDecoder) lastConsumed() (*LastConsumed, bool) {
	var lc LastConsumed
	var ok bool
	if lc.Offset, ok = d.int(64); !ok || !d.lit(`,"timestamp":`) {
		return nil, false
	}
	if lc.Timestamp, ok = d.int(64); !ok {
		return nil, false
	}
	lc.LogAppendTime = d.lit(`,"log_append_time":true`)
	return &lc, d.lit("}")
}

func (d *OffsetDecoder) lit(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// int reads an integer that fits in bits bits, as JSON writes integers.
func (d *OffsetDecoder) int(bits int) (int64, bool) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == digits || (d.i-digits > 1 && d.b[digits] == '0') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(d.b[start:d.i]), 10, bits)
	return n, err == nil
}

// unquote reads a JSON string and returns its bytes as encoding/json
// decodes them (escapes resolved, invalid UTF-8 and lone surrogates as
// U+FFFD), in scratch or in the input; false if it is not a valid JSON
// string.
func (d *OffsetDecoder) unquote() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	s := d.b[d.i+1:]
	r := 0
	for r < len(s) {
		if r+8 <= len(s) && plain8(s, r) {
			r += 8
			continue
		}
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r < len(s) && s[r] == '"' {
		d.i += r + 2
		return s[:r], true
	}
	b := append(d.scratch[:0], s[:r]...)
	for {
		if r >= len(s) {
			return nil, false
		}
		switch c := s[r]; {
		case c == '"':
			d.scratch = b
			d.i += r + 2
			return b, true
		case c == '\\':
			r++
			if r >= len(s) {
				return nil, false
			}
			switch s[r] {
			case '"', '\\', '/':
				b = append(b, s[r])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+1:])
				if rr < 0 {
					return nil, false
				}
				r += 4
				if utf16.IsSurrogate(rr) {
					if r+2 < len(s) && s[r+1] == '\\' && s[r+2] == 'u' {
						if rr1 := hex4(s[r+3:]); rr1 >= 0 {
							if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
								b = utf8.AppendRune(b, dec)
								r += 6 // the second escape; the r++ below passes it
								break
							}
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			default:
				return nil, false
			}
			r++
		case c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
}

// hex4 reads the 4 hex digits of a \u escape; -1 if they are not.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// str reads a JSON string; intern shares the strings that repeat (topic
// and connector names).
func (d *OffsetDecoder) str(intern bool) (string, bool) {
	b, ok := d.unquote()
	if !ok {
		return "", false
	}
	if !intern {
		return string(b), true
	}
	if s, ok := d.interned[string(b)]; ok {
		return s, true
	}
	s := string(b)
	d.interned[s] = s
	return s, true
}

// bytes reads a Bytes value as Bytes.UnmarshalJSON does: a string, null,
// or {"base64":"..."} (in plain base64 characters).
func (d *OffsetDecoder) bytes() (Bytes, bool) {
	if d.lit("null") {
		return nil, true
	}
	if d.lit(`{"base64":"`) {
		start := d.i
		for d.i < len(d.b) && d.b[d.i] != '"' {
			if c := d.b[d.i]; c == '\\' || c < ' ' || c >= utf8.RuneSelf {
				return nil, false
			}
			d.i++
		}
		enc := d.b[start:d.i]
		if !d.lit(`"}`) {
			return nil, false
		}
		raw := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
		n, err := base64.StdEncoding.Decode(raw, enc)
		if err != nil {
			return nil, false
		}
		return raw[:n:n], true
	}
	b, ok := d.unquote()
	if !ok {
		return nil, false
	}
	if len(b) == 0 {
		return Bytes{}, true
	}
	return d.arena.Copy(b), true
}

// raw reads a json.RawMessage holding an object, as it stands.
//
// When the object's bytes are those that end same (suffix, for the key
// without its closing bracket) or equal it (whole), the result aliases
// same instead of being copied.
func (d *OffsetDecoder) raw(same []byte, suffix bool) (json.RawMessage, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return nil, false
	}
	end := skipValue(d.b, d.i, 0)
	if end < 0 || !validJSON(d.b[d.i:end]) {
		return nil, false
	}
	obj := d.b[d.i:end]
	d.i = end
	if suffix && len(same) >= len(obj) {
		same = same[len(same)-len(obj):]
	}
	if bytes.Equal(same, obj) {
		return json.RawMessage(same[:len(same):len(same)]), true
	}
	return d.arena.Copy(obj), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string at b[i], or -1.
// It does not validate: what it skips is validated elsewhere.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the JSON value at b[i], or -1. It
// finds the end of valid JSON exactly but does not validate.
func skipValue(b []byte, i, depth int) int {
	if i >= len(b) || depth > 10000 {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		i = skipSpace(b, i+1)
		for i < len(b) && b[i] != '}' && b[i] != ']' {
			if i = skipValue(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i < len(b) && (b[i] == ',' || b[i] == ':') {
				i = skipSpace(b, i+1)
			}
		}
		if i >= len(b) {
			return -1
		}
		return i + 1
	}
	j := i
	for j < len(b) && (b[j] == '-' || b[j] == '+' || b[j] == '.' || (b[j] >= '0' && b[j] <= '9') || (b[j] >= 'a' && b[j] <= 'z') || (b[j] >= 'A' && b[j] <= 'Z')) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// filterFull returns the source offsets of the connectors keep of a full
// table, in a new slice (empty, not nil, when none; t may be nil).
func (t *SourceTable) filterFull(keep map[string]bool) []SourceOffset {
	var offs []SourceOffset
	if t != nil && t.full {
		offs = t.offs
	}
	// Source offsets come in runs of one connector's keys: one map lookup
	// per run, and one allocation of the exact size.
	kept := func(yield func(i int) bool) {
		last, in := "", false
		for i := range offs {
			o := &offs[i]
			if o.Connector != last || i == 0 {
				last, in = o.Connector, o.Connector != "" && keep[o.Connector]
			}
			if in && !yield(i) {
				return
			}
		}
	}
	n := 0
	for range kept {
		n++
	}
	out := make([]SourceOffset, 0, n)
	for i := range kept {
		out = append(out, offs[i])
	}
	return out
}
