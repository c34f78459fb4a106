package capture

// This file reads what the sink guard keeps in a snapshot (issue 37): each
// sink topic's ID and its partitions' log start and end, and each sink
// group's protocol type.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TopicIDString is a topic ID as Kafka prints it (Uuid.toString: URL-safe
// base64 without padding), the form snapshots keep.
func TopicIDString(id kadm.TopicID) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// setProtocolTypes sets each group's protocol type from the group list.
func setProtocolTypes(groups []snapshot.SinkGroup, listed kadm.ListedGroups) {
	for i := range groups {
		groups[i].ProtocolType = listed[groups[i].Group].ProtocolType
	}
}

// sinkTopicNames are the topics groups hold offsets for, sorted.
func sinkTopicNames(groups []snapshot.SinkGroup) []string {
	var names []string
	for _, g := range groups {
		for _, o := range g.Offsets {
			names = append(names, o.Topic)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// ReadSinkTopics reads the named topics as a snapshot keeps them: ID and
// each partition's log start and end. A topic that does not exist is left
// out; a topic that could not be read is named in the warnings, so that a
// snapshot never fails for want of it.
func ReadSinkTopics(ctx context.Context, adm *kadm.Client, names []string) (_ []snapshot.SinkTopic, warnings []string) {
	if len(names) == 0 {
		return nil, nil
	}
	var out []snapshot.SinkTopic
	td, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, []string{fmt.Sprintf("sink topics were not described (%v): a restore of this snapshot cannot tell a recreated sink topic", err)}
	}
	starts, serr := adm.ListStartOffsets(ctx, names...)
	ends, eerr := adm.ListEndOffsets(ctx, names...)
	if err := errors.Join(serr, eerr); err != nil {
		warnings = append(warnings, fmt.Sprintf("the log start and end of sink topics were not read (%v)", err))
	}
	for _, name := range names {
		d, ok := td[name]
		if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			continue
		}
		if d.Err != nil {
			warnings = append(warnings, fmt.Sprintf("sink topic %q was not described (%v): a restore of this snapshot cannot tell whether it was recreated", name, d.Err))
			continue
		}
		st := snapshot.SinkTopic{Name: name, ID: TopicIDString(d.ID), Partitions: []snapshot.TopicPartition{}}
		for _, p := range d.Partitions.Numbers() {
			s, sok := starts.Lookup(name, p)
			e, eok := ends.Lookup(name, p)
			if !sok || !eok || s.Err != nil || e.Err != nil {
				continue
			}
			st.Partitions = append(st.Partitions, snapshot.TopicPartition{Partition: p, StartOffset: s.Offset, EndOffset: e.Offset})
		}
		out = append(out, st)
	}
	return out, warnings
}

// DefaultOffsetsRetention is Kafka's offsets.retention.minutes default,
// 10080 (7 days).
const DefaultOffsetsRetention = 7 * 24 * time.Hour

// ReadOffsetsRetention reads offsets.retention.minutes from a broker
// (DescribeConfigs on the first broker the metadata lists): how long
// Kafka keeps a group's committed offsets once they may expire.
func ReadOffsetsRetention(ctx context.Context, adm *kadm.Client) (time.Duration, error) {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return 0, fmt.Errorf("read cluster metadata: %w", err)
	}
	if len(md.Brokers) == 0 {
		return 0, errors.New("read offsets.retention.minutes: the metadata lists no broker")
	}
	id := md.Brokers[0].NodeID
	rcs, err := adm.DescribeBrokerConfigs(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("describe the configs of broker %d: %w", id, err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			return 0, fmt.Errorf("describe the configs of broker %d: %w", id, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key != "offsets.retention.minutes" || c.MaybeValue() == "" {
				continue
			}
			m, err := strconv.ParseInt(c.MaybeValue(), 10, 64)
			if err != nil || m <= 0 {
				return 0, fmt.Errorf("broker %d: offsets.retention.minutes=%q is not a number of minutes", id, c.MaybeValue())
			}
			return time.Duration(m) * time.Minute, nil
		}
	}
	return DefaultOffsetsRetention, nil
}
