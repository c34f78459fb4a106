package drill

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// offsetsOf is one side of the completeness check: the connectors and
// offsets of the state, or of Connect (its REST API, or the config and
// offsets topics read now).
type offsetsOf struct {
	conns map[string]*connOffsets
}

// connOffsets are one connector's offsets as Connect's REST API keys them.
type connOffsets struct {
	name, typ, state, group string
	// known: Connect has the connector (a config); a connector known only
	// by offsets left behind is not.
	known bool
	// source offsets by partition as GET .../offsets shows it; a nil
	// value is "offset": null (a key not in Connect's canonical form).
	source map[string][]byte
	// strays are the values of copies of a partition's canonical key off
	// its murmur2 partition: a worker reads either copy (the capture
	// warns of them), so Connect may show one of these.
	strays map[string][][]byte
	// sink offsets by "topic/partition"; hasGroup is false when the group
	// is absent.
	sink     map[string]int64
	hasGroup bool
}

func (o *offsetsOf) conn(name, typ string) *connOffsets {
	c := o.conns[name]
	if c == nil {
		c = &connOffsets{name: name, typ: typ, source: map[string][]byte{}, strays: map[string][][]byte{}, sink: map[string]int64{}}
		o.conns[name] = c
	}
	return c
}

// offsetsIn reads s as Connect would show it: each connector's source
// partitions (the copy of a key on its murmur2 partition wins; a
// tombstone removes it) and each sink connector's group. parts are the
// partition counts of the offsets topics (nil for a snapshot read through
// the REST API).
func offsetsIn(s *snapshot.Snapshot, parts map[string]int32) *offsetsOf {
	o := &offsetsOf{conns: map[string]*connOffsets{}}
	for _, c := range s.Connectors {
		co := o.conn(c.Name, c.Type)
		co.known = c.HasConfig
		co.state, co.group = c.TargetState, c.Group
	}
	tab := s.SourceTable()
	// Several keys can be one partition to Connect: copies in two
	// partitions, or the same map in another field order. GET .../offsets
	// shows the value of the canonical key (Connect serializes the map
	// again to look it up), the copy on its murmur2 partition first.
	rank := map[string]int{}
	for i := range int32(tab.Len()) {
		name := tab.Connector(i)
		if name == "" {
			continue
		}
		_, part, _, err := connectjson.ParseKey(tab.Key(i))
		if err != nil {
			continue // failed the Restorable check
		}
		rp := string(connectjson.RESTMap(part))
		r := 1
		if parts == nil || tab.Partition(i) == snapshot.PartitionFor(tab.Key(i), parts[tab.Topic(i)]) {
			r++
		}
		if bytes.Equal(tab.Key(i), connectjson.CanonicalKey(name, part)) {
			r += 2
		}
		id := name + "\x00" + rp
		co := o.conn(name, snapshot.TypeSource)
		v := tab.Value(i)
		if v != nil {
			if m, err := connectjson.ParseMap(v); err == nil {
				v = connectjson.RESTMap(m)
			}
		}
		if r == 3 && v != nil {
			co.strays[rp] = append(co.strays[rp], v)
		}
		if rank[id] > r {
			continue
		}
		rank[id] = r
		switch {
		case v == nil:
			delete(co.source, rp)
		case r < 3 || string(v) == "null" && parts == nil:
			co.source[rp] = nil // Connect shows "offset": null
		default:
			co.source[rp] = v
		}
	}
	for _, g := range s.SinkGroups {
		name := g.Connector
		if name == "" {
			name = g.Group
		}
		co := o.conn(name, snapshot.TypeSink)
		co.hasGroup, co.group = true, g.Group
		for _, so := range g.Offsets {
			co.sink[so.Topic+"/"+strconv.Itoa(int(so.Partition))] = so.Offset
		}
	}
	return o
}

func (c *connOffsets) halted() bool {
	return c.state == snapshot.StateStopped || c.state == snapshot.StatePaused
}

// compareWithConnect checks that every connector Connect has (view) is in
// the state with the same partitions; stopped or paused in both, with the
// same offsets; running, with no partition behind the state (the
// journal's movement rule, journal.Rewound, for source offsets).
func compareWithConnect(state, view *offsetsOf, f *findings) (compared int) {
	for _, name := range slices.Sorted(maps.Keys(view.conns)) {
		vc := view.conns[name]
		if !vc.known {
			continue
		}
		compared++
		sc, ok := state.conns[name]
		if !ok {
			f.fail(Failure{Cause: CauseConnectorAbsent, Connector: name, Partition: -1, Detail: fmt.Sprintf("Connect has %s connector %q, the state does not hold it", vc.typ, name)})
			continue
		}
		exact := vc.halted() && sc.halted()
		if vc.typ == snapshot.TypeSink {
			compareSink(sc, vc, exact, f)
			continue
		}
		for _, rp := range slices.Sorted(maps.Keys(vc.source)) {
			v := vc.source[rp]
			s, ok := sc.source[rp]
			switch {
			case !ok:
				f.fail(Failure{Cause: CausePartitionAbsent, Connector: name, Partition: -1, SourcePartition: rp, Detail: "Connect has this partition, the state does not"})
			case v == nil:
				f.note("connector %q partition %s: no key in Connect's canonical form, GET shows offset null: not compared", name, rp)
			case s == nil:
				f.fail(Failure{Cause: CausePartitionAbsent, Connector: name, Partition: -1, SourcePartition: rp, Detail: fmt.Sprintf("Connect reads %s under the key in its canonical form, which the state does not hold", v)})
			case (exact && !bytes.Equal(s, v) || !exact && journal.Rewound(s, v)) && strayAgrees(sc.strays[rp], v, exact):
				f.note("connector %q partition %s: Connect reads %s, the value of a stray copy of its key (off its murmur2 partition); a restore writes %s, the copy on it",
					name, rp, v, s)
			case exact && !bytes.Equal(s, v):
				f.fail(Failure{Cause: CauseOffsetDiffers, Connector: name, Partition: -1, SourcePartition: rp, Detail: fmt.Sprintf("%s: Connect has %s, the state %s", vc.state, v, s)})
			case !exact && journal.Rewound(s, v):
				f.fail(Failure{Cause: CauseBehind, Connector: name, Partition: -1, SourcePartition: rp, Detail: fmt.Sprintf("Connect has %s, behind the state's %s", v, s)})
			}
		}
		for _, rp := range slices.Sorted(maps.Keys(sc.source)) {
			if _, ok := vc.source[rp]; !ok {
				f.fail(Failure{Cause: CausePartitionExtra, Connector: name, Partition: -1, SourcePartition: rp, Detail: "the state holds this partition, Connect does not (reset or removed since?)"})
			}
		}
	}
	var gone []string
	for _, name := range slices.Sorted(maps.Keys(state.conns)) {
		if vc, ok := view.conns[name]; state.conns[name].known && (!ok || !vc.known) {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		f.note("the state holds %d connectors Connect does not have now (deleted since?): %v", len(gone), gone)
	}
	return compared
}

func compareSink(sc, vc *connOffsets, exact bool, f *findings) {
	name := vc.name
	if !sc.hasGroup && len(vc.sink) > 0 {
		f.fail(Failure{Cause: CauseGroupAbsent, Connector: name, Group: vc.group, Partition: -1,
			Detail: fmt.Sprintf("Connect reports %s for sink connector %q in group %q, the state holds no such group", english.Count(len(vc.sink), "offset", "offsets"), name, vc.group)})
		return
	}
	for _, tp := range slices.Sorted(maps.Keys(vc.sink)) {
		v := vc.sink[tp]
		s, ok := sc.sink[tp]
		topic, part := splitTP(tp)
		switch {
		case !ok:
			f.fail(Failure{Cause: CausePartitionAbsent, Connector: name, Group: sc.group, Topic: topic, Partition: part, Detail: fmt.Sprintf("Connect has offset %d, the state none", v)})
		case exact && s != v:
			f.fail(Failure{Cause: CauseOffsetDiffers, Connector: name, Group: sc.group, Topic: topic, Partition: part, Detail: fmt.Sprintf("%s: Connect has %d, the state %d", vc.state, v, s)})
		case !exact && v < s:
			f.fail(Failure{Cause: CauseBehind, Connector: name, Group: sc.group, Topic: topic, Partition: part, Detail: fmt.Sprintf("Connect has %d, behind the state's %d", v, s)})
		}
	}
	for _, tp := range slices.Sorted(maps.Keys(sc.sink)) {
		if _, ok := vc.sink[tp]; !ok {
			topic, part := splitTP(tp)
			f.fail(Failure{Cause: CausePartitionExtra, Connector: name, Group: sc.group, Topic: topic, Partition: part, Detail: fmt.Sprintf("the state holds offset %d, Connect none", sc.sink[tp])})
		}
	}
}

func splitTP(tp string) (string, int32) {
	i := strings.LastIndexByte(tp, '/')
	p, _ := strconv.Atoi(tp[i+1:])
	return tp[:i], int32(p)
}

// strayAgrees reports whether Connect's value v is that of one of the
// stray copies (exact), or not behind one (running).
func strayAgrees(strays [][]byte, v []byte, exact bool) bool {
	for _, s := range strays {
		if exact && bytes.Equal(s, v) || !exact && !journal.Rewound(s, v) {
			return true
		}
	}
	return false
}
