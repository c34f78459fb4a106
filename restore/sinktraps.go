package restore

// This file finds the three ways Connect loses sink offsets without anyone
// resetting them (issue 37) in the live cluster, against the newest
// snapshot: for offsetkeeper check.

import (
	"fmt"
	"sort"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Kinds of SinkTrap beyond SinkGuardFinding's.
const (
	// TrapExpiry: a sink group without members whose offsets Kafka will
	// delete (offsets.retention.minutes) unless the connector resumes.
	TrapExpiry = "offsets-expire"
	// TrapGone: a sink connector whose group held offsets in the snapshot
	// and holds none now (expired, or deleted).
	TrapGone = "offsets-gone"
)

// SinkTrap is one trap found live: a SinkGuardFinding (topic recreated,
// offset below the log start), offsets that will expire, or offsets gone.
type SinkTrap struct {
	SinkGuardFinding
	// Rule, EmptySince and ExpiresAt are for TrapExpiry: Kafka's rule
	// for the group (snapshot.RuleEmptySince, RuleCommitTime), when the
	// group became Empty if known, and when its offsets expire (for an
	// unknown EmptySince, the latest it can be).
	Rule       string     `json:"rule,omitempty"`
	EmptySince *time.Time `json:"empty_since,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	// Message says it for a person; Command, when set, is what repairs or
	// prevents it, ready to paste.
	Message string `json:"message"`
	Command string `json:"command,omitempty"`
	// Delete, for an offsets-expire trap of a group whose connector has
	// no config, deletes the group (a connector deleted on purpose).
	Delete string `json:"delete,omitempty"`
}

// FindSinkTraps compares live, the cluster now, with snap, its newest
// snapshot: the sink topics recreated since snap (same cluster only), the
// live sink offsets below their log start, the sink groups without
// members whose offsets expire after retention (0: not known, left out),
// and the sink connectors whose group held offsets in snap and holds none
// now. s builds the repair commands. The result is sorted by group.
func FindSinkTraps(snap, live *snapshot.Snapshot, retention time.Duration, now time.Time, s CommandSettings) []SinkTrap {
	now = now.Truncate(time.Millisecond)
	var out []SinkTrap
	if snap != nil && snap.ClusterID != "" && snap.ClusterID == live.ClusterID {
		for _, f := range RecreatedFindings(snap, live.SinkTopics) {
			cmd := s.Snapshot(snap.ID, f.Connector).Run + " --translate timestamp"
			out = append(out, SinkTrap{SinkGuardFinding: f, Message: f.String() + "; restore them onto the new topic by time", Command: cmd})
		}
	}
	out = append(out, belowStart(live)...)
	if retention > 0 {
		out = append(out, expiring(snap, live, retention, now, s)...)
	}
	if snap != nil {
		out = append(out, gone(snap, live, s)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// belowStart are live's sink offsets below their partition's log start.
func belowStart(live *snapshot.Snapshot) []SinkTrap {
	var out []SinkTrap
	for _, g := range live.SinkGroups {
		if g.Connector == "" {
			continue
		}
		conf := map[string]string(nil)
		if c, ok := live.Connector(g.Connector); ok {
			conf = c.Config
		}
		for _, o := range g.Offsets {
			st, ok := live.SinkTopic(o.Topic)
			if !ok {
				continue
			}
			for _, p := range st.Partitions {
				if p.Partition != o.Partition || o.Offset >= p.StartOffset {
					continue
				}
				reset := ResetOf(conf)
				f := SinkGuardFinding{Kind: FindingBelowLogStart, Connector: g.Connector, Group: g.Group, Topic: o.Topic, Partition: o.Partition,
					Offset: o.Offset, LogStart: p.StartOffset, RecordsLost: p.StartOffset - o.Offset, Reset: reset, OnResume: onResume(reset, p.StartOffset, p.EndOffset)}
				out = append(out, SinkTrap{SinkGuardFinding: f, Message: f.String()})
			}
		}
	}
	return out
}

// expiring are live's sink groups without members whose offsets Kafka
// will delete, under Kafka's rule for the group's type (a
// consumer-protocol group expires by commit times, which the journal
// keeps, not a snapshot: such a group is named with the latest time it
// can expire, now plus the retention).
func expiring(snap, live *snapshot.Snapshot, retention time.Duration, now time.Time, s CommandSettings) []SinkTrap {
	var out []SinkTrap
	for _, g := range live.SinkGroups {
		if g.Connector == "" || len(g.Offsets) == 0 {
			continue
		}
		c, ok := live.Connector(g.Connector)
		orphan := !ok || !c.HasConfig // nothing commits to it again: the surest to expire
		rule := snapshot.ExpiryRule(g, g.Type == "consumer")
		if rule == snapshot.RuleNone {
			continue
		}
		since := g.EmptySince
		if since == nil && snap != nil {
			if sg, ok := snap.SinkGroupOf(g.Connector); ok && sg.Group == g.Group && sg.State == g.State {
				since = sg.EmptySince
			}
		}
		t := SinkTrap{SinkGuardFinding: SinkGuardFinding{Kind: TrapExpiry, Connector: g.Connector, Group: g.Group}, Rule: rule, EmptySince: since}
		at, known := time.Time{}, false
		if rule == snapshot.RuleEmptySince && since != nil {
			at, known = since.Add(retention), true
		}
		if !known {
			at = now.Add(retention) // it became Empty (or committed) at the latest now
		}
		t.ExpiresAt = &at
		when := "at " + FormatMoment(at)
		if !known {
			why := "when it became Empty is not known"
			if rule == snapshot.RuleCommitTime {
				why = "when each offset was committed is not known"
			}
			when = "at the latest " + FormatMoment(at) + " (" + why + ": the daemon's journal records it)"
		}
		t.Message = fmt.Sprintf("group %q has no members (%s): Kafka deletes its %d committed offsets %s (offsets.retention.minutes=%d) unless the connector is resumed before",
			g.Group, g.State, len(g.Offsets), when, int64(retention/time.Minute))
		if orphan {
			orphanTrap(&t, snap, s, len(g.Offsets), when, retention) // orphan.go
		}
		out = append(out, t)
	}
	return out
}

// gone are the sink connectors of live whose group held offsets in snap
// and holds none now: Kafka expired them, or someone deleted them.
func gone(snap, live *snapshot.Snapshot, s CommandSettings) []SinkTrap {
	var out []SinkTrap
	for _, sg := range snap.SinkGroups {
		if sg.Connector == "" || len(sg.Offsets) == 0 {
			continue
		}
		c, ok := live.Connector(sg.Connector)
		if !ok || !c.HasConfig || c.Type != snapshot.TypeSink {
			continue
		}
		if lg, ok := live.SinkGroupOf(sg.Connector); ok && len(lg.Offsets) > 0 {
			continue
		}
		cmd := s.WithStart(s.Snapshot(snap.ID, sg.Connector).Run)
		out = append(out, SinkTrap{SinkGuardFinding: SinkGuardFinding{Kind: TrapGone, Connector: sg.Connector, Group: sg.Group},
			Message: fmt.Sprintf("group %q held %d committed offsets in snapshot %s and holds none now (expired or deleted): on resume the connector starts by auto.offset.reset=%s", sg.Group, len(sg.Offsets), snap.ID, ResetOf(c.Config)),
			Command: cmd})
	}
	return out
}
