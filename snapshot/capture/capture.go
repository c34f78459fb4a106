package capture

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/retry"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/build"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/kread"
)

// workerProtocolType is the group protocol type of Connect's worker groups;
// sink connectors' consumer groups are "consumer".
const workerProtocolType = "connect"

// ErrTopicMissing is returned when the worker offsets topic or the config
// topic does not exist; the error is a *MissingTopicError.
var ErrTopicMissing = errors.New("topic does not exist")

// MissingTopicError is a worker topic a capture needs that does not exist.
// It matches ErrTopicMissing. Alone it can only say which setting names the
// topic; Gone tells more when a store has history of it.
type MissingTopicError struct {
	// Topic is the topic; What "offsets topic" or "config topic"; Flag the
	// setting that names it ("--offsets-topic (offset.storage.topic of the
	// worker)").
	Topic, What, Flag string
}

func (e *MissingTopicError) Error() string {
	return fmt.Sprintf("read %s %q: %s: check %s", e.What, e.Topic, ErrTopicMissing, e.Flag)
}

func (e *MissingTopicError) Unwrap() error { return ErrTopicMissing }

// LatestFull is the newest full snapshot of infos (see Store.List), nil
// when there is none.
func LatestFull(infos []snapshot.Info) *snapshot.Info {
	var out *snapshot.Info
	for i := range infos {
		if in := &infos[i]; in.Kind == snapshot.KindFull && (out == nil || in.CreatedAt.After(out.CreatedAt)) {
			out = in
		}
	}
	return out
}

// Gone explains err when it holds a *MissingTopicError for a topic that
// latest, the newest full snapshot of a store, read (topics are the names
// of its Topics) and latest holds offsets: the topic was deleted, or the
// brokers given are another cluster, and a restore brings it back.
// clusterID is the cluster read now ("" if unknown). Any other err, and a
// topic the snapshot never read (a mistyped --offsets-topic, say), is
// returned as it is. advise, when set, writes the restore command to
// print, filled in with the settings the caller was given: the dry run of
// snapshot id, with --allow-other-cluster when other (nil: the bare
// command).
func Gone(err error, latest *snapshot.Info, topics []string, clusterID string, advise GoneAdvice) error {
	var mt *MissingTopicError
	if err == nil || latest == nil || !errors.As(err, &mt) || latest.SourceKeys == 0 && latest.SinkGroups == 0 || !slices.Contains(topics, mt.Topic) {
		return err
	}
	where := "it was deleted, or these brokers are another cluster"
	switch {
	case clusterID != "" && latest.ClusterID != "" && clusterID != latest.ClusterID:
		where = fmt.Sprintf("these brokers are another cluster (%q; the snapshot's is %q), or the topic was deleted", clusterID, latest.ClusterID)
	case clusterID != "" && clusterID == latest.ClusterID:
		where = fmt.Sprintf("it was deleted (this is the snapshot's cluster %q)", clusterID)
	}
	other := clusterID == "" || latest.ClusterID == "" || clusterID != latest.ClusterID
	cmd := "offsetkeeper restore " + latest.ID + " --allow-other-cluster --dry-run"
	if !other {
		cmd = "offsetkeeper restore " + latest.ID + " --dry-run"
	}
	if advise != nil {
		cmd = advise(latest.ID, other)
	}
	return fmt.Errorf("%w: %s %q is gone, but the store holds its history (the latest full snapshot, %s, was taken %s with %d source keys and %d sink groups): %s. "+
		"To bring the connectors' offsets back, run %s: it names every topic to create (--create-topics creates them), then the same without --dry-run restores them",
		ErrTopicMissing, mt.What, mt.Topic, latest.ID, latest.CreatedAt.UTC().Format(time.RFC3339), latest.SourceKeys, latest.SinkGroups, where, cmd)
}

// GoneAdvice writes the dry run of the restore of snapshot id that Gone
// prints, with --allow-other-cluster when other.
type GoneAdvice func(id string, other bool) string

// Options say what to capture.
type Options struct {
	// OffsetsTopics are the worker offsets topics; default [DefaultOffsetsTopic].
	// Per-connector offsets.storage.topic values found in configs are added.
	OffsetsTopics []string
	// ConfigTopic is the Connect config topic; default DefaultConfigTopic.
	ConfigTopic string
	// ConfigTopics, when set, are the config topics of several worker
	// groups (a Layout's), all read in place of ConfigTopic. Connector
	// names are unique across them, as on MSK Connect; a name configured
	// in two is warned of.
	ConfigTopics []string
	// StatusTopic is the Connect status topic, read by ReadStatuses for
	// the page, never by a capture; default DefaultStatusTopic.
	// StatusTopics are those of several worker groups, as ConfigTopics.
	StatusTopic  string
	StatusTopics []string
	// Layout, when set, finds the worker groups by topic name at every
	// Capture (UseGroups), so that a daemon sees connectors created since
	// it started; the topics named above are then replaced.
	Layout *Layout
	// GroupPrefix selects sink groups; default DefaultGroupPrefix.
	GroupPrefix string
	// Connectors limits the capture to these connectors; empty means all.
	// A limited capture reads only the offsets topics and groups they use
	// and keeps no unparsed keys.
	Connectors []string
	// ProgramVersion and Reason are copied into the snapshot.
	ProgramVersion string
	Reason         string
	// ConfigTopicOptional lets a capture go on when the config topic does
	// not exist (a new cluster in a disaster recovery): every connector then
	// counts as having no config, and the snapshot says so in a warning.
	// Without it a missing config topic is an error (a mistyped name).
	ConfigTopicOptional bool
	// AbsentOffsetsTopics are offsets topics, with their partition counts,
	// that a restore's dry run would create (--create-topics): one that
	// does not exist is captured as existing with that many empty
	// partitions, so that the dry run plans the writes into it. Nil for
	// every capture that is not such a plan's.
	AbsentOffsetsTopics map[string]int32
	// Incremental keeps what was read in the Capturer and reads only what
	// is new on the next Capture. The result is identical to a full read.
	Incremental bool
	// Progress, when set, counts the records and bytes fetched per topic
	// and names the phase as the capture goes (see Progress); it is never
	// reset here.
	Progress *Progress
}

// Defaults fills in what o leaves unset: the worker topics, the group
// prefix and the reason.
func (o *Options) Defaults() {
	if len(o.OffsetsTopics) == 0 && o.Layout == nil {
		o.OffsetsTopics = []string{snapshot.DefaultOffsetsTopic}
	}
	if o.ConfigTopic == "" {
		o.ConfigTopic = snapshot.DefaultConfigTopic
	}
	if o.GroupPrefix == "" {
		o.GroupPrefix = snapshot.DefaultGroupPrefix
	}
	if o.Reason == "" {
		o.Reason = snapshot.ReasonManual
	}
}

// Capturer takes snapshots from one cluster. With Options.Incremental it
// keeps what it read between calls and reads only what is new, falling back
// to a full read of a partition whose log start moved past its position or
// whose topic was recreated. It is not safe for concurrent use.
type Capturer struct {
	cl    *kgo.Client
	adm   *kadm.Client
	opts  Options
	views map[string]*keyview.TopicView
	conf  *build.ConfigState
	// confTopics are the config topics conf was read from, sorted;
	// confFrom the topics each connector has a config in (several are
	// warned of).
	confTopics []string
	confFrom   map[string][]string
	// stats of the last Capture.
	stats CaptureStats
	// gen counts Captures, so that a streamed snapshot can tell that the
	// views it reads from moved on (ErrStale).
	gen atomic.Uint64
	// lastConsumed are the sink records read by the last Capture (sinkts.go).
	lastConsumed map[sinkPos]snapshot.LastConsumed
	// early, set by tests, says how CaptureStreamedOnce cuts a partition
	// into frames and the fewest keys it compresses early, whatever is
	// left of the read and its size; nil means snapshot.PieceKeys, earlyMinKeys,
	// earlyMinLeft and earlyMinBytes.
	early *earlyKnobs
}

// CaptureStats describe the work of one Capture.
type CaptureStats struct {
	// RecordsRead counts records fetched and applied (all topics).
	RecordsRead int64
	// Resets lists partitions read again from the start in an incremental run.
	Resets   []string
	Duration time.Duration
	// Where the time went: reading the config topic, reading the offsets
	// topics, building (or indexing, for a streamed capture) the source
	// offsets, and reading the sink groups (which overlaps the others).
	ConfigRead, OffsetsRead, Build, Groups time.Duration
	// IndexesUpdated counts the partitions a streamed capture of an
	// incremental Capturer brought up to date from the keys written since
	// the last one, instead of indexing them whole.
	IndexesUpdated int
}

// NewCapturer returns a Capturer reading through cl. cl must not be
// configured to consume; the Capturer issues its own fetches.
func NewCapturer(cl *kgo.Client, opts Options) *Capturer {
	opts.Defaults()
	return &Capturer{cl: cl, adm: kadm.NewClient(cl), opts: opts, views: make(map[string]*keyview.TopicView)}
}

// Stats returns the figures of the last Capture.
func (c *Capturer) Stats() CaptureStats { return c.stats }

// Capture is NewCapturer(cl, opts).Capture(ctx): one full read.
func Capture(ctx context.Context, cl *kgo.Client, opts Options) (*snapshot.Snapshot, error) {
	return NewCapturer(cl, opts).Capture(ctx)
}

// Capture reads the cluster and returns a normalized snapshot without ID.
// Every partition-level error fails the capture: a short snapshot is worse
// than none.
func (c *Capturer) Capture(ctx context.Context) (*snapshot.Snapshot, error) {
	return c.capture(ctx, captureMode{keep: c.opts.Incremental})
}

// CaptureLast is Capture for the last capture of an incremental Capturer:
// it reads only what was written since the previous Capture, as Capture
// does, and returns the same snapshot, but keeps nothing for a next one
// (which then reads everything again). That saves what an incremental
// Capturer keeps beyond the snapshot's bytes: its own copy of the source
// offsets (160 bytes a key) and the per-key index of every partition.
// Without Options.Incremental it is Capture.
func (c *Capturer) CaptureLast(ctx context.Context) (*snapshot.Snapshot, error) {
	return c.capture(ctx, captureMode{})
}

// CaptureStreamedOnce is CaptureStreamed followed by EncodeOnce, for a
// snapshot stored once (the snapshot command): moreover, each offsets
// partition's source offsets are encoded and compressed into the frames
// Put stores as soon as its read reached its end, while the others are
// still read, and its keys and values go then. Encode still writes the
// whole document until Put (it decompresses those frames); the document
// is byte for byte CaptureStreamed's. With Options.Incremental it is
// CaptureStreamed: the Capturer keeps its views.
func (c *Capturer) CaptureStreamedOnce(ctx context.Context) (*snapshot.Snapshot, error) {
	return c.capture(ctx, captureMode{keep: c.opts.Incremental, streamed: true, once: !c.opts.Incremental})
}

// captureMode says how capture keeps and builds what it reads.
type captureMode struct {
	// keep: the Capturer keeps what it read for the next capture.
	keep bool
	// streamed: the source offsets are left in the views for Encode
	// (CaptureStreamed) instead of built.
	streamed bool
	// once (CaptureStreamedOnce, not incremental): the snapshot is
	// EncodeOnce, and each offsets partition is compressed as soon as it
	// is read (overlap.go).
	once bool
}

// captureRun is one capture's work.
type captureRun struct {
	c *Capturer
	captureMode
	gen uint64
	// scope holds Options.Connectors; connectors the connectors found.
	scope      map[string]bool
	connectors map[string]*snapshot.Connector
	warnings   []string
	// views are the offsets topics read, offBounds their bounds.
	views     []*keyview.TopicView
	offBounds map[string]map[int32]kread.Bounds
	// absent are the Options.AbsentOffsetsTopics that do not exist,
	// captured empty.
	absent []string
	snap   *snapshot.Snapshot
	// early does the work of a once capture on each partition as it is
	// read; nil otherwise.
	early *overlap
}

func (r *captureRun) inScope(name string) bool { return len(r.scope) == 0 || r.scope[name] }

// scopeFunc is inScope without r: a streamed snapshot keeps it, and a
// method value of r would keep every view the run read, past EncodeOnce.
func (r *captureRun) scopeFunc() func(string) bool {
	scope := r.scope
	return func(name string) bool { return len(scope) == 0 || scope[name] }
}

// groupsResult is what the sink groups' read, run meanwhile, found.
type groupsResult struct {
	groups   []snapshot.SinkGroup
	topics   []snapshot.SinkTopic
	warnings []string
	unread   []snapshot.UnreadGroup
	err      error
	took     time.Duration
}

// capture is Capture, read as mode says.
func (c *Capturer) capture(ctx context.Context, mode captureMode) (*snapshot.Snapshot, error) {
	began := time.Now()
	c.stats = CaptureStats{}
	r := &captureRun{c: c, captureMode: mode, gen: c.gen.Add(1)}
	if !c.opts.Incremental {
		c.views = make(map[string]*keyview.TopicView)
		c.conf = nil
	}

	md, err := c.adm.BrokerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("read cluster metadata: %w", err)
	}
	if c.opts.Layout != nil {
		gs, err := c.opts.Layout.Discover(ctx, c.adm)
		if err != nil {
			return nil, err
		}
		c.opts.UseGroups(gs)
		r.warnings = append(r.warnings, groupWarnings(gs)...)
	}

	// 1. The config topic, as the worker reads it.
	phase := time.Now()
	c.opts.Progress.SetPhase(PhaseConfig)
	confBounds, confMissing, err := c.readConfig(ctx)
	if err != nil {
		return nil, err
	}
	r.warnings = append(r.warnings, c.confWarnings()...)
	c.stats.ConfigRead = time.Since(phase)

	r.scope = make(map[string]bool, len(c.opts.Connectors))
	for _, n := range c.opts.Connectors {
		r.scope[n] = true
	}
	r.connectors = make(map[string]*snapshot.Connector)
	for name := range c.conf.Connectors {
		if !r.inScope(name) {
			continue
		}
		conn := c.conf.Connector(name)
		r.connectors[name] = &conn
	}

	// 4, started now. Sink groups: by prefix, plus those named by connector
	// configs. Fetching them is mostly waiting on the group coordinators,
	// so it runs while the offsets topics are read and the source offsets
	// built; it looks only at the configured sinks, which neither changes.
	groupsDone := make(chan groupsResult, 1)
	configured := maps.Clone(r.connectors)
	gctx, stopGroups := context.WithCancel(ctx)
	defer stopGroups() // on an early return, the read is abandoned
	go func() {
		var gr groupsResult
		began := time.Now()
		var rd sinkGroupsRead
		rd, gr.err = c.captureGroups(gctx, configured, r.inScope, len(r.scope) > 0)
		gr.groups, gr.warnings, gr.unread = rd.groups, rd.warnings, rd.unread
		if gr.err == nil {
			gr.warnings = append(gr.warnings, c.captureLastConsumed(gctx, gr.groups)...)
			var w []string
			gr.topics, w = ReadSinkTopics(gctx, c.adm, sinkTopicNames(gr.groups))
			gr.warnings = append(gr.warnings, w...)
		}
		gr.took = time.Since(began)
		groupsDone <- gr
	}()

	// 2. The offsets topics: the worker's, plus each connector's own.
	for _, t := range confMissing {
		r.warnings = append(r.warnings, fmt.Sprintf("config topic %q does not exist: no connector has a config here, so none counts as running", t))
	}
	c.opts.Progress.SetPhase(PhaseOffsets)
	if err := r.readOffsets(ctx); err != nil {
		return nil, err
	}
	r.newSnapshot(md.Cluster, confBounds)

	// 3. Source offsets.
	phase = time.Now()
	c.opts.Progress.SetPhase(PhaseBuild)
	r.buildSource()
	c.stats.Build = time.Since(phase)

	// 4. Sink groups, read meanwhile.
	c.opts.Progress.SetPhase(PhaseGroups)
	if err := r.addGroups(<-groupsDone); err != nil {
		return nil, err
	}
	snap := r.snap
	for _, conn := range r.connectors {
		snap.Connectors = append(snap.Connectors, *conn)
	}
	sort.Strings(r.warnings)
	snap.Warnings = r.warnings
	snap.Normalize()
	if !r.keep {
		// Nothing read is kept for the next Capture: let the views go now
		// (the snapshot holds what it needs of their arenas).
		c.views, c.conf = make(map[string]*keyview.TopicView), nil
	}
	c.stats.Duration = time.Since(began)
	return snap, nil
}

// readOffsets reads the offsets topics, the worker's and each connector's
// own, into the Capturer's views.
func (r *captureRun) readOffsets(ctx context.Context) error {
	c := r.c
	offsetTopics := slices.Clone(c.opts.OffsetsTopics)
	workerTopic := map[string]bool{}
	for _, t := range offsetTopics {
		workerTopic[t] = true
	}
	for _, conn := range r.connectors {
		if conn.OffsetsTopic != "" && !slices.Contains(offsetTopics, conn.OffsetsTopic) {
			offsetTopics = append(offsetTopics, conn.OffsetsTopic)
		}
	}
	sort.Strings(offsetTopics)
	offBounds, missing, err := kread.ListBounds(ctx, c.adm, offsetTopics)
	if err != nil {
		return err
	}
	r.offBounds = offBounds
	var present []string
	for _, t := range offsetTopics {
		if _, ok := offBounds[t]; ok {
			present = append(present, t)
		}
	}
	r.warnings = append(r.warnings, offsetsPolicyWarnings(ctx, c.cl, c.adm, present)...)
	for _, t := range missing {
		if n := c.opts.AbsentOffsetsTopics[t]; n > 0 {
			r.absent = append(r.absent, t) // a dry run would create it
			continue
		}
		if workerTopic[t] {
			return &MissingTopicError{Topic: t, What: "offsets topic", Flag: "--offsets-topic (offset.storage.topic of the worker)"}
		}
		r.warnings = append(r.warnings, fmt.Sprintf("offsets topic %q named by a connector's offsets.storage.topic does not exist", t))
	}
	for _, t := range offsetTopics {
		if _, ok := offBounds[t]; !ok {
			continue
		}
		v := c.views[t]
		if v == nil {
			v = keyview.NewTopicView(t)
			c.views[t] = v
		}
		// Partitions that no longer exist are dropped from the view.
		for p := range v.Parts {
			if _, ok := offBounds[t][p]; !ok {
				delete(v.Parts, p)
			}
		}
		v.Progress = c.opts.Progress.topic(t)
		r.views = append(r.views, v)
	}
	if len(r.views) == 0 && len(r.absent) > 0 {
		return nil // only topics a dry run would create: nothing to read
	}
	positions := positionsOf(r.views)
	var onDone func(*keyview.TopicView, int32, *keyview.PartView, float64)
	if r.once {
		nparts := make(map[string]int32, len(r.views))
		for _, v := range r.views {
			nparts[v.Name] = int32(len(offBounds[v.Name]))
		}
		k := earlyKnobs{minKeys: earlyMinKeys, minLeft: earlyMinLeft, minBytes: earlyMinBytes}
		if c.early != nil {
			k = *c.early
		}
		r.early = newOverlap(len(r.scope) > 0, r.scopeFunc(), nparts, k)
		onDone = r.early.partDone
	}
	phase := time.Now()
	resets, err := kread.ReadTopicsNotify(ctx, c.cl, c.adm, r.views, offBounds, onDone)
	c.stats.OffsetsRead = time.Since(phase)
	if err != nil {
		r.early.wait() // its jobs read the views
	}
	if errors.Is(err, kread.ErrTopicChanged) {
		// Recreated under us: forget it and read it whole once more.
		for _, v := range r.views {
			delete(c.views, v.Name)
		}
		return fmt.Errorf("read offsets topics: %w; run the snapshot again", err)
	}
	if err != nil {
		return fmt.Errorf("read offsets topics: %w", err)
	}
	c.stats.Resets = append(c.stats.Resets, resets...)
	c.stats.RecordsRead += recordsBetween(positions, r.views)
	return nil
}

// newSnapshot starts the snapshot: its header and topics.
func (r *captureRun) newSnapshot(cluster string, confBounds map[string]map[int32]kread.Bounds) {
	opts := r.c.opts
	snap := &snapshot.Snapshot{
		Version:        snapshot.Version,
		CreatedAt:      time.Now().UTC(),
		ProgramVersion: opts.ProgramVersion,
		ClusterID:      cluster,
		Reason:         opts.Reason,
		Scope:          slices.Clone(opts.Connectors),
		SinkGroups:     []snapshot.SinkGroup{},
		Connectors:     []snapshot.Connector{},
	}
	snap.SetSourceOffsets([]snapshot.SourceOffset{})
	sort.Strings(snap.Scope)
	for _, t := range r.c.confTopics {
		snap.Topics = append(snap.Topics, topicOf(t, snapshot.RoleConfig, confBounds[t]))
	}
	for _, v := range r.views {
		snap.Topics = append(snap.Topics, topicOf(v.Name, snapshot.RoleOffsets, r.offBounds[v.Name]))
	}
	for _, t := range r.absent {
		empty := map[int32]kread.Bounds{}
		for p := range r.c.opts.AbsentOffsetsTopics[t] {
			empty[p] = kread.Bounds{}
		}
		snap.Topics = append(snap.Topics, topicOf(t, snapshot.RoleOffsets, empty))
	}
	r.snap = snap
}

// buildSource makes the source offsets: every live key, decoded where it
// decodes, built directly in the canonical order (topics, partitions, key
// bytes) so that Normalize finds them sorted; or, streamed, the index of
// each partition.
func (r *captureRun) buildSource() {
	c, snap := r.c, r.snap
	r.early.wait() // a once capture's jobs still running write views
	n := 0
	for _, v := range r.views {
		for _, pv := range v.Parts {
			n += pv.Len()
		}
	}
	b := build.OffsetBuilder{Scoped: len(r.scope) > 0, InScope: r.inScope, Connectors: r.connectors, Names: make(map[string]string)}
	var unparsed, nulls int
	var lazy *lazySource
	var offs []snapshot.SourceOffset
	if r.streamed {
		// The snapshot keeps the scope, not r.
		lazy = &lazySource{scoped: b.Scoped, inScope: r.scopeFunc(), byConnector: make(map[string]int), once: r.once}
		if r.keep {
			lazy.capt, lazy.gen = c, r.gen
		}
		snap.SetStream(lazy)
	} else {
		offs = make([]snapshot.SourceOffset, 0, n)
	}
	// A streamed capture indexes every partition at once, on every CPU
	// (those a once capture did not index as they were read).
	var idx []*indexed
	if lazy != nil {
		var jobs []indexJob
		for _, v := range r.views {
			for _, p := range build.SortedPartitions(v.Parts) {
				if r.early.indexed(v.Parts[p]) == nil {
					jobs = append(jobs, indexJob{topic: v.Name, part: p, nparts: int32(len(r.offBounds[v.Name])), pv: v.Parts[p]})
				}
			}
		}
		idx, c.stats.IndexesUpdated = indexParts(jobs, b.Scoped, r.inScope, r.keep)
	}
	for _, v := range r.views {
		nparts := int32(len(r.offBounds[v.Name]))
		// Keys off their murmur2 partition: the only ones that can be
		// live in two partitions.
		var suspects []string
		for _, p := range build.SortedPartitions(v.Parts) {
			pv := v.Parts[p]
			nulls += pv.Nulls
			if lazy != nil {
				ix := r.early.indexed(pv)
				if ix == nil {
					ix, idx = idx[0], idx[1:]
				}
				suspects = append(suspects, lazy.add(ix, &b)...)
				continue
			}
			var sus []string
			var un int
			offs, sus, un = r.buildPart(&b, offs, v.Name, p, nparts, pv)
			suspects = append(suspects, sus...)
			unparsed += un
		}
		r.warnings = append(r.warnings, build.DuplicateWarningsIn(v, suspects, r.early.liveIn)...)
	}
	if lazy != nil {
		unparsed = lazy.unparsed
	} else {
		snap.SetSourceOffsets(offs)
	}
	if unparsed > 0 {
		r.warnings = append(r.warnings, snapshot.CountWarning(unparsed, "offsets topic key is not [connector, {partition}] and was kept raw", "offsets topic keys are not [connector, {partition}] and were kept raw"))
	}
	if nulls > 0 {
		r.warnings = append(r.warnings, snapshot.CountWarning(nulls, "record with a null key was skipped; no task can look it up", "records with a null key were skipped; no task can look them up"))
	}
}

// add takes one partition's index into the streamed source and returns
// its suspects.
func (lazy *lazySource) add(ix *indexed, b *build.OffsetBuilder) []string {
	lazy.parts = append(lazy.parts, ix.part)
	lazy.keys += ix.part.keys()
	lazy.unparsed += ix.unparsed
	lazy.unnamed += ix.unnamed
	for name, n := range ix.byConnector {
		lazy.byConnector[name] += n
		b.Register(name)
	}
	return ix.suspects
}

// buildPart appends the source offsets of one partition to offs (updated
// from what the Capturer kept, or built), and returns them with the
// partition's suspects and how many keys did not parse.
func (r *captureRun) buildPart(b *build.OffsetBuilder, offs []snapshot.SourceOffset, topic string, p, nparts int32, pv *keyview.PartView) (_ []snapshot.SourceOffset, suspects []string, unparsed int) {
	pv.Index = nil // built state, not an index, is kept below
	from := len(offs)
	if pv.Built != nil {
		offs = b.Update(offs, topic, p, nparts, pv)
		suspects = pv.Built.(*build.BuiltPart).Suspects
	} else {
		offs, suspects = b.Build(offs, topic, p, nparts, pv)
		if r.keep {
			// The Capturer's own copy: callers may change theirs.
			pv.Built = &build.BuiltPart{Offsets: slices.Clone(offs[from:]), Suspects: suspects}
			pv.Dirty = make(map[string]struct{})
		}
	}
	for i := from; i < len(offs); i++ {
		if o := &offs[i]; o.ParseError != "" {
			unparsed++
		} else {
			b.Register(o.Connector)
		}
	}
	return offs, suspects, unparsed
}

// addGroups adds the sink groups read meanwhile, and a connector for each
// group of a connector without a config.
func (r *captureRun) addGroups(gr groupsResult) error {
	r.c.stats.Groups = gr.took
	if gr.err != nil {
		return gr.err
	}
	r.warnings = append(r.warnings, gr.warnings...)
	r.snap.SinkGroups = gr.groups
	r.snap.Unread = gr.unread
	r.snap.SinkTopics = gr.topics
	for _, g := range gr.groups {
		if g.Connector != "" && r.connectors[g.Connector] == nil {
			r.connectors[g.Connector] = &snapshot.Connector{Name: g.Connector, Type: snapshot.TypeSink, Group: g.Group, Tasks: -1}
		}
	}
	return nil
}

// readConfig brings the config state machine up to the end of the config
// topics (one, or a layout's several, read at once into one state: their
// connectors' names are unique). It reports the topics missing when
// Options.ConfigTopicOptional allows them, or when a layout's discovery
// named them; with none left the state is empty.
func (c *Capturer) readConfig(ctx context.Context) (map[string]map[int32]kread.Bounds, []string, error) {
	topics := c.opts.WorkerConfigTopics()
	confBounds, missing, err := kread.ListBounds(ctx, c.adm, topics)
	if err != nil {
		return nil, nil, err
	}
	if len(missing) > 0 && !c.opts.ConfigTopicOptional {
		return nil, nil, &MissingTopicError{Topic: missing[0], What: "config topic", Flag: "--config-topic (config.storage.topic of the worker)"}
	}
	present := slices.DeleteFunc(slices.Clone(topics), func(t string) bool { return slices.Contains(missing, t) })
	slices.Sort(present)
	if c.conf == nil || !slices.Equal(present, c.confTopics) {
		// New, or another set of config topics (a layout's connector
		// created or deleted): replay them all, so that no connector of a
		// topic gone stays.
		for _, t := range c.confTopics {
			delete(c.views, t)
		}
		c.conf, c.confFrom = build.NewConfigState(), map[string][]string{}
	}
	c.confTopics = present
	if len(present) == 0 {
		return confBounds, missing, nil
	}
	before := c.conf.Records
	views := c.configViews(present)
	resets, err := kread.ReadTopics(ctx, c.cl, c.adm, views, confBounds)
	if err != nil {
		return nil, nil, fmt.Errorf("read config topic %s: %w", quoteList(present), err)
	}
	if len(resets) > 0 {
		// The config log moved under us: replay it whole.
		c.conf, c.confFrom, before = build.NewConfigState(), map[string][]string{}, 0
		for _, t := range present {
			delete(c.views, t)
		}
		if _, err := kread.ReadTopics(ctx, c.cl, c.adm, c.configViews(present), confBounds); err != nil {
			return nil, nil, fmt.Errorf("read config topic %s: %w", quoteList(present), err)
		}
		c.stats.Resets = append(c.stats.Resets, resets...)
	}
	c.stats.RecordsRead += c.conf.Records - before
	return confBounds, missing, nil
}

// configViews returns the views of the config topics, made where new. With
// several, their records reach the one state from as many goroutines: the
// hook takes a lock, and notes each connector's topic.
func (c *Capturer) configViews(topics []string) []*keyview.TopicView {
	views := make([]*keyview.TopicView, 0, len(topics))
	var mu sync.Mutex
	for _, t := range topics {
		cv := c.views[t]
		if cv == nil {
			cv = keyview.NewTopicView(t)
			conf, from := c.conf, c.confFrom
			cv.OnRecord = func(r keyview.LogRecord) {
				mu.Lock()
				defer mu.Unlock()
				conf.Apply(r)
				if name, ok := strings.CutPrefix(string(r.Key), "connector-"); ok {
					in := slices.DeleteFunc(from[name], func(o string) bool { return o == t })
					if r.Value != nil {
						in = append(in, t)
					}
					from[name] = in
				}
			}
			c.views[t] = cv
		}
		cv.Progress = c.opts.Progress.topic(t)
		views = append(views, cv)
	}
	return views
}

// confWarnings name the connectors configured in more than one config
// topic: the worker groups disagree, and the snapshot holds the state of
// whichever record was read last.
func (c *Capturer) confWarnings() []string {
	var out []string
	for name, in := range c.confFrom {
		if len(in) > 1 {
			out = append(out, fmt.Sprintf("connector %q has a config in several config topics (%s): its config is that of the record read last; give each worker group its own connector names", name, quoteList(slices.Sorted(slices.Values(in)))))
		}
	}
	slices.Sort(out)
	return out
}

func quoteList(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = fmt.Sprintf("%q", t)
	}
	return strings.Join(q, ", ")
}

// captureGroups reads the sink groups: their type, state, members and
// committed offsets, in batched requests.
func (c *Capturer) captureGroups(ctx context.Context, connectors map[string]*snapshot.Connector, inScope func(string) bool, scoped bool) (sinkGroupsRead, error) {
	return c.readSinkGroups(ctx, connectors, inScope, scoped, nil)
}

// sinkGroupsRead is what a read of the sink groups found: the groups read,
// the warnings, and the groups that could not be classified or described,
// named (never dropped).
type sinkGroupsRead struct {
	groups   []snapshot.SinkGroup
	warnings []string
	unread   []snapshot.UnreadGroup
}

// readSinkGroups is captureGroups; a group whose committed offsets are all
// as in prev keeps prev's slice of them (see fetchCommitted). Every group
// goes through DescribeTyped: a consumer group (KIP-848) is described as
// one, not read as a gone classic group.
func (c *Capturer) readSinkGroups(ctx context.Context, connectors map[string]*snapshot.Connector, inScope func(string) bool, scoped bool, prev map[string]snapshot.SinkGroup) (sinkGroupsRead, error) {
	var rd sinkGroupsRead
	owner := make(map[string]string) // group -> connector
	for name, conn := range connectors {
		if conn.Type == snapshot.TypeSink && conn.Group != "" {
			owner[conn.Group] = name
		}
	}
	want := make(map[string]bool)
	for g := range owner {
		want[g] = true
	}
	listed, err := listGroups(ctx, c.adm)
	if err != nil {
		return rd, fmt.Errorf("list consumer groups: %w", err)
	}
	for _, g := range listed {
		if scoped || !strings.HasPrefix(g.Group, c.opts.GroupPrefix) {
			continue
		}
		if _, owned := owner[g.Group]; !owned && (g.ProtocolType == workerProtocolType || !isConnectGroup(g)) {
			// A Connect worker group (its group.id, connect-cluster by
			// default, is under the default prefix) holds the workers'
			// assignments, never a sink's committed offsets; nor does a
			// share or streams group.
			continue
		}
		if _, owned := owner[g.Group]; !owned {
			// A group by prefix whose connector has no config here: name it
			// after the group, the prefix taken off (Connect's convention
			// is connect-<name>, the default prefix).
			name := strings.TrimPrefix(g.Group, c.opts.GroupPrefix)
			if name == g.Group || !inScope(name) {
				name = ""
			}
			owner[g.Group] = name
		}
		want[g.Group] = true
	}
	names, err := c.sinkGroupNames(ctx, want, owner, listed, &rd)
	if err != nil || len(names) == 0 {
		rd.groups = []snapshot.SinkGroup{}
		return rd, err
	}
	described, fetched, err := c.describeAndFetch(ctx, names, listed, prev)
	if err != nil {
		return rd, err
	}
	rd.groups = make([]snapshot.SinkGroup, 0, len(names))
	for _, g := range names {
		d := described[g]
		if d.Err != nil {
			rd.unread = append(rd.unread, unreadGroup(g, owner[g], d.Type, d.Err.Error()))
			continue
		}
		f, ok := fetched[g]
		if !ok && !d.Gone {
			return rd, fmt.Errorf("fetch offsets of consumer group %q: no answer from its coordinator", g)
		}
		if d.Gone || errors.Is(f.err, kerr.GroupIDNotFound) {
			continue // deleted between list and describe
		}
		if f.err != nil {
			return rd, fmt.Errorf("fetch offsets of consumer group %q: %w", g, f.err)
		}
		if f.perr != nil {
			return rd, f.perr
		}
		rd.groups = append(rd.groups, snapshot.SinkGroup{Group: g, Connector: owner[g], Type: d.Type, State: d.State, Members: d.Members, Offsets: f.offsets})
	}
	setProtocolTypes(rd.groups, listed)
	slices.SortFunc(rd.unread, func(a, b snapshot.UnreadGroup) int { return strings.Compare(a.Group, b.Group) })
	return rd, nil
}

// sinkGroupNames are the groups of want to read, sorted: those listed, and
// those of sink connectors not listed but found when described (created
// since the list). A connector's group that is not there is warned of; one
// that cannot be described (Kafka lists only the groups a principal may
// describe, so a missing ACL shrinks the list without an error) is unread.
func (c *Capturer) sinkGroupNames(ctx context.Context, want map[string]bool, owner map[string]string, listed kadm.ListedGroups, rd *sinkGroupsRead) ([]string, error) {
	var names, unlisted []string
	for g := range want {
		if _, ok := listed[g]; ok {
			names = append(names, g)
		} else if owner[g] != "" {
			unlisted = append(unlisted, g)
		}
	}
	described, err := DescribeTyped(ctx, c.adm, unlisted, listed)
	if err != nil {
		return nil, err
	}
	for _, g := range unlisted {
		switch d := described[g]; {
		case d.Err != nil:
			rd.unread = append(rd.unread, unreadGroup(g, owner[g], d.Type, d.Err.Error()+" (a missing DESCRIBE ACL on the group?)"))
		case d.Gone:
			rd.warnings = append(rd.warnings, fmt.Sprintf("sink connector %q: its group %q does not exist (no commit yet)", owner[g], g))
		default:
			names = append(names, g)
		}
	}
	sort.Strings(names)
	return names, nil
}

// unreadGroup names a group that could not be read, and what to do.
func unreadGroup(group, connector, typ, why string) snapshot.UnreadGroup {
	return snapshot.UnreadGroup{Group: group, Connector: connector, Type: typ,
		Reason: why + ": its offsets are not in this snapshot; grant DESCRIBE and READ on the group and take a new snapshot"}
}

// describeAndFetch describes the groups and fetches their committed
// offsets, at once: one round trip per coordinator less. A group listed
// Empty has no members, so it is not described (a sink connector stopped,
// or between runs: an idle journal otherwise described them all every
// interval), unless its fetch found no commit: then it may have been
// deleted since the list, which a describe tells.
func (c *Capturer) describeAndFetch(ctx context.Context, names []string, listed kadm.ListedGroups, prev map[string]snapshot.SinkGroup) (map[string]GroupDescription, map[string]committed, error) {
	var describe, empty []string
	for _, g := range names {
		if listedEmpty(listed[g]) {
			empty = append(empty, g)
		} else {
			describe = append(describe, g)
		}
	}
	var (
		described   map[string]GroupDescription
		describeErr error
		done        = make(chan struct{})
	)
	go func() {
		defer close(done)
		described, describeErr = DescribeTyped(ctx, c.adm, describe, listed)
	}()
	var fetched map[string]committed
	err := retryDropped(ctx, func() error {
		fetched = fetchCommitted(ctx, c.cl, names, prev)
		for _, f := range fetched {
			if f.err != nil {
				return f.err
			}
		}
		return nil
	})
	<-done
	if describeErr != nil {
		return nil, nil, fmt.Errorf("describe %d consumer groups: %w", len(describe), describeErr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("fetch committed offsets of %d consumer groups: %w", len(names), err)
	}
	var again []string
	for _, g := range empty {
		if f, ok := fetched[g]; ok && len(f.offsets) == 0 && f.perr == nil {
			again = append(again, g)
			continue
		}
		l := listed[g]
		typ := l.GroupType
		if typ == "" {
			typ = GroupTypeClassic
		}
		described[g] = GroupDescription{Group: g, Type: typ, State: l.State}
	}
	more, err := DescribeTyped(ctx, c.adm, again, listed)
	if err != nil {
		return nil, nil, fmt.Errorf("describe %d consumer groups: %w", len(again), err)
	}
	maps.Copy(described, more)
	return described, fetched, nil
}

// listedEmpty reports whether a listed group is known to have no members
// without describing it: a classic or consumer group in state Empty
// (ListGroups v4+ gives the state, v5+ the type).
func listedEmpty(l kadm.ListedGroup) bool {
	return l.State == "Empty" && (l.GroupType == "" || l.GroupType == GroupTypeClassic || l.GroupType == GroupTypeConsumer)
}

// retryDropped runs fn again, up to 4 times over about a second, while it
// fails with an error kgo deems a retryable broker error. kgo does not retry
// a connection dropped while it looks group coordinators up, which failed a
// whole snapshot on one dropped connection (a broker restarting).
func retryDropped(ctx context.Context, fn func() error) error {
	return droppedRetry.Do(ctx, kgo.IsRetryableBrokerErr, fn)
}

var droppedRetry = retry.Policy{Tries: 4, Step: 100 * time.Millisecond}

func topicOf(name, role string, bs map[int32]kread.Bounds) snapshot.Topic {
	t := snapshot.Topic{Name: name, Role: role}
	for p, b := range bs {
		t.Partitions = append(t.Partitions, snapshot.TopicPartition{Partition: p, StartOffset: b.Start, EndOffset: b.End})
	}
	sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].Partition < t.Partitions[j].Partition })
	return t
}

func positionsOf(views []*keyview.TopicView) map[*keyview.PartView]int64 {
	m := make(map[*keyview.PartView]int64)
	for _, v := range views {
		for _, pv := range v.Parts {
			m[pv] = pv.Next
		}
	}
	return m
}

// recordsBetween estimates records read as the offsets advanced.
func recordsBetween(before map[*keyview.PartView]int64, views []*keyview.TopicView) int64 {
	var n int64
	for _, v := range views {
		for _, pv := range v.Parts {
			n += pv.Next - before[pv] // a new view starts from 0 in before
		}
	}
	return n
}

// ReadConfigs reads a Connect config topic from its start to its last
// stable offset with read_committed isolation and replays it as the worker
// does, returning every connector that has a config, by name. It uses the
// same reader as Capture, so it ends reliably even when the records just
// below the end were aborted. A topic that does not exist is
// ErrTopicMissing. The config topics of more worker groups are read too,
// into one set (a layout's: connector names are unique across them).
func ReadConfigs(ctx context.Context, cl *kgo.Client, topic string, more ...string) (map[string]snapshot.ConnectorConfig, error) {
	c := NewCapturer(cl, Options{ConfigTopic: topic})
	if len(more) > 0 {
		c.opts.ConfigTopics = append([]string{topic}, more...)
	}
	if _, _, err := c.readConfig(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]snapshot.ConnectorConfig, len(c.conf.Connectors))
	for name, cc := range c.conf.Connectors {
		conn := c.conf.Connector(name)
		out[name] = snapshot.ConnectorConfig{Name: name, Config: cc.Props, TargetState: conn.TargetState, Tasks: conn.Tasks}
	}
	return out, nil
}
