package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// Action is what a restore does with one offset.
type Action string

// Actions of a plan.
const (
	// Unchanged: the live offset already equals the snapshot's.
	Unchanged Action = "unchanged"
	// Changed: the live offset differs; the snapshot's is written.
	Changed Action = "changed"
	// Added: the snapshot has an offset that is missing here; it is written.
	Added Action = "added"
	// Removed: an offset lives here that the snapshot does not have; a
	// source key gets a tombstone, a sink offset is deleted.
	Removed Action = "removed"
	// Skipped: a sink offset that cannot be committed here because its
	// topic or partition does not exist.
	Skipped Action = "skipped"
)

// writes reports whether the action writes something.
func (a Action) writes() bool { return a == Changed || a == Added || a == Removed }

// Plan is the comparison of a snapshot with the live state of the
// connectors in scope: what a restore would write. It is made by NewPlan,
// printed by Print, checked by Check and carried out by Apply. A Plan is
// not safe for concurrent use.
type Plan struct {
	// Snapshot is the snapshot restored, filtered to the scope. It may
	// share its source offsets with the snapshot given to NewPlan: do not
	// modify them.
	Snapshot *snapshot.Snapshot
	// Live is the live state of the scope read by NewPlan (see CaptureLive):
	// stored before Apply, it is the undo snapshot.
	Live *snapshot.Snapshot
	// ClusterID is the live cluster's id; OtherCluster is set when it
	// differs from the snapshot's and Options.AllowOtherCluster allowed it.
	ClusterID    string
	OtherCluster bool
	// Scope names the connectors compared, sorted.
	Scope []string
	// Connectors are the per-connector comparisons, sorted by name.
	Connectors []ConnectorPlan
	// Warnings are things the operator should know before applying.
	Warnings []string
	// Notes are harmless conditions worth a line (keys no connector owns,
	// which a restore leaves alone), not warnings.
	Notes []string
	// expiring are the expiry notes among Notes (sinkexpiry.go).
	expiring []expiryAt
	// OpenRestores are the other restores' open transactions Check found,
	// on topics written to or not; Print warns of those left alone.
	OpenRestores []OpenRestore
	// SinkGuard are the sink topics recreated since the snapshot and the
	// sink offsets below their log start (sinkguard.go).
	SinkGuard []SinkGuardFinding

	opts   Options
	source *snapshot.Snapshot
	// snapIdx and liveIdx index source and Live by connector.
	snapIdx, liveIdx *snapshot.Index
	// capturer read Live and keeps what it read: Verify's capture through
	// it reads only the records written since.
	capturer *liveCapturer
	// partitions is the live partition count of every offsets topic read.
	partitions map[string]int32
	// rest is set for a plan between snapshots captured through the
	// Connect REST API (PlanREST): their keys sit on no partition.
	rest bool
	// cloud is set for a REST plan whose connectors are Confluent Cloud's
	// fully-managed ones: Cloud pauses a connector itself while it applies
	// an offsets request and resumes it, so a running one is no refusal.
	cloud bool
	// notify, when set, is told what Apply waits for (see waitReadable).
	notify func(string)
	// restoreID is the undo snapshot of the restore applying the plan: the
	// value of the snapshot.RestoreHeader on every record Apply writes.
	restoreID string
	// missing are the offsets topics the plan needs that do not exist
	// here; sinkParts the live partition count of the sink topics written
	// to (0: missing); replication the replication factor of the commands
	// that create them, bootstrap their --bootstrap-server.
	missing     []MissingTopic
	sinkParts   map[string]int32
	replication int
	bootstrap   string
	// warnCmds are the commands held by warnings (warnCmd).
	warnCmds map[string][]string
	// policies is the cleanup.policy of the topics written to, when it
	// could be described.
	policies map[string]string
	// table is source's SourceTable, made once.
	table *snapshot.SourceTable
	// froms holds the SourceChange.From strings, one per snapshot
	// partition, for the SourcePlans to make their changes with.
	froms map[topicPart]string
	// after marks the stand-in prev of NewPlanAfter; incremental is set
	// when the live state was read through its capture; verified once a
	// Verify read through (and ended) the plan's capture.
	after, incremental, verified bool
}

// ConnectorPlan is the comparison for one connector.
type ConnectorPlan struct {
	Name string
	// Type is source, sink or unknown, as the snapshot (else this cluster)
	// has it.
	Type string
	// Live is the connector as this cluster's config topic has it;
	// HasConfig is false when it has no config here.
	Live snapshot.Connector
	// REST is the connector's state as the Connect REST API reports it
	// ("RUNNING, 2 tasks"), when the caller asked it; Print shows it next to
	// the config topic's.
	REST string
	// Source is nil when source offsets are not restored for it.
	Source *SourcePlan
	// Sink is nil when sink offsets are not restored for it.
	Sink *SinkPlan
}

// State is the connector's live state for display: its target state, with
// the task count when that is not 0, or "no config".
func (c ConnectorPlan) State() string {
	if !c.Live.HasConfig {
		return "no config"
	}
	if c.Live.Tasks != 0 {
		return c.Live.TargetState + ", " + taskCount(c.Live.Tasks)
	}
	return c.Live.TargetState
}

// Writes reports whether the plan writes anything for the connector: a
// source key or a sink offset changed, added or removed. Only such a
// connector is subject to the safety checks.
func (c ConnectorPlan) Writes() bool {
	if c.Source != nil && c.Source.writes() {
		return true
	}
	if c.Sink != nil {
		for _, ch := range c.Sink.Changes() {
			if ch.Action.writes() {
				return true
			}
		}
	}
	return false
}

// busy says, in a word or a few, why the connector could not be written
// now as the config topic and its group have it: "running", "paused" (its
// tasks stay), "stopping" (STOPPED, tasks left), "its sink group has
// members"; "" when it is stopped (or has no config) and its sink group
// has no members.
func (c ConnectorPlan) busy() string {
	lc := c.Live
	switch {
	case lc.HasConfig && !lc.Stopped():
		switch lc.TargetState {
		case snapshot.StatePaused:
			return "paused"
		case snapshot.StateStopped:
			return "stopping"
		}
		return "running"
	case c.Sink != nil && c.Sink.Members > 0:
		return "its sink group has members"
	}
	return ""
}

// LeftAlone says, for a connector the plan writes nothing for although it
// runs, is paused or has group members, that the restore leaves it so:
// "unchanged, running, left alone". It is "" otherwise.
func (c ConnectorPlan) LeftAlone() string {
	busy := c.busy()
	if busy == "" || c.Writes() {
		return ""
	}
	return "unchanged, " + busy + ", left alone"
}

// SourcePlan compares a connector's source offsets.
type SourcePlan struct {
	// Target is the topic the connector reads its offsets from here: its
	// own offsets.storage.topic, or the worker's.
	Target string
	// Topics are the offsets topics compared, where live keys of the
	// connector that the snapshot lacks are tombstoned: the worker topics
	// and the target.
	Topics []string
	// ExactlyOnce is set for a connector with exactly.once.support or its
	// own offsets topic, here or in the snapshot.
	ExactlyOnce bool
	// touched are the partitions the connector's keys live in here and
	// will be written to.
	touched kadm.TopicsSet
	// changes hold every key compared, unchanged ones included, sorted by
	// topic, partition and key (see Changes): 16 bytes a key that point
	// into snap and live instead of a SourceChange of 136.
	changes []srcChange
	snap    *snapshot.SourceTable
	live    *snapshot.SourceTable
	// froms are the From strings, one per snapshot partition (shared by
	// the plan's connectors).
	froms map[topicPart]string
}

// SourceChange is one source offset key compared.
type SourceChange struct {
	Action Action
	// Topic and Partition are where the key is written: the target topic
	// and murmur2(Key) % its partition count here.
	Topic     string
	Partition int32
	// Key is the exact key bytes.
	Key []byte
	// Old is the live value (nil when Added); New is the snapshot's value
	// (nil when Removed: the record written is a tombstone).
	Old, New []byte
	// From is where the snapshot held the key, as topic/partition, when
	// that is not Topic/Partition.
	From string
	// Stray marks a write to a live copy on a partition other than the
	// key's murmur2 partition (written there by hand, or before the topic
	// grew), which a worker reads too: Removed, the tombstone of a copy the
	// snapshot did not hold; Changed, the snapshot's value for a copy it
	// held there (and that changed since). It is written to Partition
	// exactly.
	Stray bool
}

// SinkPlan compares a sink connector's consumer group offsets.
type SinkPlan struct {
	Group string
	// Exists tells whether the group exists here; a commit creates it.
	Exists  bool
	State   string
	Members int
	// changes hold every partition compared, unchanged ones included,
	// sorted by topic and partition (see Changes), with their strings in
	// names (sinkchanges.go); index finds a name when there are many.
	changes []sinkChange
	names   []string
	index   map[string]uint32
}

// SinkChange is one committed group offset compared.
type SinkChange struct {
	Action    Action
	Topic     string
	Partition int32
	// Old is the live committed offset, -1 when none; New is the
	// snapshot's, -1 when Removed.
	Old, New int64
	// LeaderEpoch and Metadata are committed with New, as the snapshot has
	// them.
	LeaderEpoch int32
	Metadata    string
	// Reason says why a Skipped offset cannot be committed.
	Reason string
}

// Counts are the totals of a plan.
type Counts struct {
	// SourceWrites are changed and added keys; Tombstones removed keys.
	SourceWrites, Tombstones int
	// SinkCommits are changed and added group offsets; SinkDeletions
	// removed ones.
	SinkCommits, SinkDeletions int
	// Unchanged source keys and sink offsets.
	SourceUnchanged, SinkUnchanged int
	// SinkSkipped offsets cannot be committed here.
	SinkSkipped int
}

// Writes is the number of records and offsets Apply would write.
func (c Counts) Writes() int {
	return c.SourceWrites + c.Tombstones + c.SinkCommits + c.SinkDeletions
}

// Counts totals the plan.
func (p *Plan) Counts() Counts {
	var c Counts
	for _, cp := range p.Connectors {
		if cp.Source != nil {
			for i := range cp.Source.changes {
				switch cp.Source.changes[i].action {
				case actChanged, actAdded:
					c.SourceWrites++
				case actRemoved:
					c.Tombstones++
				case actUnchanged:
					c.SourceUnchanged++
				}
			}
		}
		if cp.Sink != nil {
			for _, ch := range cp.Sink.Changes() {
				switch ch.Action {
				case Changed, Added:
					c.SinkCommits++
				case Removed:
					c.SinkDeletions++
				case Unchanged:
					c.SinkUnchanged++
				case Skipped:
					c.SinkSkipped++
				}
			}
		}
	}
	return c
}

// Empty reports whether the plan writes nothing.
func (p *Plan) Empty() bool { return p.Counts().Writes() == 0 }

// Differences lists, one line each, every offset where the live state
// differs from the snapshot: what a restore still has to do. Skipped sink
// offsets are not among them (they cannot be written here: see
// NotRestored). Empty after a successful restore.
func (p *Plan) Differences() []string {
	var out []string
	for _, cp := range p.Connectors {
		if cp.Source != nil {
			for _, ch := range cp.Source.Writes() {
				switch ch.Action {
				case Changed:
					out = append(out, fmt.Sprintf("connector %q: source %s/%d %s: value %s here, %s in the snapshot", cp.Name, ch.Topic, ch.Partition, DisplayKey(ch.Key), displayValue(ch.Old), displayValue(ch.New)))
				case Added:
					out = append(out, fmt.Sprintf("connector %q: source %s/%d %s: missing here, %s in the snapshot", cp.Name, ch.Topic, ch.Partition, DisplayKey(ch.Key), displayValue(ch.New)))
				case Removed:
					out = append(out, fmt.Sprintf("connector %q: source %s/%d %s: %s here, not in the snapshot", cp.Name, ch.Topic, ch.Partition, DisplayKey(ch.Key), displayValue(ch.Old)))
				}
			}
		}
		if cp.Sink != nil {
			for _, ch := range cp.Sink.Changes() {
				switch ch.Action {
				case Changed:
					out = append(out, fmt.Sprintf("connector %q: group %q %s/%d: offset %d here, %d in the snapshot", cp.Name, cp.Sink.Group, ch.Topic, ch.Partition, ch.Old, ch.New))
				case Added:
					out = append(out, fmt.Sprintf("connector %q: group %q %s/%d: no offset here, %d in the snapshot", cp.Name, cp.Sink.Group, ch.Topic, ch.Partition, ch.New))
				case Removed:
					out = append(out, fmt.Sprintf("connector %q: group %q %s/%d: offset %d here, none in the snapshot", cp.Name, cp.Sink.Group, ch.Topic, ch.Partition, ch.Old))
				}
			}
		}
	}
	return out
}

// scoped is one connector in scope and the parts of it restored.
type scoped struct {
	name         string
	source, sink bool
}

// resolveScope picks the connectors to restore: those named, which must
// be in the snapshot, or all the snapshot holds (its connectors, plus the
// names of a scoped snapshot's Scope, which held no offsets then).
func resolveScope(snap *snapshot.Snapshot, opts Options) ([]scoped, error) {
	return resolveScopeIn(snap, snapshot.NewIndex(snap), opts)
}

// resolveScopeIn is resolveScope with idx, an index of snap.
func resolveScopeIn(snap *snapshot.Snapshot, idx *snapshot.Index, opts Options) ([]scoped, error) {
	known := map[string]bool{}
	for _, c := range snap.Connectors {
		known[c.Name] = true
	}
	for _, n := range snap.Scope {
		known[n] = true
	}
	// Source offsets come in runs of one connector's keys: one map
	// write per run.
	hasKeys := map[string]bool{}
	last := ""
	st := snap.SourceTable()
	for i := range int32(st.Len()) {
		if c := st.Connector(i); c != last && c != "" {
			known[c], hasKeys[c], last = true, true, c
		}
	}
	for _, g := range snap.SinkGroups {
		if g.Connector != "" {
			known[g.Connector] = true
		}
	}
	var names []string
	if len(opts.Connectors) > 0 {
		var missing []string
		for _, n := range opts.Connectors {
			if !known[n] {
				missing = append(missing, n)
				continue
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		if len(missing) > 0 {
			return nil, &NotInSnapshotError{Snapshot: snap.ID, Missing: missing}
		}
	} else {
		for n := range known {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []scoped
	for _, n := range names {
		typ := snapshot.TypeUnknown
		if c, ok := idx.Connector(n); ok {
			typ = c.Type
		}
		_, hasGroup := idx.SinkGroupOf(n)
		s := scoped{
			name:   n,
			source: !opts.SinkOnly && (typ != snapshot.TypeSink || hasKeys[n]),
			sink:   !opts.SourceOnly && (typ == snapshot.TypeSink || typ == snapshot.TypeUnknown || hasGroup),
		}
		if s.source || s.sink {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		what := "connectors"
		switch {
		case opts.SourceOnly:
			what = "source connectors"
		case opts.SinkOnly:
			what = "sink connectors"
		}
		return nil, fmt.Errorf("%w: snapshot %s holds no %s to restore", ErrEmptyScope, snap.ID, what)
	}
	return out, nil
}

// NewPlan compares snap with the live state of the connectors in scope
// (Options.Connectors, else every connector of snap) and returns what a
// restore would write. It writes nothing.
//
// It fails with ErrOtherCluster when snap is from another cluster and
// Options.AllowOtherCluster is not set, ErrNotInSnapshot for a named
// connector snap lacks, ErrEmptyScope when no connector is left, and
// ErrTopicMissing when an offsets topic a key must be written to does not
// exist. It does not run the safety checks: see Check.
//
// Source keys are compared per connector by exact key bytes and target
// topic. The target of the keys the connector read (its primary copies) is
// the topic it reads here: its own offsets.storage.topic if its live
// config has one; else, when it has a live config, the worker topic; else
// (no config here) the own topic the snapshot recorded, or the worker
// topic. A key the snapshot holds in a worker topic (a primary key of a
// connector without its own topic, or the secondary copy an exactly-once
// connector writes) is also restored to that worker topic when it is one
// of Options.OffsetsTopics, else to the first of them. Where two copies
// meet in one target, the primary one wins. The topics compared for a
// connector are the worker topics and its targets: a live key of the
// connector there that the snapshot lacks is tombstoned. The live value of
// a key is the one on its murmur2 partition; a copy elsewhere is reported
// in Warnings and left alone. Sink offsets are compared per partition of
// the group the live config names (else the snapshot's).
//
// The plan points into snap (its keys, values and source offsets) and
// keeps it for Verify: do not modify snap while the plan is in use.
func NewPlan(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, opts Options) (*Plan, error) {
	return newPlan(ctx, cl, snap, opts, nil)
}

// NewPlanAfter is NewPlan of a later state snap against the same cluster
// (a standby kept in step): it reads the live state through the live
// capture of prev, an earlier plan with the same client and options, so
// that only what was written to the cluster since prev's read (by prev's
// Apply or anyone else) is read; the capture equals a full one (see
// capture.Options.Incremental). Without prev, or when prev's capture
// cannot be read through (other options, a Verify ended it), it is
// NewPlan. LiveReadIncremental tells which.
func NewPlanAfter(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, opts Options, prev *Plan) (*Plan, error) {
	if prev == nil || prev.capturer == nil || prev.verified {
		return NewPlan(ctx, cl, snap, opts)
	}
	return newPlan(ctx, cl, snap, opts, &Plan{capturer: prev.capturer, after: true})
}

// LiveReadIncremental reports whether the plan's live state was read
// through an earlier plan's capture (NewPlanAfter): only what was
// written since.
func (p *Plan) LiveReadIncremental() bool { return p.incremental }

// newPlan is NewPlan. With prev, an earlier plan of the same snapshot
// (Verify's), it reuses prev's index of the snapshot and, when the scope
// is the same, its filtered snapshot and its live Capturer: the live
// capture then reads only the records written since prev's (an
// incremental capture equals a full one).
func newPlan(ctx context.Context, cl *kgo.Client, snap *snapshot.Snapshot, opts Options, prev *Plan) (*Plan, error) {
	var after *liveCapturer
	switch {
	case prev != nil && prev.after:
		after, prev = prev.capturer, nil
	case prev != nil && prev.source != snap:
		prev = nil
	}
	p, scope, err := startPlan(snap, opts, prev)
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cluster metadata: %w", err)
	}
	p.ClusterID, p.replication, p.bootstrap = md.Cluster, replicationFactor(len(md.Brokers)), seedsOf(cl)
	if err := p.checkCluster(); err != nil {
		return nil, err
	}
	p.noteUnparsed()

	copts := opts
	copts.Connectors = p.Scope
	reuse := after
	if prev != nil && slices.Equal(prev.Scope, p.Scope) {
		reuse = prev.capturer
		p.Snapshot = prev.Snapshot
	} else {
		p.Snapshot = filterScope(snap, p.Scope)
	}
	// The live capture keeps what it read, so that Verify reads only what
	// was written since; Verify's own capture keeps nothing.
	live, lc, err := captureLive(ctx, cl, snap, copts, liveRead{reuse: reuse, incremental: true, last: prev != nil})
	if err != nil {
		return nil, err
	}
	p.capturer, p.incremental = lc, after != nil && lc == after
	if err := p.compare(ctx, adm, scope, live); err != nil {
		return nil, err
	}
	if len(p.missing) > 0 {
		return nil, missingTopics(ctx, adm, snap, opts, p.Scope, p.missing)
	}
	if err := p.checkSinkBounds(ctx, adm); err != nil {
		return nil, err
	}
	p.guardSinkTopics(p.liveSinkTopics(ctx, adm))
	p.noteExpiry(ctx, adm)
	p.describePolicies(ctx, adm)
	return p, nil
}

// PlanStates is the plan NewPlan makes when the live state of the
// connectors is live, without reading a cluster: the page's plan of a
// restore to a moment, whose live state is the journal's newest. It
// compares exactly as NewPlan does (the same scope, targets, tombstones
// and sink groups), so its changes and Counts are the CLI's dry run's for
// the same two states. What only a cluster can tell is left out: sink
// offsets outside their partition's log, topics' cleanup policies, and
// open transactions; an offsets topic that live does not hold is a
// warning instead of an error.
func PlanStates(snap, live *snapshot.Snapshot, opts Options) (*Plan, error) {
	if live == nil {
		return nil, errors.New("plan restore: no live state")
	}
	return planStates(snap, live, opts, false)
}

// planStates is PlanStates; rest plans between two snapshots captured
// through the Connect REST API (see PlanREST).
func planStates(snap, live *snapshot.Snapshot, opts Options, rest bool) (*Plan, error) {
	if rest {
		// Their source offsets sit on no partition, in the connector's
		// own offsets topic or "" (the worker's, unnamed through REST).
		opts.OffsetsTopics = []string{""}
	}
	p, scope, err := startPlan(snap, opts, nil)
	if err != nil {
		return nil, err
	}
	if rest {
		p.rest = true
		for _, s := range []*snapshot.Snapshot{snap, live} {
			p.partitions[""] = 0
			for _, c := range s.Connectors {
				if c.OffsetsTopic != "" {
					p.partitions[c.OffsetsTopic] = 0
				}
			}
			// SourceTable: snap may be read with store.RestoreSink, whose
			// table is compact.
			t := s.SourceTable()
			for i := range int32(t.Len()) {
				p.partitions[t.Topic(i)] = 0
			}
		}
	}
	p.ClusterID = live.ClusterID
	if err := p.checkCluster(); err != nil {
		return nil, err
	}
	p.noteUnparsed()
	p.Snapshot = filterScope(snap, p.Scope)
	if err := p.compare(context.Background(), nil, scope, live.Filter(p.Scope)); err != nil {
		return nil, err
	}
	p.guardSinkTopics(live.SinkTopics)
	for _, m := range p.missing {
		p.warnf("offsets topic %s does not exist in the newest state: a restore creates it or fails", m.Topic)
	}
	return p, nil
}

// startPlan is the plan of snap before anything live is read: its options
// checked and defaulted, its index (prev's when given) and its scope.
func startPlan(snap *snapshot.Snapshot, opts Options, prev *Plan) (*Plan, []scoped, error) {
	if snap == nil {
		return nil, nil, errors.New("plan restore: no snapshot")
	}
	if opts.SourceOnly && opts.SinkOnly {
		return nil, nil, errors.New("plan restore: source only and sink only exclude each other")
	}
	opts.defaults()
	snapIdx := snapshot.NewIndex(snap)
	if prev != nil {
		snapIdx = prev.snapIdx
	}
	scope, err := resolveScopeIn(snap, snapIdx, opts)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(scope))
	for i, s := range scope {
		names[i] = s.name
	}
	p := &Plan{
		Scope:      names,
		opts:       opts,
		source:     snap,
		snapIdx:    snapIdx,
		partitions: map[string]int32{},
		policies:   map[string]string{},
		sinkParts:  map[string]int32{},
	}
	return p, scope, nil
}

// checkCluster compares the snapshot's cluster with p.ClusterID, the
// live one's.
func (p *Plan) checkCluster() error {
	snap, here := p.source, p.ClusterID
	switch {
	case snap.ClusterID == "":
		p.warnf("snapshot %s records no cluster id: cannot tell whether it was taken from this cluster (%s)", snap.ID, here)
	case snap.ClusterID != here && !p.opts.AllowOtherCluster:
		return fmt.Errorf("%w: snapshot %s was taken from cluster %q, this is cluster %q; to move offsets to another cluster on purpose (a migration or disaster recovery), pass --allow-other-cluster", ErrOtherCluster, snap.ID, snap.ClusterID, here)
	case snap.ClusterID != here:
		p.OtherCluster = true
		p.warnf("snapshot %s is from cluster %q, this is cluster %q (allowed: migration)", snap.ID, snap.ClusterID, here)
	}
	return nil
}

// noteUnparsed notes the snapshot's keys that no connector owns.
func (p *Plan) noteUnparsed() {
	if n := p.source.Unparsed(); n > 0 && len(p.opts.Connectors) == 0 && !p.opts.IncludeUnowned {
		p.Notes = append(p.Notes, fmt.Sprintf("the snapshot holds %s that are not [connector, {partition}]; no connector owns them and they are not restored (restore --include-unowned writes them too)", plural(n, "offsets topic key", "offsets topic keys")))
	}
}

// compare compares the snapshot with live, the live state of the scope,
// connector by connector. adm reads a sink group the live state lacks;
// nil (PlanStates) takes it as absent.
func (p *Plan) compare(ctx context.Context, adm *kadm.Client, scope []scoped, live *snapshot.Snapshot) error {
	p.Live = live
	p.liveIdx = snapshot.NewIndex(live)
	for _, t := range live.Topics {
		if t.Role == snapshot.RoleOffsets {
			p.partitions[t.Name] = int32(len(t.Partitions))
		}
	}
	seenPairs := map[[2]string]bool{}
	for _, s := range scope {
		sc, inSnap := p.snapIdx.Connector(s.name)
		lc, _ := p.liveIdx.Connector(s.name)
		cp := ConnectorPlan{Name: s.name, Type: lc.Type, Live: lc}
		if inSnap {
			cp.Type = sc.Type
		}
		var err error
		if s.source {
			if cp.Source, err = p.planSource(p.source, s.name, seenPairs); err != nil {
				return err
			}
		}
		if s.sink {
			if cp.Sink, err = p.planSink(ctx, adm, s.name); err != nil {
				return err
			}
		}
		if inSnap && lc.HasConfig && sc.Type != lc.Type && sc.Type != snapshot.TypeUnknown && lc.Type != snapshot.TypeUnknown {
			p.warnf("connector %q is a %s here but a %s in the snapshot", s.name, lc.Type, sc.Type)
		}
		p.noteConfig(s.name, sc, lc, inSnap)
		p.Connectors = append(p.Connectors, cp)
	}
	return nil
}

// filterScope is snap.Filter(names), except that when the scope keeps every
// source offset of snap (the restore of a whole snapshot) the result shares
// them with snap instead of copying them (160 bytes a key).
func filterScope(snap *snapshot.Snapshot, names []string) *snapshot.Snapshot {
	t := snap.SourceTable()
	if t.Len() == 0 || t.Compact() || snap.Streamed() {
		// A snapshot read with store.RestoreSink's Filter shares its
		// SourceTable when the scope keeps all of it.
		return snap.Filter(names)
	}
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	// Source offsets come in runs of one connector's keys.
	for i := range int32(t.Len()) {
		c := t.Connector(i)
		if i > 0 && c == t.Connector(i-1) {
			continue
		}
		if c == "" || !keep[c] {
			return snap.Filter(names)
		}
	}
	rest := *snap
	rest.SetSourceTable(nil)
	out := rest.Filter(names)
	out.SetSourceTable(t)
	return out
}

// snapTable is the SourceTable of snap, the plan's source.
func (p *Plan) snapTable(snap *snapshot.Snapshot) *snapshot.SourceTable {
	if p.table == nil {
		p.table = snap.SourceTable()
	}
	return p.table
}

func (p *Plan) warnf(format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

// warnCmd is warnf for a warning that holds commands to paste (cmds, each
// as it appears in it): Print lays them out on lines of their own.
func (p *Plan) warnCmd(cmds []string, format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	p.Warnings = append(p.Warnings, w)
	if p.warnCmds == nil {
		p.warnCmds = map[string][]string{}
	}
	p.warnCmds[w] = cmds
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinInt32(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

// planSink compares one connector's group offsets.
func (p *Plan) planSink(ctx context.Context, adm *kadm.Client, name string) (*SinkPlan, error) {
	lc, _ := p.liveIdx.Connector(name)
	sg, hasSnapGroup := p.snapIdx.SinkGroupOf(name)
	group := ""
	switch {
	case lc.HasConfig && lc.Type == snapshot.TypeSink && lc.Group != "":
		group = lc.Group
	case hasSnapGroup:
		group = sg.Group
	default:
		group = snapGroupName(p.snapIdx, name)
		if group == "" {
			group = lc.Group
		}
	}
	if group == "" {
		if c, ok := p.snapIdx.Connector(name); ok && c.Type == snapshot.TypeSink {
			p.warnf("connector %q: no consumer group known, here or in the snapshot; its sink offsets are not restored", name)
		}
		return nil, nil
	}
	if hasSnapGroup && sg.Group != group {
		p.warnf("connector %q uses group %q here, the snapshot's was %q: its offsets are restored into %q", name, group, sg.Group, group)
	}
	plan := &SinkPlan{Group: group}
	lg, ok := p.liveIdx.SinkGroupOf(name)
	if ok && lg.Group != group {
		ok = false
	}
	if !ok && adm != nil {
		// The live capture found the connector's group under another
		// name, or not at all: read the one restored into.
		var err error
		lg, ok, err = capture.ReadGroup(ctx, adm, group)
		if err != nil {
			return nil, err
		}
	}
	have := map[topicPart]snapshot.SinkOffset{}
	if ok {
		plan.Exists, plan.State, plan.Members = true, lg.State, lg.Members
		for _, o := range lg.Offsets {
			have[topicPart{o.Topic, o.Partition}] = o
		}
	}
	want := map[topicPart]bool{}
	if hasSnapGroup {
		plan.changes = make([]sinkChange, 0, len(sg.Offsets)) // exact for a restore into the same partitions
		for _, o := range sg.Offsets {
			tp := topicPart{o.Topic, o.Partition}
			want[tp] = true
			ch := SinkChange{Topic: o.Topic, Partition: o.Partition, Old: -1, New: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, Action: Added}
			if l, ok := have[tp]; ok {
				ch.Old = l.Offset
				ch.Action = Changed
				if l.Offset == o.Offset && l.Metadata == o.Metadata {
					ch.Action = Unchanged
				}
			}
			plan.add(ch)
		}
	}
	for tp, l := range have {
		if !want[tp] {
			plan.add(SinkChange{Action: Removed, Topic: tp.topic, Partition: tp.part, Old: l.Offset, New: -1, LeaderEpoch: -1})
		}
	}
	plan.sortChanges()
	return plan, nil
}

type topicPart struct {
	topic string
	part  int32
}

// checkSinkBounds warns about sink offsets outside their partition's log
// and skips those whose topic or partition does not exist here.
func (p *Plan) checkSinkBounds(ctx context.Context, adm *kadm.Client) error {
	var topics []string
	for _, cp := range p.Connectors {
		if cp.Sink == nil {
			continue
		}
		for _, ch := range cp.Sink.Changes() {
			if ch.Action.writes() && ch.Action != Removed && !slices.Contains(topics, ch.Topic) {
				topics = append(topics, ch.Topic)
			}
		}
	}
	if len(topics) == 0 {
		return nil
	}
	sort.Strings(topics)
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list start offsets of sink topics %v: %w", topics, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list end offsets of sink topics %v: %w", topics, err)
	}
	missingTopic := func(t string) bool {
		if e, ok := ends[t][-1]; ok && e.Err != nil {
			return true
		}
		return len(ends[t]) == 0
	}
	for _, t := range topics {
		if !missingTopic(t) {
			p.sinkParts[t] = int32(len(ends[t]))
		}
	}
	warned := map[string]bool{}
	var missing, beyond []string
	for ci := range p.Connectors {
		sp := p.Connectors[ci].Sink
		if sp == nil {
			continue
		}
		for i, ch := range sp.Changes() {
			if ch.Action != Changed && ch.Action != Added {
				continue
			}
			if missingTopic(ch.Topic) {
				sp.skip(i, fmt.Sprintf("topic %q does not exist here", ch.Topic))
				if !warned[ch.Topic] {
					warned[ch.Topic] = true
					p.warnf("sink topic %q does not exist here: its committed offsets are not restored here; create it, then run the same restore again", ch.Topic)
				}
				continue
			}
			end, ok := ends[ch.Topic][ch.Partition]
			if !ok || errors.Is(end.Err, kerr.UnknownTopicOrPartition) {
				sp.skip(i, fmt.Sprintf("topic %q has no partition %d here", ch.Topic, ch.Partition))
				missing = append(missing, fmt.Sprintf("group %q: sink topic %q has no partition %d here: offset %d", sp.Group, ch.Topic, ch.Partition, ch.New))
				continue
			}
			if end.Err != nil {
				return fmt.Errorf("list end offset of %s/%d: %w", ch.Topic, ch.Partition, end.Err)
			}
			start, ok := starts[ch.Topic][ch.Partition]
			if !ok || start.Err != nil {
				serr := errors.New("no start offset returned")
				if ok {
					serr = start.Err
				}
				return fmt.Errorf("list start offset of %s/%d: %w", ch.Topic, ch.Partition, serr)
			}
			switch {
			case ch.New > end.Offset:
				beyond = append(beyond, fmt.Sprintf("group %q: offset %d for %s/%d is beyond the partition's end offset %d", sp.Group, ch.New, ch.Topic, ch.Partition, end.Offset))
			case ch.New < start.Offset:
				p.belowLogStart(p.Connectors[ci].Name, sp.Group, &ch, start.Offset, end.Offset)
			}
		}
	}
	p.warnOnce(missing, "sink offsets are for partitions that do not exist here (fewer partitions than in the snapshot's cluster)", "they are not restored here; add partitions, then run the same restore again")
	p.warnOnce(beyond, "sink offsets are beyond their partition's end offset (a new cluster, or a recreated topic?)", "the connector's consumer will reset by its auto.offset.reset policy")
	return nil
}

// warnOnce adds one warning for the same condition met by many partitions:
// the one line for one, else the count and the first few.
func (p *Plan) warnOnce(each []string, many, then string) {
	const show = 3
	switch {
	case len(each) == 0:
	case len(each) == 1:
		p.warnf("%s: %s", each[0], then)
	case len(each) <= show:
		p.warnf("%d %s: %s; %s", len(each), many, strings.Join(each, "; "), then)
	default:
		p.warnf("%d %s: %s; and %d more; %s", len(each), many, strings.Join(each[:show], "; "), len(each)-show, then)
	}
}

// describePolicies reads the cleanup.policy of every offsets topic the
// plan writes to, for Check. A topic that cannot be described is a warning.
func (p *Plan) describePolicies(ctx context.Context, adm *kadm.Client) {
	var topics []string
	for _, cp := range p.Connectors {
		if cp.Source == nil {
			continue
		}
		for _, t := range cp.Source.writtenTopics() {
			if p.wouldCreate(t) {
				p.policies[t] = "compact" // as a dry run's --create-topics creates it
				continue
			}
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	if len(topics) == 0 {
		return
	}
	sort.Strings(topics)
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		p.warnf("cannot describe the configs of offsets topics %v, their cleanup.policy is not checked: %v", topics, err)
		return
	}
	for _, t := range topics {
		rc, err := rcs.On(t, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			p.warnf("cannot describe the config of offsets topic %q, its cleanup.policy is not checked: %v", t, err)
			continue
		}
		policy := "delete" // Kafka's default
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" {
				policy = c.MaybeValue()
			}
		}
		p.policies[t] = policy
	}
}
