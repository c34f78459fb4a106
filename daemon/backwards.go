package daemon

import "github.com/offsetkeeper/offsetkeeper/snapshot"

// sinkKey is one committed offset's place: group, topic and partition.
type sinkKey struct {
	group     string
	topic     string
	partition int32
}

// sinkState is what the daemon keeps of a snapshot between runs to compare
// sink offsets: far smaller than the snapshot itself.
type sinkState struct {
	clusterID string
	offsets   map[sinkKey]int64
	// connector is the connector label of each group.
	connector map[string]string
}

// sinkConnector is the connector label of a sink group: its connector, or
// the group name when no connector is known.
func sinkConnector(g snapshot.SinkGroup) string {
	if g.Connector != "" {
		return g.Connector
	}
	return g.Group
}

func sinkStateOf(s *snapshot.Snapshot) *sinkState {
	st := &sinkState{clusterID: s.ClusterID, offsets: map[sinkKey]int64{}, connector: map[string]string{}}
	for _, g := range s.SinkGroups {
		st.connector[g.Group] = sinkConnector(g)
		for _, o := range g.Offsets {
			st.offsets[sinkKey{g.Group, o.Topic, o.Partition}] = o.Offset
		}
	}
	return st
}

// movedBackwards counts, per connector, the sink offsets of prev that are
// lower in cur or missing from it. Every sink connector of cur has an entry,
// zero when nothing moved back. A nil prev, or one from another cluster, is
// no baseline: every count is zero.
func movedBackwards(prev, cur *sinkState) map[string]int {
	counts := map[string]int{}
	for _, c := range cur.connector {
		counts[c] = 0
	}
	if prev == nil || prev.clusterID != cur.clusterID {
		return counts
	}
	for k, was := range prev.offsets {
		now, ok := cur.offsets[k]
		if ok && now >= was {
			continue
		}
		c, ok := cur.connector[k.group]
		if !ok {
			c = prev.connector[k.group]
		}
		counts[c]++
	}
	return counts
}

// sourceResets are the source offsets the journal saw reset between two
// snapshot runs: a snapshot holds no source history to compare (a
// streamed one holds no source offsets at all), the journal sees every
// record.
type sourceResets struct {
	tombstoned, rewound int
	// byConnector counts per connector, then kind (snapshot.EventSource*).
	byConnector map[string]map[string]int
}

// sourceResetsOf keeps the source kinds of the journal's reset counts.
func sourceResetsOf(counts map[string]map[string]int) *sourceResets {
	r := &sourceResets{byConnector: map[string]map[string]int{}}
	for conn, kinds := range counts {
		for kind, n := range kinds {
			switch kind {
			case snapshot.EventSourceTombstoned:
				r.tombstoned += n
			case snapshot.EventSourceRewound:
				r.rewound += n
			default:
				continue
			}
			if r.byConnector[conn] == nil {
				r.byConnector[conn] = map[string]int{}
			}
			r.byConnector[conn][kind] += n
		}
	}
	return r
}

// total is every source offset reset; 0 for nil.
func (r *sourceResets) total() int {
	if r == nil {
		return 0
	}
	return r.tombstoned + r.rewound
}
