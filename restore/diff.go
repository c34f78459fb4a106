package restore

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Kinds of Change: the one vocabulary of diff, its JSON and the daemon's
// page.
const (
	// KindChanged: a source key's value differs (source values have no order).
	KindChanged = "changed"
	// KindForward and KindBackward: a sink offset moved up or down.
	KindForward  = "forward"
	KindBackward = "backward"
	// KindAppeared: present in b, not in a. KindVanished: the reverse.
	KindAppeared = "appeared"
	KindVanished = "vanished"
	// KindStray: b holds a copy of a source key on a partition other than
	// the one the key is written to (murmur2 of the key), that a does not
	// hold: a worker reads every copy, and which one wins is left to
	// chance. Reported once per key, whatever the number of copies.
	KindStray = "stray"
)

// Change is one offset that differs between two snapshots.
type Change struct {
	Connector string `json:"connector"`
	// Type is "source" or "sink".
	Type string `json:"type"`
	// Kind is changed, forward, backward, appeared, vanished or stray.
	Kind string `json:"kind"`
	// Topic and Partition are where the offset is: for a source key, the
	// copy compared in b (in a when it vanished), or the stray copy.
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Key, Old and New are a source key and its values in a and b (Old is
	// absent when it appeared, New when it vanished); for a stray, New is
	// the stray copy's value and Old the value compared in b.
	Key snapshot.Bytes `json:"key,omitempty"`
	Old snapshot.Bytes `json:"old,omitempty"`
	New snapshot.Bytes `json:"new,omitempty"`
	// Group, OldOffset and NewOffset are a sink group and its committed
	// offsets in a and b.
	Group     string `json:"group,omitempty"`
	OldOffset *int64 `json:"old_offset,omitempty"`
	NewOffset *int64 `json:"new_offset,omitempty"`
	// SourcePartition is the source partition of a source key, as the
	// snapshot decoded it (the daemon's page shows it); nil if it did not.
	SourcePartition snapshot.Bytes `json:"-"`
}

// Comparison is what Compare found.
type Comparison struct {
	// Changes are the offsets that differ, sorted as Diff sorts them.
	Changes []Change
	// Unchanged counts the source keys and sink offsets found equal.
	Unchanged int
}

// Diff compares a with b and returns every offset that differs, sorted by
// connector, type, topic, partition and key (see Compare).
func Diff(a, b *snapshot.Snapshot, scope []string) []Change {
	return Compare(a, b, scope).Changes
}

// Compare compares a with b as a Connect worker reads them. scope limits
// it to these connectors; empty compares every connector either holds.
//
// Source keys are compared per connector and offsets topic by exact key
// bytes, wherever in the topic the key lives: a worker reads the whole
// topic. The value compared is the copy on the key's murmur2 partition of
// the topic's partition count (the one a worker writes, and a restore
// verifies); without one, the copy on the lowest partition. So a key that
// only moved partition (the topic was re-partitioned) is unchanged, and
// other copies of a key in b that a does not hold are reported once, as a
// stray. A tombstone is no offset. Sink offsets are compared per partition
// of the connector's group. Keys without a connector and foreign groups
// are not compared.
func Compare(a, b *snapshot.Snapshot, scope []string) Comparison {
	names := scope
	if len(names) == 0 {
		set := map[string]bool{}
		for _, s := range []*snapshot.Snapshot{a, b} {
			for _, c := range s.Connectors {
				set[c.Name] = true
			}
			for _, o := range s.SourceTable().All() {
				if o.Connector != "" {
					set[o.Connector] = true
				}
			}
			for _, g := range s.SinkGroups {
				if g.Connector != "" {
					set[g.Connector] = true
				}
			}
		}
		names = sortedKeys(set)
	}
	ai, bi := snapshot.NewIndex(a), snapshot.NewIndex(b)
	var c Comparison
	for _, name := range names {
		src, same := diffSource(name, sourceView(a, ai.SourceOffsetsOf(name)), sourceView(b, bi.SourceOffsetsOf(name)))
		c.Changes = append(c.Changes, src...)
		c.Unchanged += same
		sink, same := diffSink(name, ai, bi)
		c.Changes = append(c.Changes, sink...)
		c.Unchanged += same
	}
	return c
}

// topicKey is a source key in one offsets topic.
type topicKey struct {
	topic, key string
}

// keyCopy is one copy of a source key: the offset that holds it.
type keyCopy struct {
	*snapshot.SourceOffset
	// home: on the key's murmur2 partition; off: on another one (neither
	// when the topic's partition count is not known).
	home, off bool
}

// keyCopies are the copies of one key in one topic, the one compared
// first, then the others by partition.
type keyCopies []keyCopy

// sourceView groups a connector's source offsets by topic and key.
func sourceView(s *snapshot.Snapshot, offs iter.Seq[*snapshot.SourceOffset]) map[topicKey]keyCopies {
	m := map[topicKey]keyCopies{}
	parts := map[string]int32{}
	for o := range offs {
		if o.Value == nil {
			continue
		}
		n, ok := parts[o.Topic]
		if !ok {
			n = s.PartitionCount(o.Topic)
			parts[o.Topic] = n
		}
		k := topicKey{o.Topic, string(o.Key)}
		home := n > 0 && o.Partition == snapshot.PartitionFor(o.Key, n)
		m[k] = append(m[k], keyCopy{o, home, n > 0 && !home})
	}
	for k, cs := range m {
		if len(cs) > 1 {
			slices.SortFunc(cs, func(x, y keyCopy) int {
				if x.home != y.home {
					if x.home {
						return -1
					}
					return 1
				}
				return int(x.Partition) - int(y.Partition)
			})
			m[k] = cs
		}
	}
	return m
}

// holds reports whether cs holds a copy on partition p with value v.
func (cs keyCopies) holds(p int32, v []byte) bool {
	return slices.ContainsFunc(cs, func(c keyCopy) bool { return c.Partition == p && bytes.Equal(c.Value, v) })
}

func diffSource(name string, am, bm map[topicKey]keyCopies) (out []Change, same int) {
	change := func(kind string, o *snapshot.SourceOffset) Change {
		return Change{Connector: name, Type: snapshot.TypeSource, Kind: kind, Topic: o.Topic, Partition: o.Partition, Key: snapshot.Bytes(o.Key), SourcePartition: snapshot.Bytes(o.SourcePartition)}
	}
	for k, as := range am {
		bs, ok := bm[k]
		switch {
		case !ok:
			c := change(KindVanished, as[0].SourceOffset)
			c.Old = as[0].Value
			out = append(out, c)
		case !bytes.Equal(as[0].Value, bs[0].Value):
			c := change(KindChanged, bs[0].SourceOffset)
			c.Old, c.New = as[0].Value, bs[0].Value
			out = append(out, c)
		default:
			same++
		}
	}
	for k, bs := range bm {
		as, ok := am[k]
		if !ok {
			c := change(KindAppeared, bs[0].SourceOffset)
			c.New = bs[0].Value
			out = append(out, c)
		}
		// A copy off the murmur2 partition that a lacks, once per key: the
		// first of the others, or the one compared when it is off too.
		for i, x := range bs {
			if (i > 0 || x.off) && !as.holds(x.Partition, x.Value) {
				c := change(KindStray, x.SourceOffset)
				c.Old, c.New = bs[0].Value, x.Value
				out = append(out, c)
				break
			}
		}
	}
	slices.SortFunc(out, func(x, y Change) int {
		switch {
		case x.Topic != y.Topic:
			return strings.Compare(x.Topic, y.Topic)
		case x.Partition != y.Partition:
			return int(x.Partition) - int(y.Partition)
		case !bytes.Equal(x.Key, y.Key):
			return bytes.Compare(x.Key, y.Key)
		}
		return strings.Compare(x.Kind, y.Kind)
	})
	return out, same
}

func diffSink(name string, a, b *snapshot.Index) (out []Change, same int) {
	ag, aok := a.SinkGroupOf(name)
	bg, bok := b.SinkGroupOf(name)
	if !aok && !bok {
		return nil, 0
	}
	group := bg.Group
	if !bok {
		group = ag.Group
	}
	return sinkChanges(name, group, ag.Offsets, bg.Offsets)
}

// CompareSinkGroups compares the sink offsets of a and b by group, topic
// and partition: every group either holds, whether a connector is known
// for it or not (Change.Connector is the group's connector, empty for a
// foreign group). It is Compare's rule for sink offsets, for those who
// keep only the groups between two captures (the daemon's rewind
// metrics).
func CompareSinkGroups(a, b []snapshot.SinkGroup) Comparison {
	byGroup := func(gs []snapshot.SinkGroup) map[string]snapshot.SinkGroup {
		m := make(map[string]snapshot.SinkGroup, len(gs))
		for _, g := range gs {
			m[g.Group] = g
		}
		return m
	}
	am, bm := byGroup(a), byGroup(b)
	groups := map[string]bool{}
	for g := range am {
		groups[g] = true
	}
	for g := range bm {
		groups[g] = true
	}
	var c Comparison
	for _, g := range sortedKeys(groups) {
		ag, bg := am[g], bm[g]
		conn := bg.Connector
		if _, ok := bm[g]; !ok {
			conn = ag.Connector
		}
		out, same := sinkChanges(conn, g, ag.Offsets, bg.Offsets)
		c.Changes = append(c.Changes, out...)
		c.Unchanged += same
	}
	return c
}

// sinkChanges compares one group's offsets, a's with b's, per partition.
func sinkChanges(name, group string, a, b []snapshot.SinkOffset) (out []Change, same int) {
	index := func(offs []snapshot.SinkOffset) map[topicPart]int64 {
		m := make(map[topicPart]int64, len(offs))
		for _, o := range offs {
			m[topicPart{o.Topic, o.Partition}] = o.Offset
		}
		return m
	}
	am, bm := index(a), index(b)
	for tp, ao := range am {
		c := Change{Connector: name, Type: snapshot.TypeSink, Group: group, Topic: tp.topic, Partition: tp.part, OldOffset: ptr(ao)}
		bo, ok := bm[tp]
		switch {
		case !ok:
			c.Kind = KindVanished
		case bo > ao:
			c.Kind, c.NewOffset = KindForward, ptr(bo)
		case bo < ao:
			c.Kind, c.NewOffset = KindBackward, ptr(bo)
		default:
			same++
			continue
		}
		out = append(out, c)
	}
	for tp, bo := range bm {
		if _, ok := am[tp]; !ok {
			out = append(out, Change{Connector: name, Type: snapshot.TypeSink, Kind: KindAppeared, Group: group, Topic: tp.topic, Partition: tp.part, NewOffset: ptr(bo)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, same
}

func ptr(v int64) *int64 { return &v }

// PrintChanges writes changes for a person to read: per connector a line
// "connector <name>", then one line per offset, source ones as
// "source <topic>/<partition> <key> changed|appeared|vanished|stray copy
// <values>",
// sink ones as "sink <group> <topic>/<partition> moved forward|moved
// backward|appeared|vanished <offsets>", and a final summary line. No
// changes print "no differences".
func PrintChanges(w io.Writer, changes []Change) error {
	ew := &errWriter{w: w}
	if len(changes) == 0 {
		ew.printf("no differences\n")
		return ew.err
	}
	var counts = map[string]int{}
	var connectors []string
	for _, c := range changes {
		if !slices.Contains(connectors, c.Connector) {
			connectors = append(connectors, c.Connector)
			ew.printf("connector %s\n", c.Connector)
		}
		counts[c.Type+" "+c.Kind]++
		where := fmt.Sprintf("%s/%d", c.Topic, c.Partition)
		if c.Type == snapshot.TypeSource {
			where = snapshot.Where(c.Topic, c.Partition)
			switch c.Kind {
			case KindChanged:
				ew.printf("  source  %s  %s  changed  %s -> %s\n", where, DisplayKey(c.Key), displayValue(c.Old), displayValue(c.New))
			case KindAppeared:
				ew.printf("  source  %s  %s  appeared  %s\n", where, DisplayKey(c.Key), displayValue(c.New))
			case KindVanished:
				ew.printf("  source  %s  %s  vanished  %s\n", where, DisplayKey(c.Key), displayValue(c.Old))
			case KindStray:
				ew.printf("  source  %s  %s  stray copy  %s (off the key's murmur2 partition; the copy compared is %s)\n", where, DisplayKey(c.Key), displayValue(c.New), displayValue(c.Old))
			}
			continue
		}
		switch c.Kind {
		case KindForward, KindBackward:
			ew.printf("  sink  %s  %s  moved %s  %d -> %d\n", c.Group, where, c.Kind, *c.OldOffset, *c.NewOffset)
		case KindAppeared:
			ew.printf("  sink  %s  %s  appeared  %d\n", c.Group, where, *c.NewOffset)
		case KindVanished:
			ew.printf("  sink  %s  %s  vanished  %d\n", c.Group, where, *c.OldOffset)
		}
	}
	strays := ""
	if n := counts["source "+KindStray]; n > 0 {
		strays = ", " + plural(n, "stray copy", "stray copies")
	}
	ew.printf("diff: %s differ; source: %d changed, %d appeared, %d vanished%s; sink: %d moved forward, %d moved backward, %d appeared, %d vanished\n",
		plural(len(connectors), "connector", "connectors"),
		counts["source "+KindChanged], counts["source "+KindAppeared], counts["source "+KindVanished], strays,
		counts["sink "+KindForward], counts["sink "+KindBackward], counts["sink "+KindAppeared], counts["sink "+KindVanished])
	return ew.err
}
