package restore

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// Kinds of Change.
const (
	// KindChanged: a source key's value differs (source values have no order).
	KindChanged = "changed"
	// KindForward and KindBackward: a sink offset moved up or down.
	KindForward  = "forward"
	KindBackward = "backward"
	// KindAppeared: present in b, not in a. KindVanished: the reverse.
	KindAppeared = "appeared"
	KindVanished = "vanished"
)

// Change is one offset that differs between two snapshots.
type Change struct {
	Connector string `json:"connector"`
	// Type is "source" or "sink".
	Type string `json:"type"`
	// Kind is changed, forward, backward, appeared or vanished.
	Kind      string `json:"kind"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Key, Old and New are a source key and its values in a and b (Old is
	// absent when it appeared, New when it vanished).
	Key snapshot.Bytes `json:"key,omitempty"`
	Old snapshot.Bytes `json:"old,omitempty"`
	New snapshot.Bytes `json:"new,omitempty"`
	// Group, OldOffset and NewOffset are a sink group and its committed
	// offsets in a and b.
	Group     string `json:"group,omitempty"`
	OldOffset *int64 `json:"old_offset,omitempty"`
	NewOffset *int64 `json:"new_offset,omitempty"`
}

// Diff compares a with b, per connector and partition, and returns every
// offset that differs, sorted by connector, type, topic, partition and
// key. scope limits it to these connectors; empty compares every
// connector either holds. Source keys are compared by exact bytes in each
// topic and partition; sink offsets per partition of the connector's group.
// Keys without a connector and foreign groups are not compared.
func Diff(a, b *snapshot.Snapshot, scope []string) []Change {
	names := scope
	if len(names) == 0 {
		set := map[string]bool{}
		for _, s := range []*snapshot.Snapshot{a, b} {
			for _, c := range s.Connectors {
				set[c.Name] = true
			}
			for _, o := range s.SourceOffsets {
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
	var out []Change
	for _, name := range names {
		out = append(out, diffSource(name, ai.SourceOffsetsOf(name), bi.SourceOffsetsOf(name))...)
		out = append(out, diffSink(name, ai, bi)...)
	}
	return out
}

type tpk struct {
	topic string
	part  int32
	key   string
}

func diffSource(name string, a, b iter.Seq[*snapshot.SourceOffset]) []Change {
	index := func(os iter.Seq[*snapshot.SourceOffset]) map[tpk][]byte {
		m := make(map[tpk][]byte)
		for o := range os {
			m[tpk{o.Topic, o.Partition, string(o.Key)}] = o.Value
		}
		return m
	}
	am, bm := index(a), index(b)
	var out []Change
	for k, av := range am {
		c := Change{Connector: name, Type: snapshot.TypeSource, Topic: k.topic, Partition: k.part, Key: snapshot.Bytes(k.key), Old: av}
		bv, ok := bm[k]
		switch {
		case !ok:
			c.Kind = KindVanished
		case !bytes.Equal(av, bv):
			c.Kind, c.New = KindChanged, bv
		default:
			continue
		}
		out = append(out, c)
	}
	for k, bv := range bm {
		if _, ok := am[k]; !ok {
			out = append(out, Change{Connector: name, Type: snapshot.TypeSource, Kind: KindAppeared, Topic: k.topic, Partition: k.part, Key: snapshot.Bytes(k.key), New: bv})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x.Topic != y.Topic {
			return x.Topic < y.Topic
		}
		if x.Partition != y.Partition {
			return x.Partition < y.Partition
		}
		return bytes.Compare(x.Key, y.Key) < 0
	})
	return out
}

func diffSink(name string, a, b *snapshot.Index) []Change {
	ag, aok := a.SinkGroupOf(name)
	bg, bok := b.SinkGroupOf(name)
	if !aok && !bok {
		return nil
	}
	group := bg.Group
	if !bok {
		group = ag.Group
	}
	index := func(g snapshot.SinkGroup) map[topicPart]int64 {
		m := make(map[topicPart]int64, len(g.Offsets))
		for _, o := range g.Offsets {
			m[topicPart{o.Topic, o.Partition}] = o.Offset
		}
		return m
	}
	am, bm := index(ag), index(bg)
	var out []Change
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
	return out
}

func ptr(v int64) *int64 { return &v }

// PrintChanges writes changes for a person to read: per connector a line
// "connector <name>", then one line per offset, source ones as
// "source <topic>/<partition> <key> changed|appeared|vanished <values>",
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
			switch c.Kind {
			case KindChanged:
				ew.printf("  source  %s  %s  changed  %s -> %s\n", where, displayKey(c.Key), displayValue(c.Old), displayValue(c.New))
			case KindAppeared:
				ew.printf("  source  %s  %s  appeared  %s\n", where, displayKey(c.Key), displayValue(c.New))
			case KindVanished:
				ew.printf("  source  %s  %s  vanished  %s\n", where, displayKey(c.Key), displayValue(c.Old))
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
	ew.printf("diff: %s differ; source: %d changed, %d appeared, %d vanished; sink: %d moved forward, %d moved backward, %d appeared, %d vanished\n",
		plural(len(connectors), "connector", "connectors"),
		counts["source "+KindChanged], counts["source "+KindAppeared], counts["source "+KindVanished],
		counts["sink "+KindForward], counts["sink "+KindBackward], counts["sink "+KindAppeared], counts["sink "+KindVanished])
	return ew.err
}
