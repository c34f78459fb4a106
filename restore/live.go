package restore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// CaptureLive reads the live state of the connectors in opts.Connectors
// (the whole cluster when empty) as a snapshot with reason undo: NewPlan
// compares with it, and the same capture, stored, is the undo snapshot of a
// restore.
//
// It is snapshot.Capture plus what a restore of snap needs to see: the own
// offsets topics (offsets.storage.topic) that snap's connectors had, when
// they exist here, even if no live config names them; and, in a scoped
// capture, the sink group of every connector in scope, found by its live
// config or, without one, by the group snap recorded. A connector in scope
// with no config here gets an entry (HasConfig false) carrying the type,
// group and offsets topic snap gave it, so that restoring this capture
// writes back to the same places. snap may be nil.
//
// A worker offsets topic (opts.OffsetsTopics) that does not exist is
// ErrTopicMissing with the command that creates it.
func CaptureLive(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, opts Options) (*snapshot.Snapshot, error) {
	live, _, err := captureLive(ctx, cl, snap, opts, liveRead{})
	return live, err
}

// liveCapturer is the Capturer of a plan's live capture, with the client
// and the options it was made with.
type liveCapturer struct {
	cl   *kgo.Client
	opts capture.Options
	c    *capture.Capturer
}

// liveRead says how captureLive reads.
type liveRead struct {
	// reuse is read through when it was made for the same client and
	// capture options; else a new Capturer is made, incremental when
	// asked.
	reuse       *liveCapturer
	incremental bool
	// last reads through Capturer.CaptureLast: the Capturer keeps nothing
	// for a next capture.
	last bool
}

// captureLive is CaptureLive read as how says. It returns the Capturer
// used, for the next capture.
func captureLive(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, opts Options, how liveRead) (*snapshot.Snapshot, *liveCapturer, error) {
	opts.defaults()
	adm := kadm.NewClient(cl)
	scope := opts.Connectors
	scopeSet := make(map[string]bool, len(scope))
	for _, n := range scope {
		scopeSet[n] = true
	}
	inScope := func(name string) bool { return len(scope) == 0 || scopeSet[name] }

	// Offsets topics: the worker's, plus the snapshot connectors' own.
	var own []string
	needs := map[string][]string{} // of each own topic, why it is needed
	if snap != nil {
		for _, c := range snap.Connectors {
			if inScope(c.Name) && c.OffsetsTopic != "" && !slices.Contains(opts.OffsetsTopics, c.OffsetsTopic) {
				if !slices.Contains(own, c.OffsetsTopic) {
					own = append(own, c.OffsetsTopic)
				}
				needs[c.OffsetsTopic] = append(needs[c.OffsetsTopic], fmt.Sprintf("the offsets topic of connector %q", c.Name))
			}
		}
	}
	exists, err := TopicsExist(ctx, adm, append(slices.Clone(opts.OffsetsTopics), own...))
	if err != nil {
		return nil, nil, err
	}
	for t, n := range opts.AbsentOffsetsTopics {
		if n > 0 && (slices.Contains(own, t) || slices.Contains(opts.OffsetsTopics, t)) {
			exists[t] = true // a dry run's --create-topics creates it: read as empty
		}
	}
	if err := missingWorkerTopics(ctx, adm, snap, opts, func(t string) (bool, []string) { return exists[t], needs[t] }, own); err != nil {
		return nil, nil, err
	}
	var extra []string
	for _, t := range own {
		if exists[t] {
			extra = append(extra, t)
		}
	}

	copts := opts.captureOptions(scope, extra)
	copts.Incremental = how.incremental
	lc := how.reuse
	if lc == nil || lc.cl != cl || !reflect.DeepEqual(lc.opts, copts) {
		lc = &liveCapturer{cl: cl, opts: copts, c: capture.NewCapturer(cl, copts)}
	}
	captureFn := lc.c.Capture
	if how.last {
		captureFn = lc.c.CaptureLast
	}
	live, err := captureFn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read live state of %s: %w", scopeName(scope), err)
	}
	if snap == nil {
		return live, lc, nil
	}
	if len(scope) == 0 {
		if err := addSnapGroups(ctx, adm, snap, live); err != nil {
			return nil, nil, err
		}
		return live, lc, nil
	}

	// A scoped capture finds groups through live configs only: add the
	// groups and entries of connectors known only from the snapshot.
	snapIdx, liveIdx := snapshot.NewIndex(snap), snapshot.NewIndex(live)
	at := make(map[string]int, len(live.Connectors))
	for i, c := range live.Connectors {
		at[c.Name] = i
	}
	for _, name := range scope {
		sc, inSnap := snapIdx.Connector(name)
		lc, ok := liveIdx.Connector(name)
		if !ok {
			lc = snapshot.Connector{Name: name, Type: snapshot.TypeUnknown, Tasks: -1}
			if inSnap {
				lc.Type = sc.Type
			}
		}
		if !lc.HasConfig {
			if lc.OffsetsTopic == "" && inSnap {
				lc.OffsetsTopic = sc.OffsetsTopic
			}
			if lc.Group == "" {
				lc.Group = snapGroupName(snapIdx, name)
			}
			if lc.Type == snapshot.TypeUnknown && inSnap {
				lc.Type = sc.Type
			}
		}
		if !ok {
			live.Connectors = append(live.Connectors, lc)
		} else {
			live.Connectors[at[name]] = lc
		}
		if _, has := liveIdx.SinkGroupOf(name); has {
			continue
		}
		group := lc.Group
		if group == "" || lc.Type == snapshot.TypeSource && lc.HasConfig {
			continue
		}
		g, found, err := capture.ReadGroup(ctx, adm, group)
		if err != nil {
			return nil, nil, err
		}
		if found {
			g.Connector = name
			live.SinkGroups = append(live.SinkGroups, g)
		}
	}
	live.Normalize()
	return live, lc, nil
}

// missingWorkerTopics is the error of a capture whose worker offsets
// topics do not all exist, nil when they do. Nothing can be read without
// them: it names every topic to create at once, the connectors' own
// offsets topics (own) as the snapshot has them, and their sink topics.
// topic says whether a topic exists, and why an own one is needed.
func missingWorkerTopics(ctx context.Context, adm *kadm.Client, snap *snapshot.Snapshot, opts Options, topic func(string) (exists bool, needed []string), own []string) error {
	var missing []MissingTopic
	for _, t := range opts.OffsetsTopics {
		if ok, _ := topic(t); !ok {
			missing = append(missing, MissingTopic{Topic: t, Partitions: snap.PartitionCount(t), Needed: []string{"the worker offsets topic"}})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	for _, t := range own {
		if ok, needed := topic(t); !ok {
			missing = append(missing, MissingTopic{Topic: t, Partitions: snap.PartitionCount(t), Needed: needed})
		}
	}
	return missingTopics(ctx, adm, snap, opts, opts.Connectors, missing)
}

// addSnapGroups adds to a whole-cluster capture the groups snap records
// for connectors the capture found no group of (it finds them through
// live configs and Connect's connect-<name> default): the group of a
// connector with a group.id override and no config here yet, after a
// restore into another cluster, say. A plan reads them so; a diff must
// too.
func addSnapGroups(ctx context.Context, adm *kadm.Client, snap, live *snapshot.Snapshot) error {
	have := map[string]bool{}
	for _, g := range live.SinkGroups {
		have[g.Group] = true
		if g.Connector != "" {
			have["\x00"+g.Connector] = true
		}
	}
	added := false
	for _, sg := range snap.SinkGroups {
		if sg.Connector == "" || have[sg.Group] || have["\x00"+sg.Connector] {
			continue
		}
		g, found, err := capture.ReadGroup(ctx, adm, sg.Group)
		if err != nil {
			return err
		}
		if found {
			g.Connector = sg.Connector
			live.SinkGroups = append(live.SinkGroups, g)
			added = true
		}
	}
	if added {
		live.Normalize()
	}
	return nil
}

// snapGroupName is the group a snapshot records for connector, or "".
func snapGroupName(snap *snapshot.Index, connector string) string {
	if g, ok := snap.SinkGroupOf(connector); ok {
		return g.Group
	}
	if c, ok := snap.Connector(connector); ok {
		return c.Group
	}
	return ""
}

// TopicsExist tells which of topics exist.
func TopicsExist(ctx context.Context, adm *kadm.Client, topics []string) (map[string]bool, error) {
	out := make(map[string]bool, len(topics))
	if len(topics) == 0 {
		return out, nil
	}
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("read metadata of topics %v: %w", topics, err)
	}
	for _, t := range topics {
		d, ok := md.Topics[t]
		switch {
		case !ok, errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			out[t] = false
		case d.Err != nil:
			return nil, fmt.Errorf("read metadata of topic %q: %w", t, d.Err)
		default:
			out[t] = len(d.Partitions) > 0
		}
	}
	return out, nil
}

func scopeName(scope []string) string {
	switch len(scope) {
	case 0:
		return "the cluster"
	case 1:
		return fmt.Sprintf("connector %q", scope[0])
	}
	return plural(len(scope), "connector", "connectors")
}
