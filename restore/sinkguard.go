package restore

// This file is the topic guard of issue 37: a sink topic deleted and
// created again since the snapshot (its topic ID changed) refuses the
// restore of that group, and a sink offset below today's log start is
// named with the records retention removed and what the connector does
// on resume.

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// CheckSinkTopicRecreated is the Refusal.Check of a sink group whose topic
// was deleted and created again since the snapshot.
const CheckSinkTopicRecreated = "sink-topic-recreated"

// Kinds of SinkGuardFinding.
const (
	// FindingRecreated: the topic's ID is not the snapshot's.
	FindingRecreated = "topic-recreated"
	// FindingBelowLogStart: the offset is below the partition's log start.
	FindingBelowLogStart = "below-log-start"
)

// SinkGuardFinding is one sink trap a restore (or diff, or check) found:
// a sink topic recreated since the snapshot, or a sink offset retention
// or DeleteRecords left below the log start.
type SinkGuardFinding struct {
	Kind      string `json:"kind"`
	Connector string `json:"connector,omitempty"`
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	// SnapshotTopicID and LiveTopicID are the topic's IDs (FindingRecreated).
	SnapshotTopicID string `json:"snapshot_topic_id,omitempty"`
	LiveTopicID     string `json:"live_topic_id,omitempty"`
	// Partition, Offset, LogStart and RecordsLost are for
	// FindingBelowLogStart: the committed offset, the log start now, and
	// the records between, deleted before the connector read them.
	Partition   int32 `json:"partition"`
	Offset      int64 `json:"offset"`
	LogStart    int64 `json:"log_start,omitempty"`
	RecordsLost int64 `json:"records_lost,omitempty"`
	// Reset is the connector's auto.offset.reset (earliest unless its
	// config overrides it) and OnResume what its consumer then does.
	Reset    string `json:"auto_offset_reset,omitempty"`
	OnResume string `json:"on_resume,omitempty"`
}

// String is the finding for a person, one line.
func (f SinkGuardFinding) String() string {
	if f.Kind == FindingRecreated {
		return fmt.Sprintf("sink topic %q was deleted and created again since the snapshot (topic ID %s then, %s now): group %q's offsets point into a log that no longer exists",
			f.Topic, f.SnapshotTopicID, f.LiveTopicID, f.Group)
	}
	return fmt.Sprintf("group %q: offset %d for %s/%d is below the partition's log start %d: %d records were deleted (retention or DeleteRecords) before the connector read them; %s",
		f.Group, f.Offset, f.Topic, f.Partition, f.LogStart, f.RecordsLost, f.OnResume)
}

// RecreatedAdvice is how to go ahead when a sink topic was recreated.
const RecreatedAdvice = "translate the offsets by time onto the new topic with --translate timestamp, or restore them as they are with --force"

// ResetOf is a sink connector's auto.offset.reset: its
// consumer.override.auto.offset.reset, else Connect's default for sink
// consumers, earliest (Worker.baseConsumerConfigs). A worker-level
// consumer.auto.offset.reset is not visible from Kafka.
func ResetOf(config map[string]string) string {
	if v := config["consumer.override.auto.offset.reset"]; v != "" {
		return v
	}
	return "earliest"
}

// onResume says what a consumer with reset does at an offset below the
// log start start (end: the log end).
func onResume(reset string, start, end int64) string {
	switch reset {
	case "earliest":
		return fmt.Sprintf("on resume the connector resets to the log start %d (auto.offset.reset=earliest)", start)
	case "latest":
		return fmt.Sprintf("on resume the connector skips to the log end %d, %d more records unread (auto.offset.reset=latest)", end, max(0, end-start))
	case "none":
		return "on resume the connector's tasks fail: no offset to reset to (auto.offset.reset=none)"
	}
	return fmt.Sprintf("on resume the connector resets by auto.offset.reset=%s", reset)
}

// recreatedTopics compares the topic IDs of then with those of now, by
// name: the topics in both whose ID changed, with the old and new ID. A
// topic either side lacks (an old snapshot, a topic gone) is left out.
func recreatedTopics(then, now []snapshot.SinkTopic) map[string][2]string {
	out := map[string][2]string{}
	for _, t := range then {
		for _, n := range now {
			if n.Name == t.Name && t.ID != "" && n.ID != "" && n.ID != t.ID {
				out[t.Name] = [2]string{t.ID, n.ID}
			}
		}
	}
	return out
}

// RecreatedFindings are the FindingRecreated of the sink groups of snap
// whose topics have other IDs in now (the live cluster's), one per group
// and topic, sorted.
func RecreatedFindings(snap *snapshot.Snapshot, now []snapshot.SinkTopic) []SinkGuardFinding {
	ids := recreatedTopics(snap.SinkTopics, now)
	if len(ids) == 0 {
		return nil
	}
	var out []SinkGuardFinding
	for _, g := range snap.SinkGroups {
		var topics []string
		for _, o := range g.Offsets {
			if _, ok := ids[o.Topic]; ok && !slices.Contains(topics, o.Topic) {
				topics = append(topics, o.Topic)
			}
		}
		for _, t := range topics {
			out = append(out, SinkGuardFinding{Kind: FindingRecreated, Connector: g.Connector, Group: g.Group, Topic: t, SnapshotTopicID: ids[t][0], LiveTopicID: ids[t][1]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// guardSinkTopics finds the plan's sink groups whose topics were
// recreated since the snapshot (now: the live topics), adds them to
// SinkGuard and warns; Check refuses those it writes. Topic IDs are
// compared within one cluster only: another cluster's copies always have
// other IDs.
func (p *Plan) guardSinkTopics(now []snapshot.SinkTopic) {
	if p.source.ClusterID == "" || p.source.ClusterID != p.ClusterID {
		return
	}
	for _, f := range RecreatedFindings(p.source, now) {
		if !p.writesSink(f.Connector) {
			continue
		}
		p.SinkGuard = append(p.SinkGuard, f)
		p.warnf("%s; %s", f, RecreatedAdvice)
	}
}

// writesSink reports whether the plan commits offsets of connector's group.
func (p *Plan) writesSink(connector string) bool {
	for _, cp := range p.Connectors {
		if cp.Name != connector || cp.Sink == nil {
			continue
		}
		for _, ch := range cp.Sink.Changes() {
			if ch.Action == Changed || ch.Action == Added {
				return true
			}
		}
	}
	return false
}

// liveSinkTopics reads the IDs of the sink topics of the snapshot's
// groups the plan writes. A failed read is a warning: the guard then
// cannot tell a recreated topic.
func (p *Plan) liveSinkTopics(ctx context.Context, adm *kadm.Client) []snapshot.SinkTopic {
	if p.source.ClusterID != p.ClusterID {
		return nil
	}
	var names []string
	for _, t := range p.source.SinkTopics {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return nil
	}
	td, err := adm.ListTopics(ctx, names...)
	if err != nil {
		p.warnf("cannot read the sink topics' IDs (%v): a sink topic recreated since the snapshot is not caught", err)
		return nil
	}
	var out []snapshot.SinkTopic
	for _, d := range td.Sorted() {
		if d.Err == nil {
			out = append(out, snapshot.SinkTopic{Name: d.Topic, ID: capture.TopicIDString(d.ID)})
		}
	}
	return out
}

// belowLogStart notes a sink offset below its partition's log start: a
// finding and a warning naming the records lost and what the connector
// does on resume.
func (p *Plan) belowLogStart(connector, group string, ch *SinkChange, start, end int64) {
	reset := ResetOf(p.configOf(connector))
	f := SinkGuardFinding{Kind: FindingBelowLogStart, Connector: connector, Group: group, Topic: ch.Topic, Partition: ch.Partition,
		Offset: ch.New, LogStart: start, RecordsLost: start - ch.New, Reset: reset, OnResume: onResume(reset, start, end)}
	p.SinkGuard = append(p.SinkGuard, f)
	p.warnf("%s", f)
}

// configOf is connector's config here, else the snapshot's.
func (p *Plan) configOf(connector string) map[string]string {
	if c, ok := p.liveIdx.Connector(connector); ok && c.Config != nil {
		return c.Config
	}
	if c, ok := p.snapIdx.Connector(connector); ok {
		return c.Config
	}
	return nil
}

// sinkGuardRefusals are Check's refusals of the groups whose topic was
// recreated.
func (p *Plan) sinkGuardRefusals() []Refusal {
	var out []Refusal
	for _, f := range p.SinkGuard {
		if f.Kind == FindingRecreated {
			out = append(out, Refusal{Connector: f.Connector, Check: CheckSinkTopicRecreated, Reason: f.String() + "; " + RecreatedAdvice})
		}
	}
	return out
}
