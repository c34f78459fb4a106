package translate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// Translation methods (TranslateOptions.Method).
const (
	// TranslateMM2 uses MirrorMaker 2's checkpoints on the target cluster,
	// then its offset syncs on the source cluster, then timestamps.
	TranslateMM2 = "mm2"
	// TranslateTimestamp finds the last consumed record on the target by
	// its timestamp (snapshot.SinkOffset.LastConsumed).
	TranslateTimestamp = "timestamp"
)

// How one sink partition was translated (TranslatedOffset.Method).
const (
	MethodKept       = "kept"            // no translation asked: the offset as it is
	MethodCheckpoint = "mm2-checkpoint"  // MM2's checkpoint of the group
	MethodOffsetSync = "mm2-offset-sync" // MM2's offset syncs, OffsetSyncStore's rule
	MethodTimestamp  = "timestamp"       // first record at or after the last consumed one's timestamp
	MethodStart      = "start"           // nothing consumed (left): the target partition's log start
)

// CheckUntranslatable is the Refusal.Check of a sink partition that
// Translate could not translate (TranslatedOffset.Untranslated).
const CheckUntranslatable = "untranslatable"

// TranslateOptions say how to move a snapshot's offsets to another
// cluster: sink offsets translated into the target's copies of the topics,
// topics renamed, connectors renamed.
type TranslateOptions struct {
	// Method is TranslateMM2, TranslateTimestamp, or empty: sink offsets
	// kept as numbers (the topics may still be renamed).
	Method string
	// SourceAlias is MM2's alias of the source cluster: the checkpoints
	// topic is <SourceAlias>.checkpoints.internal, and MM2's default
	// replication policy names the copy of topic t <SourceAlias>.t.
	SourceAlias string
	// Source is a client of the source cluster, for MM2's offset syncs
	// when a group has no checkpoints; nil skips that fallback.
	Source *kgo.Client
	// TargetAlias is MM2's alias of the target cluster, naming the syncs
	// topic mm2-offset-syncs.<TargetAlias>.internal; empty finds the one
	// such topic on the source cluster.
	TargetAlias string
	// Margin is subtracted from the last consumed record's timestamp
	// (more re-deliveries, fewer skips of records produced out of order).
	Margin time.Duration
	// MapTopics renames sink topics; a topic not in it gets TopicPrefix.
	MapTopics   map[string]string
	TopicPrefix string
	// Rename renames connectors (old name -> new name).
	Rename map[string]string
	// ConfigTopic and GroupPrefix are the target's; defaults as Options.
	ConfigTopic string
	GroupPrefix string
	// Connectors limits the sink offsets translated to these connectors'
	// (their names in snap); SourceOnly translates none. The sink groups
	// left out, and those of no connector, which a restore never writes,
	// are not in the result.
	Connectors []string
	SourceOnly bool
}

// TranslatedOffset is one sink partition of a translation.
type TranslatedOffset struct {
	Group, Connector string
	Topic            string // in the snapshot
	Partition        int32
	NewTopic         string // on the target
	Old, New         int64  // New is -1 when not translated
	Method           string
	// Redeliver and Skip are the records the new offset is expected to
	// deliver again and to skip; -1 when they cannot be told.
	Redeliver, Skip int64
	// Why says how it was found, or why it could not be translated.
	Why string
	// Untranslated: nothing is written for this partition.
	Untranslated bool
	// Fix, when set, is the restore flag that translates it
	// ("--topic-prefix a.", "--map-topic SRC=DST").
	Fix string
}

// Translation is what Translate did.
type Translation struct {
	Method  string
	Offsets []TranslatedOffset
	// Renamed lists the connectors renamed, as "old -> new".
	Renamed []string
	// Notes are what an operator should know (a group without
	// checkpoints and why, a fallback taken).
	Notes []string
	// Configs are the sink configs' topics settings rewritten to the
	// renamed topics (see sinkconfig.go).
	Configs []restore.ConfigRewrite
}

// Untranslated returns the partitions that could not be translated.
func (t *Translation) Untranslated() []TranslatedOffset {
	var out []TranslatedOffset
	for _, o := range t.Offsets {
		if o.Untranslated {
			out = append(out, o)
		}
	}
	return out
}

// Print writes the translation table: per sink partition the old offset,
// the method, the new offset and the records expected to be re-delivered
// or skipped, or why it cannot be translated.
func (t *Translation) Print(w io.Writer) error {
	var b strings.Builder
	t.print(&errWriter{w: &b})
	// A reason repeats a topic name and advice: fitted to the width, the
	// table stays readable (the whole value is in --output json).
	_, err := io.WriteString(w, english.Fit(b.String(), lineWidth))
	return err
}

// lineWidth is the width text output fits in.
const lineWidth = 120

// print writes the table to e. The reason a partition cannot be
// translated is printed once for the partitions of a group that share it.
func (t *Translation) print(e *errWriter) {
	for _, r := range t.Renamed {
		e.printf("rename: connector %s\n", r)
	}
	for _, n := range t.Notes {
		e.printf("note: %s\n", n)
	}
	printConfigRewrites(e, t.Configs)
	if len(t.Offsets) > 0 {
		method := t.Method
		if method == "" {
			method = "none: offsets kept as numbers"
		}
		e.printf("translation (%s): %s\n", method, english.Count(len(t.Offsets), "sink partition", "sink partitions"))
	}
	group, lastWhy := "", ""
	for _, o := range t.Offsets {
		if o.Group != group {
			group, lastWhy = o.Group, ""
			e.printf("  group %s (connector %s)\n", o.Group, orNone(o.Connector))
		}
		where := fmt.Sprintf("%s/%d", o.Topic, o.Partition)
		if o.NewTopic != o.Topic {
			where += " -> " + o.NewTopic
		}
		if o.Untranslated {
			method := ""
			if o.Method != "" {
				method = " by " + o.Method
			}
			if o.Why == lastWhy {
				e.printf("    %s: %d -> CANNOT TRANSLATE%s (as above)\n", where, o.Old, method)
				continue
			}
			lastWhy = o.Why
			e.printf("    %s: %d -> CANNOT TRANSLATE%s: %s\n", where, o.Old, method, o.Why)
			continue
		}
		lastWhy = ""
		e.printf("    %s: %d -> %d by %s, re-delivers %s, skips %s", where, o.Old, o.New, o.Method, count(o.Redeliver), count(o.Skip))
		if o.Why != "" {
			e.printf(" (%s)", o.Why)
		}
		e.printf("\n")
	}
}

func count(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// Translate returns a copy of snap made for restoring into the cluster of
// target (another one): connectors renamed by opts.Rename (their source
// keys rewritten with the new name as a worker writes it, the partition
// maps' bytes untouched; their sink group connect-<new>, or the group the
// new connector's config names on the target), sink topics renamed, and
// sink offsets translated by opts.Method into the target's copies. The
// restore then plans, checks, applies and verifies the copy as any
// snapshot. The old names are not in the copy, so their offsets on the
// target are left alone.
//
// A sink partition that cannot be translated is left out of the copy (or
// keeps the target group's live offset, so nothing is written for it) and
// marked Untranslated in the table: callers refuse the restore unless
// forced. Errors are for bad options and failed reads.
func Translate(ctx context.Context, target *kgo.Client, snap *snapshot.Snapshot, opts TranslateOptions) (*snapshot.Snapshot, *Translation, error) {
	if opts.ConfigTopic == "" {
		opts.ConfigTopic = snapshot.DefaultConfigTopic
	}
	if opts.GroupPrefix == "" {
		opts.GroupPrefix = snapshot.DefaultGroupPrefix
	}
	switch opts.Method {
	case "", TranslateTimestamp:
	case TranslateMM2:
		if opts.SourceAlias == "" {
			return nil, nil, errors.New("translate offsets: MirrorMaker 2 translation needs the source cluster's alias (--mm2-source-alias)")
		}
	default:
		return nil, nil, fmt.Errorf("translate offsets: unknown method %q (mm2 or timestamp)", opts.Method)
	}
	out := *snap
	out.Connectors = slices.Clone(snap.Connectors)
	out.Scope = slices.Clone(snap.Scope)
	out.SinkGroups = nil
	for _, g := range snap.SinkGroups {
		if g.Connector == "" || opts.SourceOnly || (len(opts.Connectors) > 0 && !slices.Contains(opts.Connectors, g.Connector)) {
			continue
		}
		g.Offsets = slices.Clone(g.Offsets)
		out.SinkGroups = append(out.SinkGroups, g)
	}
	tr := &Translation{Method: opts.Method}
	// The group MM2 checkpointed is the one on the source cluster.
	origGroup := map[int]string{}
	for i, g := range out.SinkGroups {
		origGroup[i] = g.Group
	}
	if len(opts.Rename) > 0 {
		if err := renameConnectors(ctx, target, &out, opts, tr); err != nil {
			return nil, nil, err
		}
	}
	t := &translator{target: target, adm: kadm.NewClient(target), opts: opts, tr: tr}
	if err := t.sinks(ctx, &out, origGroup); err != nil {
		return nil, nil, err
	}
	t.rewriteSinkConfigs(&out)
	if opts.Method != "" {
		// The translated offsets point into the target's topics as they
		// are now: the snapshot's record of its own topics no longer
		// applies (a recreated topic is what --translate is for).
		out.SinkTopics = nil
	}
	out.Normalize()
	return &out, tr, nil
}

// renameConnectors applies opts.Rename to out.
func renameConnectors(ctx context.Context, target *kgo.Client, out *snapshot.Snapshot, opts TranslateOptions, tr *Translation) error {
	olds := make([]string, 0, len(opts.Rename))
	for o := range opts.Rename {
		olds = append(olds, o)
	}
	slices.Sort(olds)
	known := map[string]bool{}
	for _, c := range out.Connectors {
		known[c.Name] = true
	}
	for _, o := range out.SourceTable().All() {
		known[o.Connector] = true
	}
	for _, g := range out.SinkGroups {
		known[g.Connector] = true
	}
	news := map[string]bool{}
	scoped := func(name string) bool { return len(opts.Connectors) == 0 || slices.Contains(opts.Connectors, name) }
	var shadowed []string
	for _, old := range olds {
		n := opts.Rename[old]
		switch {
		case !known[old]:
			return &restore.NotInSnapshotError{Snapshot: out.ID, Missing: []string{old}, Rename: true}
		case n == "" || n != strings.TrimSpace(n) || strings.ContainsFunc(n, unicode.IsControl):
			return fmt.Errorf("rename connector %q to %q: Connect names are non-empty, without surrounding white space or control characters", old, n)
		case news[n]:
			return fmt.Errorf("rename connector %q to %q: another rename already has a connector %q", old, n, n)
		case known[n] && opts.Rename[n] == "" && scoped(n):
			return fmt.Errorf("rename connector %q to %q: the snapshot already has a connector %q, and the restore would write both; restore only %q (--connector %s)", old, n, n, old, old)
		case known[n] && opts.Rename[n] == "":
			// Out of scope (created here since, say, as the runbook
			// has it, and captured by a later snapshot): its own
			// offsets are not restored, old's become its.
			shadowed = append(shadowed, n)
		}
		news[n] = true
	}
	dropConnectors(out, shadowed)
	configs, err := capture.ReadConfigs(ctx, target, opts.ConfigTopic)
	if err != nil && !errors.Is(err, capture.ErrTopicMissing) {
		return fmt.Errorf("read connector configs on the target: %w", err)
	}
	captured := map[string]map[string]string{} // by new name
	for i := range out.Connectors {
		c := &out.Connectors[i]
		if n, ok := opts.Rename[c.Name]; ok {
			c.Name = n
			captured[n] = c.Config
			if c.Group != "" || c.Type == snapshot.TypeSink {
				c.Group = groupOf(n, captured[n], configs, opts.GroupPrefix)
			}
		}
	}
	for i, s := range out.Scope {
		if n, ok := opts.Rename[s]; ok {
			out.Scope[i] = n
		}
	}
	keys := map[string]int{}
	placed := placedCopies(out, opts.Rename)
	renamed := make([]snapshot.SourceOffset, 0, out.SourceKeys())
	for _, at := range out.SourceTable().All() {
		o := *at // a changed copy: the table is shared
		n, ok := opts.Rename[o.Connector]
		if !ok {
			renamed = append(renamed, o)
			continue
		}
		if ps, dup := placed[placedKey{o.Topic, string(o.Key)}]; dup && o.Partition != ps[0] {
			// A stray copy of a key whose worker-written copy is here too:
			// renamed, both would land on one partition and the planner
			// could no longer tell which copy the worker wrote.
			continue
		}
		key, err := connectjson.RenameKey(o.Key, n)
		if err != nil {
			return fmt.Errorf("rename connector %q: key %s: %w", o.Connector, restore.DisplayKey(o.Key), err)
		}
		o.Key, o.Connector = key, n
		if parts := out.PartitionCount(o.Topic); parts > 0 {
			o.Partition = snapshot.PartitionFor(key, parts)
		}
		keys[n]++
		renamed = append(renamed, o)
	}
	out.SetSourceOffsets(renamed)
	dups := make([]placedKey, 0, len(placed))
	for pk := range placed {
		dups = append(dups, pk)
	}
	slices.SortFunc(dups, func(a, b placedKey) int { return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.key, b.key)) })
	for _, pk := range dups {
		ps := placed[pk]
		tr.Notes = append(tr.Notes, fmt.Sprintf("key %s is in partitions %s of %q in the snapshot (one written by hand, or partitions were added): renamed, it takes the value of partition %d, the key's murmur2 partition, where the worker writes it",
			restore.DisplayKey([]byte(pk.key)), joinPartitions(ps), pk.topic, ps[0]))
	}
	for i := range out.SinkGroups {
		g := &out.SinkGroups[i]
		if n, ok := opts.Rename[g.Connector]; ok {
			g.Connector = n
			g.Group = groupOf(n, captured[n], configs, opts.GroupPrefix)
		}
	}
	for _, old := range olds {
		n := opts.Rename[old]
		what := fmt.Sprintf("%s -> %s: %s rewritten", old, n, english.Count(keys[n], "source key", "source keys"))
		for _, g := range out.SinkGroups {
			if g.Connector == n {
				what += fmt.Sprintf(", sink offsets into group %s", g.Group)
			}
		}
		tr.Renamed = append(tr.Renamed, what+" (the offsets of "+old+" on the target are left alone)")
	}
	return nil
}

// dropConnectors removes from out the connectors named, out of the
// translation's scope, and their source offsets (their sink groups, out
// of scope, are not in out). Connectors and Scope are out's own copies;
// the source offsets are the snapshot's, so they are filtered anew.
func dropConnectors(out *snapshot.Snapshot, names []string) {
	if len(names) == 0 {
		return
	}
	out.Connectors = slices.DeleteFunc(out.Connectors, func(c snapshot.Connector) bool { return slices.Contains(names, c.Name) })
	out.Scope = slices.DeleteFunc(out.Scope, func(s string) bool { return slices.Contains(names, s) })
	kept := make([]snapshot.SourceOffset, 0, out.SourceKeys())
	for _, o := range out.SourceTable().All() {
		if !slices.Contains(names, o.Connector) {
			kept = append(kept, *o)
		}
	}
	out.SetSourceOffsets(kept)
}

// placedKey is a source key in an offsets topic.
type placedKey struct{ topic, key string }

// placedCopies finds the keys of the connectors renamed that the snapshot
// holds in more than one partition of a topic, one of them the key's
// murmur2 partition: for each, that partition first, then the others.
// Keys with no copy on their murmur2 partition are not listed (the
// planner picks among them and warns).
func placedCopies(out *snapshot.Snapshot, rename map[string]string) map[placedKey][]int32 {
	where := map[placedKey][]int32{}
	for _, o := range out.SourceTable().All() {
		if _, ok := rename[o.Connector]; ok {
			pk := placedKey{o.Topic, string(o.Key)}
			where[pk] = append(where[pk], o.Partition)
		}
	}
	for pk, ps := range where {
		parts := out.PartitionCount(pk.topic)
		if len(ps) < 2 || parts <= 0 {
			delete(where, pk)
			continue
		}
		right := snapshot.PartitionFor([]byte(pk.key), parts)
		i := slices.Index(ps, right)
		if i < 0 {
			delete(where, pk)
			continue
		}
		ps[0], ps[i] = ps[i], ps[0]
		slices.Sort(ps[1:])
	}
	return where
}

// joinPartitions is "8, 11".
func joinPartitions(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ", ")
}

// groupOf is the sink group connector name reads on the target: the
// consumer.override.group.id of its config there, else <prefix><name>.
// A connector the target does not have yet reads the group of the config
// it will be created with (restore --create-connectors creates it with
// the snapshot's, captured), so the offsets go where it will look.
func groupOf(name string, captured map[string]string, configs map[string]snapshot.ConnectorConfig, prefix string) string {
	config := captured
	if c, ok := configs[name]; ok {
		config = c.Config
	}
	if g := config["consumer.override.group.id"]; g != "" {
		return g
	}
	return prefix + name
}

// translator translates the sink offsets of one snapshot.
type translator struct {
	target *kgo.Client
	adm    *kadm.Client
	opts   TranslateOptions
	tr     *Translation

	checkpoints *Checkpoints
	syncs       *OffsetSyncStore
	syncsErr    error
}

// sinkPending is one sink partition being translated.
type sinkPending struct {
	group int // index into SinkGroups
	off   snapshot.SinkOffset
	res   TranslatedOffset
	// copyName is the target's topic res.Fix names, when untranslated:
	// the target group's live offset there is kept (apply).
	copyName string
}

// sinks translates every sink offset of out in place.
func (t *translator) sinks(ctx context.Context, out *snapshot.Snapshot, origGroup map[int]string) error {
	var ps []*sinkPending
	for gi, g := range out.SinkGroups {
		for _, o := range g.Offsets {
			ps = append(ps, &sinkPending{group: gi, off: o, res: TranslatedOffset{
				Group: g.Group, Connector: g.Connector, Topic: o.Topic, Partition: o.Partition,
				NewTopic: t.rename(o.Topic), Old: o.Offset, New: -1, Redeliver: -1, Skip: -1,
			}})
		}
	}
	if len(ps) == 0 {
		return nil
	}
	if t.opts.Method == TranslateMM2 {
		for _, p := range ps {
			if !t.explicitName(p.off.Topic) {
				p.res.NewTopic = t.opts.SourceAlias + "." + p.off.Topic // DefaultReplicationPolicy
			}
		}
	}
	var byTimestamp []*sinkPending
	switch t.opts.Method {
	case "":
		for _, p := range ps {
			p.res.New, p.res.Method, p.res.Redeliver, p.res.Skip = p.off.Offset, MethodKept, 0, 0
		}
	case TranslateTimestamp:
		byTimestamp = ps
	case TranslateMM2:
		var err error
		if byTimestamp, err = t.mm2(ctx, out, ps, origGroup); err != nil {
			return err
		}
	}
	if err := t.checkTopics(ctx, byTimestamp); err != nil {
		return err
	}
	if err := t.timestamps(ctx, byTimestamp); err != nil {
		return err
	}
	if err := t.checkTopics(ctx, ps); err != nil {
		return err
	}
	if err := t.estimate(ctx, ps); err != nil {
		return err
	}
	return t.apply(ctx, out, ps)
}

// rename is the target's name of sink topic topic.
func (t *translator) rename(topic string) string {
	if n, ok := t.opts.MapTopics[topic]; ok {
		return n
	}
	if t.opts.TopicPrefix != "" {
		return t.opts.TopicPrefix + topic
	}
	return topic
}

// explicitName reports whether the target's topic name was given.
func (t *translator) explicitName(topic string) bool {
	_, ok := t.opts.MapTopics[topic]
	return ok || t.opts.TopicPrefix != ""
}

// mm2 translates by checkpoints, then offset syncs, and returns the
// partitions left for timestamps.
func (t *translator) mm2(ctx context.Context, out *snapshot.Snapshot, ps []*sinkPending, origGroup map[int]string) ([]*sinkPending, error) {
	topic := CheckpointsTopic(t.opts.SourceAlias)
	cps, err := ReadCheckpoints(ctx, t.target, topic)
	if err != nil {
		if !errors.Is(err, errNoTopic) {
			return nil, err
		}
		t.tr.Notes = append(t.tr.Notes, fmt.Sprintf("MirrorMaker 2's checkpoints topic %q does not exist on the target cluster (is the source alias %q right? is MirrorCheckpointConnector running?)", topic, t.opts.SourceAlias))
		cps = &Checkpoints{Topic: topic}
	}
	t.checkpoints = cps
	var rest []*sinkPending
	noted := map[string]bool{}
	for _, p := range ps {
		group := origGroup[p.group]
		if !cps.HasGroup(group) {
			if !noted[group] {
				noted[group] = true
				why := "MirrorMaker 2 checkpoints only the groups its groups and groups.exclude settings let through (groups.exclude defaults to console-consumer-.*, connect-.*, __.*) once they commit offsets of topics it mirrors"
				if strings.HasPrefix(group, t.opts.GroupPrefix) {
					why = "MirrorMaker 2's default groups.exclude (console-consumer-.*, connect-.*, __.*) leaves out every connect-<name> sink group; set groups.exclude on the MirrorCheckpointConnector without connect-.* to get them"
				}
				t.tr.Notes = append(t.tr.Notes, fmt.Sprintf("group %q has no checkpoints in %s: %s; falling back to %s", group, topic, why, t.fallbackName()))
			}
			rest = append(rest, p)
			continue
		}
		if !t.checkpoint(p, group) {
			rest = append(rest, p)
		}
	}
	if len(rest) == 0 || t.opts.Source == nil {
		return rest, nil
	}
	var left []*sinkPending
	for _, p := range rest {
		if !t.offsetSync(ctx, p) {
			left = append(left, p)
		}
	}
	return left, nil
}

func (t *translator) fallbackName() string {
	if t.opts.Source != nil {
		return "MirrorMaker 2's offset syncs on the source cluster, then timestamps"
	}
	return "timestamps (give --source-brokers to use MirrorMaker 2's offset syncs first)"
}

// checkpoint translates p by the group's checkpoints: the newest whose
// upstream offset is not past p's, so that nothing is skipped.
func (t *translator) checkpoint(p *sinkPending, group string) bool {
	cands := []string{p.res.NewTopic}
	if !t.explicitName(p.off.Topic) {
		cands = []string{t.opts.SourceAlias + "." + p.off.Topic, p.off.Topic}
	}
	for _, topic := range cands {
		cs := t.checkpoints.Lookup(group, topic, p.off.Partition)
		if len(cs) == 0 {
			continue
		}
		p.res.NewTopic = topic
		o := p.off.Offset
		for i := len(cs) - 1; i >= 0; i-- {
			c := cs[i]
			if c.Upstream <= o && c.Downstream >= 0 {
				p.res.Method, p.res.New = MethodCheckpoint, c.Downstream
				if c.Upstream == o {
					p.res.Why = fmt.Sprintf("checkpoint of upstream offset %d", c.Upstream)
				} else {
					p.res.Why = fmt.Sprintf("checkpoint of upstream offset %d, %d before the snapshot's", c.Upstream, o-c.Upstream)
				}
				return true
			}
		}
		newest := cs[len(cs)-1]
		p.res.Method, p.res.Untranslated = MethodCheckpoint, true
		p.res.Why = fmt.Sprintf("the group's checkpoints are all past the snapshot's offset (the newest is of upstream offset %d, %d records later): translating would skip records; restore a newer snapshot, or use --translate timestamp", newest.Upstream, newest.Upstream-o)
		return true
	}
	return false
}

// offsetSync translates p by MM2's offset syncs on the source cluster.
func (t *translator) offsetSync(ctx context.Context, p *sinkPending) bool {
	if t.syncs == nil && t.syncsErr == nil {
		t.syncs, t.syncsErr = t.readSyncs(ctx)
		if t.syncsErr != nil {
			t.tr.Notes = append(t.tr.Notes, fmt.Sprintf("MirrorMaker 2's offset syncs were not read: %v; falling back to timestamps", t.syncsErr))
		}
	}
	if t.syncsErr != nil || !t.syncs.Has(p.off.Topic, p.off.Partition) {
		return false
	}
	if !t.explicitName(p.off.Topic) {
		p.res.NewTopic = t.opts.SourceAlias + "." + p.off.Topic
	}
	d, s, ok := t.syncs.Translate(p.off.Topic, p.off.Partition, p.off.Offset)
	p.res.Method = MethodOffsetSync
	if !ok {
		p.res.Untranslated = true
		p.res.Why = fmt.Sprintf("every offset sync left in %s is past upstream offset %d (the oldest is of %d): the offsets are too old to translate (MM2's -1)", t.syncs.Topic, p.off.Offset, s.Upstream)
		return true
	}
	p.res.New = d
	if s.Upstream == p.off.Offset {
		p.res.Redeliver, p.res.Skip = 0, 0
	}
	p.res.Why = fmt.Sprintf("offset sync %d -> %d", s.Upstream, s.Downstream)
	return true
}

func (t *translator) readSyncs(ctx context.Context) (*OffsetSyncStore, error) {
	alias := t.opts.TargetAlias
	if alias == "" {
		topics, err := kadm.NewClient(t.opts.Source).ListTopics(ctx)
		if err != nil {
			return nil, fmt.Errorf("list topics of the source cluster: %w", err)
		}
		var found []string
		for _, name := range topics.Names() {
			if a, ok := strings.CutPrefix(name, "mm2-offset-syncs."); ok && strings.HasSuffix(a, ".internal") {
				found = append(found, strings.TrimSuffix(a, ".internal"))
			}
		}
		switch len(found) {
		case 0:
			return nil, errors.New("the source cluster has no mm2-offset-syncs.<target alias>.internal topic (offset-syncs.topic.location=target keeps it on the target cluster)")
		case 1:
			alias = found[0]
		default:
			return nil, fmt.Errorf("the source cluster has offset-syncs topics for %d target aliases (%s): name the target's with --mm2-target-alias", len(found), strings.Join(found, ", "))
		}
	}
	return ReadOffsetSyncs(ctx, t.opts.Source, OffsetSyncsTopic(alias))
}

// timestamps translates ps by the snapshot's last consumed records.
func (t *translator) timestamps(ctx context.Context, ps []*sinkPending) error {
	var ask []*sinkPending
	for _, p := range ps {
		if p.res.Untranslated {
			continue // its topic is not on the target
		}
		lc := p.off.LastConsumed
		p.res.Method = MethodTimestamp
		switch {
		case p.off.Offset == 0:
			p.res.Method, p.res.Redeliver, p.res.Skip = MethodStart, 0, 0
			p.res.Why = "nothing consumed yet"
			ask = append(ask, p)
		case lc == nil:
			p.res.Untranslated = true
			p.res.Why = "the snapshot holds no last consumed record for it (taken before offsetkeeper recorded them, or the record could not be read then: see the snapshot's warnings)"
		case lc.Offset < 0:
			p.res.Method, p.res.Skip = MethodStart, 0
			p.res.Why = "nothing the group consumed was left in the source log"
			ask = append(ask, p)
		case lc.LogAppendTime:
			p.res.Untranslated = true
			p.res.Why = fmt.Sprintf("topic %q stamps records with LogAppendTime on the source cluster: the copies' timestamps differ", p.off.Topic)
		default:
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	var topics []string
	for _, p := range ask {
		if !slices.Contains(topics, p.res.NewTopic) {
			topics = append(topics, p.res.NewTopic)
		}
	}
	slices.Sort(topics)
	appendTime, err := t.logAppendTime(ctx, topics)
	if err != nil {
		return err
	}
	starts, err := t.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list start offsets of %v on the target: %w", topics, err)
	}
	stable, err := t.adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list last stable offsets of %v on the target: %w", topics, err)
	}
	margin := t.opts.Margin.Milliseconds()
	at, err := t.offsetsForTimes(ctx, ask, func(lc *snapshot.LastConsumed) int64 { return lc.Timestamp - margin })
	if err != nil {
		return err
	}
	after, err := t.offsetsForTimes(ctx, ask, func(lc *snapshot.LastConsumed) int64 { return lc.Timestamp + 1 })
	if err != nil {
		return err
	}
	for _, p := range ask {
		tp := topicPart{p.res.NewTopic, p.off.Partition}
		s, sok := starts.Lookup(tp.topic, tp.part)
		l, lok := stable.Lookup(tp.topic, tp.part)
		switch {
		case !sok || !lok || errors.Is(s.Err, kerr.UnknownTopicOrPartition) || errors.Is(l.Err, kerr.UnknownTopicOrPartition):
			p.res.Untranslated = true
			p.res.Why = fmt.Sprintf("%s/%d does not exist on the target", tp.topic, tp.part)
			continue
		case s.Err != nil:
			return fmt.Errorf("list start offset of %s/%d on the target: %w", tp.topic, tp.part, s.Err)
		case l.Err != nil:
			return fmt.Errorf("list last stable offset of %s/%d on the target: %w", tp.topic, tp.part, l.Err)
		}
		if p.res.Method == MethodStart {
			p.res.New = s.Offset
			continue
		}
		if appendTime[tp.topic] {
			p.res.Untranslated = true
			p.res.Why = fmt.Sprintf("topic %q stamps records with LogAppendTime on the target cluster: its timestamps are not the source's", tp.topic)
			continue
		}
		a, ok := at[topicPartTime{tp.topic, tp.part, p.off.LastConsumed.Timestamp - margin}]
		if !ok {
			return fmt.Errorf("list offsets by time of %s/%d on the target: no answer", tp.topic, tp.part)
		}
		newOff := a
		if newOff < 0 || newOff > l.Offset {
			newOff = l.Offset // nothing at or after the time below the last stable offset
		}
		p.res.New = newOff
		end, ok := after[topicPartTime{tp.topic, tp.part, p.off.LastConsumed.Timestamp + 1}]
		if !ok {
			return fmt.Errorf("list offsets by time of %s/%d on the target: no answer", tp.topic, tp.part)
		}
		if end < 0 || end > l.Offset {
			end = l.Offset
		}
		p.res.Redeliver, p.res.Skip = max(0, end-newOff), 0
		p.res.Why = fmt.Sprintf("first record at or after %s", time.UnixMilli(p.off.LastConsumed.Timestamp-margin).UTC().Format("2006-01-02T15:04:05.000Z07:00"))
		if end-newOff == 0 {
			p.res.Why += "; the last consumed record is not on the target (not copied yet?)"
		}
	}
	return nil
}

// estimate tells, for the partitions translated by MM2, how many records
// the new offset re-delivers or skips, from the snapshot's last consumed
// record: its copy on the target is the last record with its timestamp,
// so the next record the connector is to read is the first one after
// that time. Partitions without a usable last consumed record stay "?".
func (t *translator) estimate(ctx context.Context, ps []*sinkPending) error {
	var ask []*sinkPending
	for _, p := range ps {
		lc := p.off.LastConsumed
		if !p.res.Untranslated && (p.res.Method == MethodCheckpoint || p.res.Method == MethodOffsetSync) && lc != nil && lc.Offset >= 0 && !lc.LogAppendTime {
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	var topics []string
	for _, p := range ask {
		if !slices.Contains(topics, p.res.NewTopic) {
			topics = append(topics, p.res.NewTopic)
		}
	}
	appendTime, err := t.logAppendTime(ctx, topics)
	if err != nil {
		return err
	}
	// offsetsForTimes asks for timestamp-method partitions only.
	method := make([]string, len(ask))
	for i, p := range ask {
		method[i], p.res.Method = p.res.Method, MethodTimestamp
	}
	next, err := t.offsetsForTimes(ctx, ask, func(lc *snapshot.LastConsumed) int64 { return lc.Timestamp + 1 })
	for i, p := range ask {
		p.res.Method = method[i]
	}
	if err != nil {
		return err
	}
	stable, err := t.adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list last stable offsets of %v on the target: %w", topics, err)
	}
	for _, p := range ask {
		n, ok := next[topicPartTime{p.res.NewTopic, p.off.Partition, p.off.LastConsumed.Timestamp + 1}]
		l, lok := stable.Lookup(p.res.NewTopic, p.off.Partition)
		if !ok || !lok || l.Err != nil || appendTime[p.res.NewTopic] {
			continue
		}
		if n < 0 || n > l.Offset {
			n = l.Offset // nothing after the last consumed record: the end
		}
		p.res.Redeliver, p.res.Skip = max(0, n-p.res.New), max(0, p.res.New-n)
		if p.res.Skip > 0 {
			p.res.Why += fmt.Sprintf("; by the last consumed record's timestamp the next record to read is at %d: this skips %d records", n, p.res.Skip)
		}
	}
	return nil
}

// offsetsForTimes lists, per partition and time, the first offset on the
// target with a timestamp at or after ts(its last consumed record); -1
// when none. A partition asked at two times (two groups read it) goes in
// two requests.
func (t *translator) offsetsForTimes(ctx context.Context, ps []*sinkPending, ts func(*snapshot.LastConsumed) int64) (map[topicPartTime]int64, error) {
	var reqs []*kmsg.ListOffsetsRequest
	asked := map[topicPartTime]bool{}
	for _, p := range ps {
		if p.res.Method != MethodTimestamp {
			continue
		}
		key := topicPartTime{p.res.NewTopic, p.off.Partition, ts(p.off.LastConsumed)}
		if asked[key] {
			continue
		}
		asked[key] = true
		var req *kmsg.ListOffsetsRequest
	find:
		for _, r := range reqs {
			for _, rt := range r.Topics {
				if rt.Topic == key.topic {
					for _, rp := range rt.Partitions {
						if rp.Partition == key.part {
							continue find
						}
					}
				}
			}
			req = r
			break
		}
		if req == nil {
			req = kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID = -1
			reqs = append(reqs, req)
		}
		i := slices.IndexFunc(req.Topics, func(rt kmsg.ListOffsetsRequestTopic) bool { return rt.Topic == key.topic })
		if i < 0 {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = key.topic
			req.Topics = append(req.Topics, rt)
			i = len(req.Topics) - 1
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = key.part
		rp.CurrentLeaderEpoch = -1
		rp.Timestamp = key.ts
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	out := map[topicPartTime]int64{}
	for _, req := range reqs {
		times := map[topicPart]int64{}
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				times[topicPart{rt.Topic, rp.Partition}] = rp.Timestamp
			}
		}
		for _, sh := range t.target.RequestSharded(ctx, req) {
			if sh.Err != nil {
				return nil, fmt.Errorf("list offsets by time on the target: %w", sh.Err)
			}
			resp := sh.Resp.(*kmsg.ListOffsetsResponse)
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
						return nil, fmt.Errorf("list offsets by time of %s/%d on the target: %w", rt.Topic, rp.Partition, err)
					}
					out[topicPartTime{rt.Topic, rp.Partition, times[topicPart{rt.Topic, rp.Partition}]}] = rp.Offset
				}
			}
		}
	}
	return out, nil
}

type topicPartTime struct {
	topic string
	part  int32
	ts    int64
}

// logAppendTime reports which topics stamp records with LogAppendTime.
func (t *translator) logAppendTime(ctx context.Context, topics []string) (map[string]bool, error) {
	rcs, err := t.adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe configs of %v on the target: %w", topics, err)
	}
	out := map[string]bool{}
	for _, rc := range rcs {
		if rc.Err != nil {
			if errors.Is(rc.Err, kerr.UnknownTopicOrPartition) {
				continue
			}
			return nil, fmt.Errorf("describe configs of topic %q on the target: %w", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == "message.timestamp.type" && c.MaybeValue() == "LogAppendTime" {
				out[rc.Name] = true
			}
		}
	}
	return out, nil
}

// checkTopics marks partitions whose target topic does not exist.
func (t *translator) checkTopics(ctx context.Context, ps []*sinkPending) error {
	var topics []string
	for _, p := range ps {
		if !p.res.Untranslated && !slices.Contains(topics, p.res.NewTopic) {
			topics = append(topics, p.res.NewTopic)
		}
	}
	if len(topics) == 0 {
		return nil
	}
	exist, err := restore.TopicsExist(ctx, t.adm, topics)
	if err != nil {
		return err
	}
	var copies map[string][]string // topic -> the target's topics named <prefix>.<topic>
	var names map[string]bool      // the target's topics
	for _, p := range ps {
		if p.res.Untranslated || exist[p.res.NewTopic] {
			continue
		}
		p.res.Untranslated = true
		p.res.Why = fmt.Sprintf("topic %q does not exist on the target", p.res.NewTopic)
		if copies == nil {
			if copies, names, err = t.copiesOf(ctx); err != nil {
				return err
			}
		}
		_, mapped := t.opts.MapTopics[p.res.Topic]
		switch c := copies[p.res.Topic]; {
		case len(c) == 1 && !mapped:
			prefix := strings.TrimSuffix(c[0], p.res.Topic)
			p.res.Fix, p.copyName = "--topic-prefix "+restore.ShellQuote(prefix), c[0]
			p.res.Why += fmt.Sprintf("; the target holds %q: restore with --topic-prefix %s (or --map-topic %s=%s)", c[0], restore.ShellQuote(prefix), p.res.Topic, c[0])
		case len(c) > 0:
			p.res.Fix, p.copyName = "--map-topic "+restore.ShellQuote(p.res.Topic+"="+c[0]), c[0]
			p.res.Why += fmt.Sprintf("; the target holds %s: name the copy with --map-topic %s=<copy>", quoteList(c), p.res.Topic)
		case !mapped && originalOf(p.res.Topic, names) != "":
			// A failback after a MirrorMaker 2 failover: the state's
			// primary.orders is the copy of the target's own orders.
			orig := originalOf(p.res.Topic, names)
			p.res.Fix, p.copyName = "--map-topic "+restore.ShellQuote(p.res.Topic+"="+orig), orig
			p.res.Why += fmt.Sprintf("; the target holds %q, which %q is MirrorMaker 2's copy of if %q is its alias of the target (a failback): restore with --map-topic %s=%s",
				orig, p.res.Topic, strings.TrimSuffix(p.res.Topic, "."+orig), p.res.Topic, orig)
		default:
			p.res.Why += fmt.Sprintf("; if the target has it under another name, name it with --map-topic %s=<topic> (or --topic-prefix P for P<topic>)", p.res.Topic)
		}
	}
	return nil
}

// copiesOf lists the target's topics by the topic they may be a copy of:
// a.orders under orders (MirrorMaker 2's <alias>.<topic>).
// names are the target's topics.
func (t *translator) copiesOf(ctx context.Context) (map[string][]string, map[string]bool, error) {
	listed, err := t.adm.ListTopics(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("list the target's topics: %w", err)
	}
	out, names := map[string][]string{}, map[string]bool{}
	for _, name := range listed.Names() {
		if d := listed[name]; d.Err != nil || len(d.Partitions) == 0 {
			continue // named in the answer, but not there (kfake lists a topic asked for before)
		}
		names[name] = true
		for i := 0; i < len(name)-1; i++ {
			if name[i] == '.' {
				out[name[i+1:]] = append(out[name[i+1:]], name)
			}
		}
	}
	for _, c := range out {
		slices.Sort(c)
	}
	return out, names, nil
}

// originalOf is the topic of names that topic is MirrorMaker 2's copy of
// by its DefaultReplicationPolicy (<alias>.<topic>, aliases stripped one
// at a time, as its originalTopic does, the first name found), "" when
// none is. A failback reads the copies the failover's offsets point to,
// and MirrorMaker 2 never mirrors a topic back to its own cluster.
func originalOf(topic string, names map[string]bool) string {
	for rest := topic; ; {
		_, after, ok := strings.Cut(rest, ".")
		if !ok || after == "" {
			return ""
		}
		if names[after] {
			return after
		}
		rest = after
	}
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// apply writes the translated offsets into out's groups. A partition not
// translated keeps the target group's live offset, if it has one, so that
// the restore neither writes nor deletes it.
func (t *translator) apply(ctx context.Context, out *snapshot.Snapshot, ps []*sinkPending) error {
	live := map[string]kadm.OffsetResponses{}
	for _, p := range ps {
		if !p.res.Untranslated {
			continue
		}
		g := out.SinkGroups[p.group].Group
		if _, ok := live[g]; ok {
			continue
		}
		resp, err := t.adm.FetchOffsets(ctx, g)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return fmt.Errorf("fetch offsets of group %q on the target: %w", g, err)
		}
		live[g] = resp
	}
	for i := range out.SinkGroups {
		out.SinkGroups[i].Offsets = out.SinkGroups[i].Offsets[:0]
	}
	for _, p := range ps {
		if !p.res.Untranslated {
			g := &out.SinkGroups[p.group]
			g.Offsets = append(g.Offsets, snapshot.SinkOffset{Topic: p.res.NewTopic, Partition: p.off.Partition, Offset: p.res.New, LeaderEpoch: -1, Metadata: p.off.Metadata})
		}
		t.tr.Offsets = append(t.tr.Offsets, p.res)
	}
	for _, p := range ps {
		if !p.res.Untranslated {
			continue
		}
		// Kept under the name the translation tried, and under the copy
		// its fix names (a failback's orders for primary.orders): the
		// group's position there is neither written nor deleted.
		g := &out.SinkGroups[p.group]
		for _, topic := range []string{p.res.NewTopic, p.copyName} {
			l, ok := live[g.Group].Lookup(topic, p.off.Partition)
			if topic == "" || !ok || l.Err != nil || l.At < 0 ||
				slices.ContainsFunc(g.Offsets, func(o snapshot.SinkOffset) bool { return o.Topic == topic && o.Partition == p.off.Partition }) {
				continue
			}
			g.Offsets = append(g.Offsets, snapshot.SinkOffset{Topic: topic, Partition: p.off.Partition, Offset: l.At, LeaderEpoch: l.LeaderEpoch, Metadata: l.Metadata})
		}
	}
	slices.SortFunc(t.tr.Offsets, func(a, b TranslatedOffset) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return nil
}

// orNone is s, or "(unknown)" when empty.
func orNone(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// errWriter keeps the first error of a run of writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
