package restore

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// This file is Verify's first try: it reads the offsets topics back a few
// partitions at a time and compares each with what the plan wrote, instead
// of making a whole new plan from a whole new live capture (the live keys,
// a SourceOffset for each and the plan's changes again: for a large
// restore, more than the rest of it). It answers only "everything
// matches"; anything else, or anything it cannot vouch for, is left to the
// full comparison, which then says what differs.

// verifyBatch is how many partitions the quick verify reads at once: what
// it holds is their live keys.
const verifyBatch = 2

// errDiffers stops the quick verify at the first difference.
var errDiffers = errors.New("differs")

// verifyQuick reports whether a new plan of p's snapshot would find
// nothing to write, having checked that this cluster's configs and
// partition counts are still those p was made with (they decide where keys
// go) and that every partition of every offsets topic compared holds
// exactly the keys of the scope that p's changes leave there, with their
// values, and every group p compared holds exactly the offsets its changes
// leave (none skipped). False means "not shown", never "differs".
func verifyQuick(ctx context.Context, cl *kgo.Client, p *Plan) bool {
	if len(p.Connectors) == 0 {
		return false
	}
	if !sameSetting(ctx, cl, p) {
		return false
	}
	if !sinksMatch(ctx, cl, p) {
		return false
	}
	// Per topic, the connectors comparing it and its position in their
	// SourcePlan.Topics.
	type compared struct {
		sp    *SourcePlan
		name  string
		topic uint16
	}
	byTopic := map[string][]compared{}
	for _, cp := range p.Connectors {
		if cp.Source == nil {
			continue
		}
		for ti, t := range cp.Source.Topics {
			byTopic[t] = append(byTopic[t], compared{cp.Source, cp.Name, uint16(ti)})
		}
	}
	for _, t := range sortedKeys(byTopic) {
		cs := byTopic[t]
		names := make(map[string]bool, len(cs))
		for _, c := range cs {
			names[c.name] = true
		}
		want := p.partitions[t]
		n, err := capture.ReadPartitions(ctx, cl, t, verifyBatch, func(pk *capture.PartitionKeys) error {
			matched := 0
			for _, c := range cs {
				lo, hi := c.sp.partRange(c.topic, pk.Partition)
				for i := lo; i < hi; i++ {
					ch := &c.sp.changes[i]
					key := c.sp.key(ch)
					v, live := pk.Lookup(key)
					if ch.action == actRemoved {
						if live {
							return errDiffers
						}
						continue
					}
					nv := c.sp.newValue(ch)
					if name, ok := capture.KeyConnector(key); !ok || string(name) != c.name || !live || nv == nil || !bytes.Equal(v, nv) {
						return errDiffers
					}
					matched++
				}
			}
			// Every live key of the scope here must be one of those.
			scoped := 0
			for k := range pk.All() {
				if name, ok := capture.KeyConnector(k); !ok || !names[string(name)] {
					continue
				}
				if snapshot.PartitionFor(k, want) != pk.Partition {
					// A copy off its murmur2 partition: the full comparison
					// tells what it is.
					return errDiffers
				}
				scoped++
			}
			if scoped != matched {
				return errDiffers
			}
			return nil
		})
		if err != nil || n != want {
			return false
		}
	}
	return true
}

// sameSetting reports whether the cluster and what the configs of p's
// connectors say about where their offsets go (the type, the own offsets
// topic, the sink group) are still what p was made with; verifyQuick
// checks the partition counts as it reads.
func sameSetting(ctx context.Context, cl *kgo.Client, p *Plan) bool {
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil || md.Cluster != p.ClusterID {
		return false
	}
	topics := p.opts.WorkerConfigTopics()
	confs, err := capture.ReadConfigs(ctx, cl, topics[0], topics[1:]...)
	if errors.Is(err, capture.ErrTopicMissing) {
		confs, err = nil, nil // as a capture with ConfigTopicOptional
	}
	if err != nil {
		return false
	}
	for _, cp := range p.Connectors {
		cc, has := confs[cp.Name]
		if has != cp.Live.HasConfig {
			return false
		}
		if !has {
			continue
		}
		// As a capture reads a config (snapshot.Connector).
		typ, own, group := snapshot.ConnectorType(cc.Config), "", ""
		if typ == snapshot.TypeSink {
			if group = cc.Config["consumer.override.group.id"]; group == "" {
				group = snapshot.DefaultGroupPrefix + cp.Name
			}
		} else {
			own = cc.Config["offsets.storage.topic"]
		}
		if typ != cp.Live.Type || own != cp.Live.OffsetsTopic || group != cp.Live.Group {
			return false
		}
	}
	return true
}

// partRange is where the changes of topic (its position in Topics) and
// partition part lie in sp's changes.
func (sp *SourcePlan) partRange(topic uint16, part int32) (lo, hi int) {
	before := func(c *srcChange, t uint16, p int32) bool {
		return c.topic < t || c.topic == t && c.part < p
	}
	lo = sort.Search(len(sp.changes), func(i int) bool { return !before(&sp.changes[i], topic, part) })
	hi = lo + sort.Search(len(sp.changes)-lo, func(i int) bool {
		c := &sp.changes[lo+i]
		return c.topic != topic || c.part != part
	})
	return lo, hi
}

// verifyGroups is how many groups the quick verify fetches at once: what it
// holds is their committed offsets, decoded (kmsg, then capture's form).
const verifyGroups = 25

// sinksMatch reports whether the group of every SinkPlan of p holds
// exactly what sinkMatches wants. The groups are listed once (each must be
// of a type a sink connector uses) and their committed offsets fetched
// verifyGroups at a time, instead of a listing, a describe and a fetch for
// each group.
func sinksMatch(ctx context.Context, cl *kgo.Client, p *Plan) bool {
	var sps []*SinkPlan
	for _, cp := range p.Connectors {
		if cp.Sink != nil {
			sps = append(sps, cp.Sink)
		}
	}
	if len(sps) == 0 {
		return true
	}
	listed, err := capture.ListedTypes(ctx, kadm.NewClient(cl))
	if err != nil {
		return false
	}
	for from := 0; from < len(sps); from += verifyGroups {
		batch := sps[from:min(from+verifyGroups, len(sps))]
		groups := make([]string, 0, len(batch))
		for _, sp := range batch {
			if !slices.Contains(groups, sp.Group) {
				groups = append(groups, sp.Group)
			}
		}
		offsets, err := capture.ReadCommitted(ctx, cl, groups, listed)
		if err != nil {
			return false
		}
		for _, sp := range batch {
			if !sinkMatches(sp, offsets[sp.Group]) {
				return false
			}
		}
	}
	return true
}

// sinkMatches reports whether a group holding offsets holds exactly the
// offsets (and metadata) sp's changes leave, a skipped one as the plan
// found it: a new plan would find every one unchanged (or skipped again).
func sinkMatches(sp *SinkPlan, offsets []snapshot.SinkOffset) bool {
	live := make(map[topicPart]snapshot.SinkOffset, len(offsets))
	for _, o := range offsets {
		live[topicPart{o.Topic, o.Partition}] = o
	}
	n := 0
	for _, ch := range sp.Changes() {
		l, ok := live[topicPart{ch.Topic, ch.Partition}]
		if ch.Action == Skipped {
			// Not written: still as the plan found it.
			if ok != (ch.Old >= 0) || ok && l.Offset != ch.Old {
				return false
			}
			if ok {
				n++
			}
			continue
		}
		if ch.Action == Removed {
			if ok {
				return false
			}
			continue
		}
		if !ok || l.Offset != ch.New || l.Metadata != ch.Metadata {
			return false
		}
		n++
	}
	return n == len(live)
}
