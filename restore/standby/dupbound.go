package standby

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// DuplicateBound is, for one sink partition on the standby, how many
// records its connector may deliver again after a failover: those from
// the offset the standby's group holds (translated) to the end of the
// standby's copy of the partition. The primary's sink can have delivered
// only records the standby's copy holds before its end, and the standby's
// sink reads from Committed on, so no more than Records of them come
// twice. Records the mirror copies after the bound was read, or that the
// standby's own source connectors write, are not counted: they are new.
type DuplicateBound struct {
	Connector string `json:"connector,omitempty"`
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the group's offset on the standby, End the end of the
	// standby's partition when the bound was read.
	Committed int64 `json:"committed"`
	End       int64 `json:"end"`
	Records   int64 `json:"records"`
}

// DuplicateBounds reads the end of every partition the sink groups of
// state (as applied to the standby: translated) commit on and returns
// the bound of each, sorted by group, topic and partition.
func DuplicateBounds(ctx context.Context, cl *kgo.Client, state *snapshot.Snapshot) ([]DuplicateBound, error) {
	if state == nil {
		return nil, nil
	}
	var topics []string
	for _, g := range state.SinkGroups {
		for _, o := range g.Offsets {
			if !slices.Contains(topics, o.Topic) {
				topics = append(topics, o.Topic)
			}
		}
	}
	if len(topics) == 0 {
		return nil, nil
	}
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("read the ends of the standby's sink topics: %w", err)
	}
	var out []DuplicateBound
	for _, g := range state.SinkGroups {
		for _, o := range g.Offsets {
			b := DuplicateBound{Connector: g.Connector, Group: g.Group, Topic: o.Topic, Partition: o.Partition, Committed: o.Offset}
			e, ok := ends.Lookup(o.Topic, o.Partition)
			if !ok {
				return nil, fmt.Errorf("read the end of %s/%d on the standby: the standby does not have the partition", o.Topic, o.Partition)
			}
			if e.Err != nil {
				return nil, fmt.Errorf("read the end of %s/%d on the standby: %w", o.Topic, o.Partition, e.Err)
			}
			b.End = e.Offset
			b.Records = max(0, b.End-b.Committed)
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b DuplicateBound) int {
		if a.Group != b.Group {
			return strings.Compare(a.Group, b.Group)
		}
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return int(a.Partition - b.Partition)
	})
	return out, nil
}
