package daemon

import (
	"slices"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// sinkState is what the daemon keeps of a snapshot between runs to compare
// sink offsets: its cluster and sink groups, far smaller than the
// snapshot itself.
type sinkState struct {
	clusterID string
	groups    []snapshot.SinkGroup
	at        time.Time // when the snapshot was captured
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
	return &sinkState{clusterID: s.ClusterID, groups: s.SinkGroups, at: s.CreatedAt}
}

// movedBackwards counts, per connector, the sink offsets of prev that are
// lower in cur or missing from it, as restore's comparison (the one of
// diff and the page) finds them. Every sink connector of cur has an entry,
// zero when nothing moved back. A nil prev, or one from another cluster, is
// no baseline: every count is zero.
func movedBackwards(prev, cur *sinkState) map[string]int {
	counts := map[string]int{}
	label := map[string]string{}
	for _, g := range cur.groups {
		counts[sinkConnector(g)] = 0
		label[g.Group] = sinkConnector(g)
	}
	if prev == nil || prev.clusterID != cur.clusterID {
		return counts
	}
	for _, g := range prev.groups {
		if _, ok := label[g.Group]; !ok {
			label[g.Group] = sinkConnector(g)
		}
	}
	for _, ch := range restore.CompareSinkGroups(prev.groups, cur.groups).Changes {
		if ch.Kind == restore.KindBackward || ch.Kind == restore.KindVanished {
			counts[label[ch.Group]]++
		}
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

// restoredSince zeroes, in counts, the connectors an offsetkeeper restore
// wrote between from and to (an undo snapshot of the connector taken
// then): a rollback of sink offsets is no reset to alert on. It returns
// the connectors zeroed, with their undo snapshot.
func restoredSince(counts map[string]int, infos []snapshot.Info, from, to time.Time) map[string]string {
	out := map[string]string{}
	for _, i := range infos {
		if i.EffectiveKind() != snapshot.KindUndo || !i.CreatedAt.After(from) || i.CreatedAt.After(to) {
			continue
		}
		for conn, n := range counts {
			if n > 0 && slices.Contains(i.Scope, conn) {
				counts[conn] = 0
				out[conn] = i.ID
			}
		}
	}
	return out
}
