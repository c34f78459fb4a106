package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
)

// IdLayout is the time part of an ID: fixed width, UTC, microseconds.
const IdLayout = "20060102T150405.000000Z"

// idLen is the length of every ID: the time part, "-", 6 hex digits.
const idLen = len(IdLayout) + 1 + 6

// Info describes a stored snapshot without reading its document. Size is
// the stored object's size in bytes; SHA256 is the hex SHA-256 of the
// object's body (the compressed document).
type Info struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Reason    string    `json:"reason"`
	// Kind is what the snapshot covers: KindFull, KindScoped or KindUndo.
	// List fills it in for every snapshot, those stored before kinds were
	// recorded included (from their reason and scope).
	Kind string `json:"kind"`
	// Scope names the connectors a scoped or undo snapshot holds; empty
	// for a full snapshot.
	Scope []string `json:"scope,omitempty"`
	// Captured is the snapshot's Captured: CapturedConnectREST for one
	// read through the Connect REST API, "" for one read from the Kafka
	// topics.
	Captured   string `json:"captured,omitempty"`
	ClusterID  string `json:"cluster_id"`
	Connectors int    `json:"connectors"`
	SourceKeys int    `json:"source_keys"`
	SinkGroups int    `json:"sink_groups"`
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"`
	// Encrypted is set for a snapshot encrypted with a Keeper (see
	// SetKeeper); KeyID is then the ID of its key, never the key.
	Encrypted bool   `json:"encrypted,omitempty"`
	KeyID     string `json:"key_id,omitempty"`
	// Pin is set for a pinned snapshot by Pins.Snapshots and WithPins (List
	// leaves it nil): retention never removes it. See pin.go.
	Pin *Pin `json:"pin,omitempty"`
	// Damaged, when set, says why List could not read the object named
	// like a snapshot (empty, foreign, truncated, stored without summary
	// metadata): only ID, CreatedAt (the ID's time) and Size are known.
	// verify fails it, latest never means it, retention never counts it,
	// prune and delete remove it.
	Damaged string `json:"damaged,omitempty"`
}

// NewID returns a new snapshot ID for a snapshot created at t: the UTC time
// to the microsecond, fixed width so IDs sort by time, then 6 random
// lowercase hex digits so that two IDs made in the same microsecond differ,
// e.g. 20261130T134920.123456Z-3fa94c.
func NewID(t time.Time) string {
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	return t.UTC().Format(IdLayout) + "-" + hex.EncodeToString(r[:])
}

// ParseID checks that id is an ID as NewID makes them and returns its time.
func ParseID(id string) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%q is not a snapshot ID (like 20261130T134920.123456Z-3fa94c)", id)
	}
	if len(id) != idLen || id[len(IdLayout)] != '-' {
		return bad()
	}
	t, err := time.Parse(IdLayout, id[:len(IdLayout)])
	if err != nil || t.Format(IdLayout) != id[:len(IdLayout)] {
		return bad()
	}
	for _, c := range id[len(IdLayout)+1:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return bad()
		}
	}
	return t, nil
}

// EffectiveKind is i.Kind, or, when it is empty (an Info made by hand),
// the kind its Reason and Scope say.
func (i Info) EffectiveKind() string {
	if i.Kind != "" {
		return i.Kind
	}
	return KindOf(i.Reason, i.Scope)
}

// Holds reports whether the snapshot i describes holds every one of
// connectors: a full snapshot holds the whole cluster, a scoped or undo
// one the connectors of its Scope.
func (i Info) Holds(connectors []string) bool {
	if i.EffectiveKind() == KindFull {
		return true
	}
	for _, c := range connectors {
		if !slices.Contains(i.Scope, c) {
			return false
		}
	}
	return true
}

// The object layout; see Store.
const (
	// MaxDocumentSize is the largest decompressed document Get accepts, in
	// bytes (4 GiB); a body that would inflate beyond it is ErrCorrupt.
	MaxDocumentSize = 4 << 30
)

// Pin says a snapshot is pinned: retention (the daemon and prune) never
// removes it.
type Pin struct {
	PinnedAt time.Time `json:"pinned_at"`
	Note     string    `json:"note,omitempty"`
}

// JournalLive is how far the last segment of the newest epoch may lie
// behind a moment for that moment to count as covered: the daemon writes a
// segment at least every JournalHeartbeat, even when nothing changed, so a
// journal whose last segment is younger than this is running.
const JournalLive = 2*JournalHeartbeat + 30*time.Second

// Coverage is one span of time the store can restore to exactly: an epoch
// from its base snapshot to its last segment.
type Coverage struct {
	Epoch      string    `json:"epoch"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	Segments   int       `json:"segments"`
	Bytes      int64     `json:"bytes"`
	LastSeq    uint64    `json:"last_seq"`
	Broken     string    `json:"broken,omitempty"`
	BaseExists bool      `json:"base_exists"`
}

func FmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Event is one reset the journal recorded.
type Event struct {
	Time      time.Time `json:"time"`
	Connector string    `json:"connector"`
	Group     string    `json:"group,omitempty"`
	Kind      string    `json:"kind"`
	Count     int       `json:"count"`
	// Before is the moment just before the reset: restore --at Before
	// puts things back as they were.
	Before  time.Time `json:"before"`
	Epoch   string    `json:"epoch"`
	Segment uint64    `json:"segment"`
	// UndoGone, when set, says why restore --at Before is no longer
	// possible: retention removed what it reads (see UndoGone).
	UndoGone string `json:"undo_gone,omitempty"`
	// RestoreID is the undo snapshot of the restore of an EventRestored:
	// restoring it rolls that restore back.
	RestoreID string `json:"restore_id,omitempty"`
}

// JournalHeartbeat is the longest the daemon goes without writing a
// segment while it journals: a segment with no changes proves that nothing
// changed.
const JournalHeartbeat = time.Minute

// Event kinds, the kind label of offsetkeeper_reset_events_total.
const (
	// EventSourceTombstoned: a connector's source offset keys were
	// tombstoned (a KIP-875 DELETE /offsets, or a tool writing nulls).
	EventSourceTombstoned = "source-tombstoned"
	// EventSourceRewound: a connector's source offsets were rewritten with
	// a numeric position moving backwards.
	EventSourceRewound = "source-rewound"
	// EventSinkDeleted: a sink group was deleted, or offsets of some of
	// its partitions were.
	EventSinkDeleted = "sink-deleted"
	// EventSinkExpired: a sink group vanished when Kafka's offset expiry
	// was due (offsets.retention.minutes after it became Empty), not
	// deleted by anyone: the daemon's expiry guard tells (issue 37).
	EventSinkExpired = "sink-expired"
	// EventSinkExpiring: the daemon's warning, ahead, that a sink group's
	// offsets expire at the event's Before unless the connector resumes;
	// its Time is the moment observed, whose state still holds them.
	EventSinkExpiring = "sink-expiring"
	// EventSinkOrphanExpiring: the same warning for a group whose
	// connector has no config (deleted, or its config topic lost): nothing
	// commits to it again and there is no connector to resume, so its
	// advice differs (let it go, or create the connector again).
	EventSinkOrphanExpiring = "sink-orphan-expiring"
	// EventSinkRewound: sink group offsets moved backwards.
	EventSinkRewound = "sink-rewound"
	// EventConnectorDeleted: a connector's config was deleted.
	EventConnectorDeleted = "connector-deleted"
	// EventOffsetsTopicDeleted: an offsets topic that held the connector's
	// source offsets was deleted, or deleted and created again (a new
	// topic ID): its offsets are gone.
	EventOffsetsTopicDeleted = "offsets-topic-deleted"
	// EventConfigTopicDeleted: the config topic that held the connector's
	// config was deleted, or deleted and created again.
	EventConfigTopicDeleted = "config-topic-deleted"
)

// RestoreHeader is the header offsetkeeper's restore puts on every
// offsets topic record it writes, its value the restore's undo snapshot
// ID: the journal tells the tool's own writes from a reset by it. Connect
// reads the key and value only.
const RestoreHeader = "offsetkeeper-restore" // keyview.RestoreHeader too

// EventRestored is no reset: offsetkeeper's own restore wrote the
// connector's offsets (Event.RestoreID is its undo snapshot).
const EventRestored = "restored"

// ConfigLost reports whether an event of kind took the connector's
// config away (its undo re-creates the connector).
func ConfigLost(kind string) bool {
	return kind == EventConnectorDeleted || kind == EventConfigTopicDeleted
}
