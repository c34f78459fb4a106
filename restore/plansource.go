package restore

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// planSource compares one connector's source keys.
//
// It is a merge of two lists in the order of the changes (topic, partition,
// key): what the snapshot wants, by target topic, and what lives here on
// each key's murmur2 partition. A capture and Normalize leave both sides in
// that order already in the usual case (keys on their murmur2 partitions,
// the same partition count), so a sort is needed only for input in another
// order; and nothing is copied per key: the changes point at the bytes of
// the snapshot and of the live capture.
func (p *Plan) planSource(snap *snapshot.Snapshot, name string, seenPairs map[[2]string]bool) (*SourcePlan, error) {
	sc, _ := p.snapIdx.Connector(name)
	lc, _ := p.liveIdx.Connector(name)
	s := &sourcePlanner{
		p: p, snap: snap, name: name, seenPairs: seenPairs,
		workers: p.opts.OffsetsTopics, lc: lc, ownSnap: sc.OffsetsTopic,
		st: p.snapTable(snap), liveOffs: p.Live.SourceTable(),
	}
	s.sp = &SourcePlan{
		Target:      s.primaryFor(s.workers[0]),
		ExactlyOnce: sc.ExactlyOnce != "" || lc.ExactlyOnce != "" || s.ownSnap != "" || lc.OffsetsTopic != "",
		touched:     kadm.TopicsSet{},
		snap:        s.st,
		live:        p.Live.SourceTable(),
	}
	s.wanted()
	if missing := s.placeTargets(); missing {
		return nil, nil
	}
	s.pick()
	s.lives()
	s.warnDuplicates()
	s.changes(s.merge())
	return s.sp, nil
}

// sourcePlanner is planSource's work on one connector.
type sourcePlanner struct {
	p         *Plan
	snap      *snapshot.Snapshot
	name      string
	seenPairs map[[2]string]bool
	workers   []string
	lc        snapshot.Connector
	// ownSnap is the connector's own offsets topic in the snapshot.
	ownSnap string
	// st holds the snapshot's source offsets, liveOffs the live ones.
	st       *snapshot.SourceTable
	liveOffs *snapshot.SourceTable
	sp       *SourcePlan

	// positions are the connector's keys in st.
	positions []int32
	// targets are the topics written to, in the order met; then topics,
	// sorted, every topic of the plan.
	targets, topics []string
	// want holds one entry per snapshot key and target topic, picks one
	// per target and key.
	want, picks []srcWant
	// have are the live keys on their murmur2 partitions, strays the
	// removals of copies elsewhere.
	have   []srcHave
	strays []srcChange
	dups   []dupWarning
}

// snapOff is what a plan reads of one of the snapshot's source offsets.
type snapOff struct {
	Topic      string
	Partition  int32
	Key, Value []byte
}

// so returns the snapshot's source offset at pos.
func (s *sourcePlanner) so(pos int32) snapOff {
	return snapOff{Topic: s.st.Topic(pos), Partition: s.st.Partition(pos), Key: s.st.Key(pos), Value: s.st.Value(pos)}
}

// srcWant is one key the snapshot wants in one target topic.
type srcWant struct {
	pos     int32 // in the snapshot's SourceTable
	part    int32 // the key's murmur2 partition of the target here
	target  int32 // in targets, then in topics
	primary bool
}

// srcHave is one key that lives here on its murmur2 partition.
type srcHave struct {
	pos    int32 // in Live's SourceTable
	target int32 // in topics
}

// dupWarning is the warning about a key the snapshot holds in several
// partitions of one topic, sorted by topic and key before it is given.
type dupWarning struct {
	topic string
	key   []byte
	msg   string
}

// placedKey is where the snapshot held a key.
type placedKey struct {
	topic string
	part  int32
	key   string
}

// srcPair is a pick and a live key of the merge; -1 is none.
type srcPair struct{ w, h int32 }

// home is the partition of n that a key is written to: its murmur2
// partition, or snapshot.NoPartition in a plan through REST.
func (p *Plan) home(key []byte, n int32) int32 {
	if p.rest {
		return snapshot.NoPartition
	}
	return snapshot.PartitionFor(key, n)
}

func (s *sourcePlanner) workerFor(t string) string {
	if slices.Contains(s.workers, t) {
		return t
	}
	return s.workers[0]
}

// primaryFor is the topic the connector reads here, for keys the snapshot
// held in t.
func (s *sourcePlanner) primaryFor(t string) string {
	switch {
	case s.lc.HasConfig && s.lc.OffsetsTopic != "":
		return s.lc.OffsetsTopic
	case s.lc.HasConfig:
		return s.workerFor(t)
	case s.ownSnap != "":
		return s.ownSnap
	case s.lc.OffsetsTopic != "":
		return s.lc.OffsetsTopic
	}
	return s.workerFor(t)
}

// wanted lists what the snapshot wants: one entry per snapshot key and
// target topic. A key the snapshot holds in a worker topic stays there;
// the copy the connector read (primary) also goes where it reads now.
func (s *sourcePlanner) wanted() {
	targetsOf := map[string][]int32{} // by snapshot topic
	s.positions = s.p.snapIdx.Positions(s.name)
	s.want = make([]srcWant, 0, len(s.positions))
	for _, pos := range s.positions {
		o := s.so(pos)
		ts, ok := targetsOf[o.Topic]
		if !ok {
			ts = s.targetsOf(o.Topic)
			targetsOf[o.Topic] = ts
		}
		primary := s.ownSnap == "" || o.Topic == s.ownSnap
		for _, t := range ts {
			s.want = append(s.want, srcWant{pos: pos, target: t, primary: primary})
		}
	}
}

// targetsOf returns the targets of the keys the snapshot held in topic,
// adding them to s.targets, and warns once per pair of topics whose
// partition counts differ.
func (s *sourcePlanner) targetsOf(topic string) []int32 {
	var names []string
	if s.ownSnap == "" || topic != s.ownSnap {
		names = append(names, s.workerFor(topic))
	}
	if t := s.primaryFor(topic); (s.ownSnap == "" || topic == s.ownSnap) && !slices.Contains(names, t) {
		names = append(names, t)
	}
	var ts []int32
	for _, target := range names {
		if pair := [2]string{topic, target}; !s.seenPairs[pair] {
			s.seenPairs[pair] = true
			if sn, ln := s.snap.PartitionCount(topic), s.p.partitions[target]; sn > 0 && ln > 0 && sn != ln {
				s.p.warnf("offsets topic %q has %d partitions here, the snapshot's %q had %d: keys are written to murmur2(key) %% %d", target, ln, topic, sn, ln)
			}
		}
		i := slices.Index(s.targets, target)
		if i < 0 {
			i = len(s.targets)
			s.targets = append(s.targets, target)
		}
		ts = append(ts, int32(i))
	}
	return ts
}

// better reports whether snapshot key a is a better source for a target
// than b, when both hold the same key.
func (s *sourcePlanner) better(a, b *srcWant) bool {
	if a.primary != b.primary {
		return a.primary
	}
	ao, bo := s.so(a.pos), s.so(b.pos)
	if ao.Topic == bo.Topic {
		am := ao.Partition == snapshot.PartitionFor(ao.Key, s.snap.PartitionCount(ao.Topic))
		bm := bo.Partition == snapshot.PartitionFor(bo.Key, s.snap.PartitionCount(bo.Topic))
		if am != bm {
			return am
		}
		return ao.Partition < bo.Partition
	}
	return ao.Topic < bo.Topic
}

// placeTargets sorts the plan's topics, notes on the plan each target that
// does not exist here (and returns true then: nothing is placed), and gives
// each wanted key its target's position in topics and its murmur2
// partition there, sorted in the changes' order.
func (s *sourcePlanner) placeTargets() (missing bool) {
	topics := slices.Clone(s.workers)
	if !slices.Contains(topics, s.sp.Target) {
		topics = append(topics, s.sp.Target)
	}
	for _, t := range s.targets {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	sort.Strings(topics)
	s.topics, s.sp.Topics = topics, topics
	if s.missingTargets() {
		return true
	}
	// From here on, target numbers are positions in topics, whose order
	// is the changes' order.
	rank := make([]int32, len(s.targets))
	for i, t := range s.targets {
		rank[i] = int32(slices.Index(topics, t))
	}
	for i := range s.want {
		w := &s.want[i]
		w.target = rank[w.target]
		w.part = s.p.home(s.st.Key(w.pos), s.p.partitions[topics[w.target]])
	}
	cmpWant := func(a, b srcWant) int {
		if c := cmp.Compare(a.target, b.target); c != 0 {
			return c
		}
		if c := cmp.Compare(a.part, b.part); c != 0 {
			return c
		}
		return bytes.Compare(s.st.Key(a.pos), s.st.Key(b.pos))
	}
	if !slices.IsSortedFunc(s.want, cmpWant) {
		// Stable: among copies of one key the snapshot's order decides
		// ties, as it did when they were met one by one.
		slices.SortStableFunc(s.want, cmpWant)
	}
	return false
}

// missingTargets notes on the plan every target that does not exist here,
// with the snapshot's partition count of its first key by bytes, and
// reports whether there was one.
func (s *sourcePlanner) missingTargets() bool {
	found := false
	for _, t := range s.topics {
		ti := int32(slices.Index(s.targets, t))
		if _, ok := s.p.partitions[t]; ok || ti < 0 {
			continue
		}
		var first *srcWant
		for i := range s.want {
			w := &s.want[i]
			if w.target != ti {
				continue
			}
			if first == nil {
				first = w
				continue
			}
			if c := bytes.Compare(s.st.Key(w.pos), s.st.Key(first.pos)); c < 0 || c == 0 && s.better(w, first) {
				first = w
			}
		}
		found = true
		s.p.missing = append(s.p.missing, MissingTopic{Topic: t, Partitions: s.snap.PartitionCount(s.st.Topic(first.pos)), Needed: []string{fmt.Sprintf("the offsets topic of connector %q", s.name)}})
	}
	return found
}

// pick keeps one wanted key per target and key: copies of a key in one
// target are adjacent now (same target, same key, so the same partition).
func (s *sourcePlanner) pick() {
	merged := map[string]bool{}
	want := s.want
	picks := want[:0] // in place: a pick is never ahead of its group
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && want[j].target == want[i].target && bytes.Equal(s.st.Key(want[j].pos), s.st.Key(want[i].pos)) {
			j++
		}
		best := want[i]
		if j-i > 1 {
			best = s.best(want[i:j], merged)
		}
		picks = append(picks, best)
		i = j
	}
	s.picks = picks
	for _, pair := range sortedKeys(merged) {
		a, b, _ := strings.Cut(pair, "\x00")
		s.p.warnf("connector %q: keys the snapshot holds in both %q and %q go to one topic here; where both hold a key, the copy from the topic the connector read wins", s.name, a, b)
	}
}

// best picks among the copies of one key in one target, notes in merged
// the pairs of topics they come from, and keeps the warning about copies
// in several partitions of one topic.
func (s *sourcePlanner) best(group []srcWant, merged map[string]bool) srcWant {
	best := group[0]
	for k := 1; k < len(group); k++ {
		o, cur := s.so(group[k].pos), s.so(best.pos)
		if cur.Topic != o.Topic {
			merged[min(cur.Topic, o.Topic)+"\x00"+max(cur.Topic, o.Topic)] = true
		}
		if s.better(&group[k], &best) {
			best = group[k]
		}
	}
	first := s.st.Topic(group[0].pos)
	var ps []int32
	for _, c := range group {
		if o := s.so(c.pos); o.Topic == first {
			ps = append(ps, o.Partition)
		}
	}
	if len(ps) > 1 {
		slices.Sort(ps)
		bo, topic := s.so(best.pos), s.topics[best.target]
		s.dups = append(s.dups, dupWarning{topic, bo.Key, fmt.Sprintf("connector %q: key %s is in partitions %s of %q in the snapshot (written to a wrong partition by hand, or partitions were added); the restore writes the value from partition %d to partition %d of %q, and gives every other copy the value the snapshot held there", s.name, DisplayKey(bo.Key), joinInt32(ps), bo.Topic, bo.Partition, best.part, topic)})
	}
	return best
}

// lives lists what lives here, on each key's murmur2 partition, in the
// same order as the picks; copies elsewhere are strays.
func (s *sourcePlanner) lives() {
	livePositions := s.p.liveIdx.Positions(s.name)
	s.have = make([]srcHave, 0, len(livePositions))
	// Where the snapshot held each key (its position there), to tell its
	// own copies off their murmur2 partition (written by hand, or left by
	// a topic that grew since) from ones that appeared since; made for the
	// first stray only.
	var snapAt map[placedKey]int32
	lastTopic, lastTarget, lastPart := "", int32(-1), int32(-1)
	for _, pos := range livePositions {
		o := s.liveOffs.At(pos)
		if o.Topic != lastTopic || lastTarget < 0 {
			lastTopic, lastTarget, lastPart = o.Topic, int32(slices.Index(s.topics, o.Topic)), -1
		}
		if lastTarget < 0 {
			continue
		}
		if o.Partition != lastPart {
			s.sp.touched.Add(o.Topic, o.Partition)
			lastPart = o.Partition
		}
		n := s.p.partitions[o.Topic]
		if home := s.p.home(o.Key, n); o.Partition != home {
			if snapAt == nil {
				snapAt = map[placedKey]int32{}
				for _, sp := range s.positions {
					so := s.so(sp)
					snapAt[placedKey{so.Topic, so.Partition, string(so.Key)}] = sp
				}
			}
			if sp, held := snapAt[placedKey{o.Topic, o.Partition, string(o.Key)}]; held {
				warn := fmt.Sprintf("connector %q: key %s also lives in partition %d of %q, not its murmur2 partition %d, as it did in the snapshot: a worker's view of it is nondeterministic; the restore keeps that copy, with the value the snapshot held there; once the connector has committed again, remove it with a tombstone written to partition %d", s.name, DisplayKey(o.Key), o.Partition, o.Topic, home, o.Partition)
				if cmd := tombstoneCommand(s.p.bootstrap, o.Topic, o.Partition, o.Key); cmd != "" {
					s.p.warnCmd([]string{cmd}, "%s: %s", warn, cmd)
				} else {
					s.p.warnf("%s by hand", warn)
				}
				if !bytes.Equal(s.so(sp).Value, o.Value) {
					// Changed since (a reset after the topic grew): a
					// worker may read this copy last, so it gets the
					// snapshot's value too, on this very partition.
					s.strays = append(s.strays, srcChange{snap: sp, live: pos, part: o.Partition, topic: uint16(lastTarget), action: actChanged, stray: true})
				}
				continue
			}
			// A copy the snapshot did not have: a worker reads it, so it
			// goes, with a tombstone on the partition it lives in.
			s.strays = append(s.strays, srcChange{snap: -1, live: pos, part: o.Partition, topic: uint16(lastTarget), action: actRemoved, stray: true})
			continue
		}
		s.have = append(s.have, srcHave{pos: pos, target: lastTarget})
	}
	cmpHave := func(a, b srcHave) int {
		if c := cmp.Compare(a.target, b.target); c != 0 {
			return c
		}
		ao, bo := s.liveOffs.At(a.pos), s.liveOffs.At(b.pos)
		if c := cmp.Compare(ao.Partition, bo.Partition); c != 0 {
			return c
		}
		return bytes.Compare(ao.Key, bo.Key)
	}
	if !slices.IsSortedFunc(s.have, cmpHave) {
		slices.SortStableFunc(s.have, cmpHave)
	}
}

// warnDuplicates gives the warnings of best, by topic and key.
func (s *sourcePlanner) warnDuplicates() {
	slices.SortStableFunc(s.dups, func(a, b dupWarning) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return bytes.Compare(a.key, b.key)
	})
	for _, d := range s.dups {
		s.p.warnf("%s", d.msg)
	}
}

// merge pairs the picks with the live keys, both in the changes' order.
func (s *sourcePlanner) merge() []srcPair {
	picks, have := s.picks, s.have
	pairs := make([]srcPair, 0, max(len(picks), len(have)))
	i, j := 0, 0
	for i < len(picks) || j < len(have) {
		c := 0
		switch {
		case i == len(picks):
			c = 1
		case j == len(have):
			c = -1
		default:
			w, h := &picks[i], &have[j]
			if c = cmp.Compare(w.target, h.target); c == 0 {
				ho := s.liveOffs.At(h.pos)
				if c = cmp.Compare(w.part, ho.Partition); c == 0 {
					c = bytes.Compare(s.st.Key(w.pos), ho.Key)
				}
			}
		}
		// Two live copies of one key in one partition (not from a
		// capture): the last one counts.
		if c >= 0 {
			for j+1 < len(have) && have[j+1].target == have[j].target && bytes.Equal(s.liveOffs.Key(have[j+1].pos), s.liveOffs.Key(have[j].pos)) {
				j++
			}
		}
		switch {
		case c < 0:
			pairs = append(pairs, srcPair{int32(i), -1})
			i++
		case c > 0:
			pairs = append(pairs, srcPair{-1, int32(j)})
			j++
		default:
			pairs = append(pairs, srcPair{int32(i), int32(j)})
			i++
			j++
		}
	}
	return pairs
}

// changes makes the plan's changes of the pairs, allocated once at their
// exact number, and adds the strays in order.
func (s *sourcePlanner) changes(pairs []srcPair) {
	p, sp := s.p, s.sp
	sp.changes = make([]srcChange, len(pairs), len(pairs)+len(s.strays))
	if p.froms == nil {
		p.froms = map[topicPart]string{}
	}
	sp.froms = p.froms
	lastTopic, lastPart := int32(-1), int32(-1)
	// fromTopic and fromPart are the snapshot partition whose From was
	// made last (fromPart -1: none).
	fromTopic, fromPart := "", int32(-1)
	for k, pr := range pairs {
		ch := &sp.changes[k]
		if pr.w < 0 {
			h := &s.have[pr.h]
			o := s.liveOffs.At(h.pos)
			*ch = srcChange{snap: -1, live: h.pos, part: o.Partition, topic: uint16(h.target), action: actRemoved}
			continue
		}
		w := &s.picks[pr.w]
		o := s.so(w.pos)
		*ch = srcChange{snap: w.pos, live: -1, part: w.part, topic: uint16(w.target), action: actAdded}
		if w.target != lastTopic || w.part != lastPart {
			sp.touched.Add(s.topics[w.target], w.part)
			lastTopic, lastPart = w.target, w.part
		}
		if (o.Topic != s.topics[w.target] || o.Partition != w.part) && (o.Partition != fromPart || o.Topic != fromTopic) {
			// One string per snapshot partition, not per key.
			tp := topicPart{o.Topic, o.Partition}
			if _, ok := p.froms[tp]; !ok {
				p.froms[tp] = fmt.Sprintf("%s/%d", o.Topic, o.Partition)
			}
			fromTopic, fromPart = o.Topic, o.Partition
		}
		if pr.h >= 0 {
			ch.live = s.have[pr.h].pos
			ch.action = actChanged
			if bytes.Equal(s.liveOffs.Value(ch.live), o.Value) {
				ch.action = actUnchanged
			}
		}
	}
	if len(s.strays) > 0 {
		sp.changes = append(sp.changes, s.strays...)
		slices.SortFunc(sp.changes, func(a, b srcChange) int {
			if c := cmp.Compare(a.topic, b.topic); c != 0 {
				return c
			}
			if c := cmp.Compare(a.part, b.part); c != 0 {
				return c
			}
			return bytes.Compare(sp.key(&a), sp.key(&b))
		})
	}
}
