package snapshot

// This file is what the sink guard keeps in a snapshot (issue 37): the
// sink topics as they were at capture, and when a sink group became Empty,
// so that a restore can tell a recreated topic or an offset retention
// removed, and the daemon when a stopped sink's offsets expire.

import (
	"strconv"
	"time"
)

// SinkTopic is one sink topic as it was when a snapshot was captured: the
// topic a sink group's offsets point into.
type SinkTopic struct {
	Name string `json:"name"`
	// ID is the topic ID as Kafka prints it (URL-safe base64, no
	// padding); a topic deleted and created again has another one.
	ID string `json:"id"`
	// Partitions are each partition's log start and end offset at capture.
	Partitions []TopicPartition `json:"partitions"`
}

// SinkTopic returns the snapshot's record of sink topic name, or false
// (a snapshot taken before they were kept, or a topic that could not be
// described then).
func (s *Snapshot) SinkTopic(name string) (SinkTopic, bool) {
	for _, t := range s.SinkTopics {
		if t.Name == name {
			return t, true
		}
	}
	return SinkTopic{}, false
}

// sinkTopicsOf is the topics of ts that groups hold offsets for.
func sinkTopicsOf(ts []SinkTopic, groups []SinkGroup) []SinkTopic {
	if len(ts) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, g := range groups {
		for _, o := range g.Offsets {
			used[o.Topic] = true
		}
	}
	var out []SinkTopic
	for _, t := range ts {
		if used[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// Group types and the states the expiry rule looks at.
const (
	GroupStateEmpty = "Empty"
	// ProtocolConsumer is the protocol type of a classic group whose
	// members are consumers (a Connect sink's).
	ProtocolConsumer = "consumer"
)

// Expiry rules (restore.SinkTrap.Rule): which clock Kafka expires a group's
// committed offsets by.
const (
	// RuleEmptySince: a classic group that is Empty and has a protocol
	// type loses every offset offsets.retention.minutes after it became
	// Empty; committing again does not move that clock (KIP-211,
	// apache/kafka classic/ClassicGroup.java currentStateTimestamp).
	RuleEmptySince = "empty-since"
	// RuleCommitTime: a consumer-protocol group, or a classic group
	// without a protocol type, loses each offset offsets.retention.minutes
	// after it was committed (modern/consumer/ConsumerGroup.java).
	RuleCommitTime = "commit-time"
	// RuleNone: the group has members; Kafka expires nothing of it.
	RuleNone = ""
)

// ExpiryRule is the rule Kafka expires g's offsets by: consumerProtocol
// says whether g is a consumer-protocol group (KIP-848). A group with
// members keeps its offsets (RuleNone); kfake's own rule, max(emptyAt,
// lastCommit), is not Kafka's and is not followed.
func ExpiryRule(g SinkGroup, consumerProtocol bool) string {
	switch {
	case consumerProtocol:
		if g.Members > 0 {
			return RuleNone
		}
		return RuleCommitTime
	case g.State != GroupStateEmpty:
		return RuleNone
	case g.ProtocolType == "":
		return RuleCommitTime
	}
	return RuleEmptySince
}

// ExpiresAt is when Kafka deletes g's offsets under rule with retention
// (offsets.retention.minutes): emptySince + retention for RuleEmptySince;
// for RuleCommitTime the earliest of committed + retention over the
// partitions (committed gives when each was last seen committed; a
// partition without one is left out). It reports false when the rule
// needs a time nobody knows.
func ExpiresAt(g SinkGroup, rule string, retention time.Duration, committed map[string]time.Time) (time.Time, bool) {
	switch rule {
	case RuleEmptySince:
		if g.EmptySince == nil {
			return time.Time{}, false
		}
		return g.EmptySince.Add(retention), true
	case RuleCommitTime:
		var first time.Time
		for _, o := range g.Offsets {
			at, ok := committed[o.Topic+"/"+strconv.Itoa(int(o.Partition))]
			if ok && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
		if first.IsZero() {
			return time.Time{}, false
		}
		return first.Add(retention), true
	}
	return time.Time{}, false
}

// appendGuardJSON appends g's sink guard fields as encoding/json writes
// them, each with its leading comma.
func (g *SinkGroup) appendGuardJSON(dst []byte) []byte {
	if g.ProtocolType != "" {
		dst = append(dst, `,"protocol_type":`...)
		dst = AppendString(dst, g.ProtocolType)
	}
	if g.EmptySince != nil {
		dst = append(dst, `,"empty_since":"`...)
		dst = g.EmptySince.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
	}
	return dst
}

// sinkGroupGuard reads the fields appendGuardJSON writes, when present.
func (d *OffsetDecoder) sinkGroupGuard(g *SinkGroup) bool {
	var ok bool
	if d.lit(`,"protocol_type":`) {
		if g.ProtocolType, ok = d.str(true); !ok {
			return false
		}
	}
	if d.lit(`,"empty_since":`) {
		s, ok := d.str(false)
		if !ok {
			return false
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return false
		}
		g.EmptySince = &t
	}
	return true
}
