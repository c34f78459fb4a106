// Package standby keeps a standby Kafka Connect cluster in step with a
// primary: the primary's state as the journal holds it (a snapshot) is
// applied to the standby with restore's own plan, safety checks and
// writer, again and again, so that a disaster recovery becomes a resume.
//
// The two things to know are [Syncer], which applies one state to the
// standby per call to [Syncer.Sync] and reports it in a [Report], and the
// [Fence] a failover stores so that the primary's daemon never writes to
// the standby again (see fence.go).
//
// Guarantees, all restore's (see package restore):
//   - Source offsets are written byte for byte, each on its murmur2
//     partition of the standby's offsets topic, one transaction per topic.
//   - Each Sync compares the state with what the standby holds, read from
//     its offsets topics to their end and its sink groups, and writes only
//     the difference: a Sync after a restart, a crash or a failed write
//     resumes from the standby itself, never from memory, and a Sync that
//     finds the standby in step writes nothing. A Syncer reads only what
//     was written to the standby since its last Sync (by it or anyone
//     else), through the last plan's capture; its first Sync, and one
//     after an error or Forget, read the standby whole.
//   - The standby is passive: while a connector in scope runs (or is
//     paused, or its sink group has members) on the standby, Sync writes
//     nothing at all and returns an error matching [ErrRunning].
//   - Keys of the offsets topics that no connector owns (not
//     [connector, {partition}]) are not copied: no connector reads them.
//   - Sink offsets are translated as restore --translate does (none, mm2,
//     timestamp); a sink partition that cannot be translated is left as
//     the standby has it and counted in Report.Misses.
package standby

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Errors returned by this package. Callers compare with errors.Is.
var (
	// ErrRunning: a connector in scope runs on the standby (or is paused,
	// or its sink group has members): nothing was written. The error is a
	// *RunningError naming them.
	ErrRunning = errors.New("a connector runs on the standby: the standby must be passive")
	// ErrFenced: a failover fenced this primary: it never writes to the
	// standby again (see Fence).
	ErrFenced = errors.New("the standby is fenced by a failover")
)

// Translation methods of Config.Translate.
const (
	TranslateNone      = "none"
	TranslateMM2       = translate.TranslateMM2
	TranslateTimestamp = translate.TranslateTimestamp
)

// Config says where the standby is and how sink offsets move to it.
type Config struct {
	// Client reaches the standby cluster.
	Client *kgo.Client
	// Options name the standby's worker topics and group prefix (the
	// restore options; AllowOtherCluster is always set: the standby is
	// another cluster).
	Options restore.Options
	// Translate is TranslateNone (also ""), TranslateMM2 or
	// TranslateTimestamp; MM2SourceAlias goes with TranslateMM2, Margin
	// with either translation (see translate.TranslateOptions).
	Translate      string
	MM2SourceAlias string
	Margin         time.Duration
	// MapTopics and TopicPrefix name the standby's copies of the sink
	// topics (translate.TranslateOptions): a failback after a MirrorMaker
	// 2 failover maps primary.orders back to orders. With TranslateNone
	// the offsets are kept as numbers in the topics so named.
	MapTopics   map[string]string
	TopicPrefix string
	// Connect, when set, is the standby's Connect REST API: its
	// connectors' states join the running check, and configs are kept in
	// step (see configs.go).
	Connect *connectrest.Client
	// Log gets a line per Sync that writes or is refused; nil is
	// slog.Default.
	Log *slog.Logger
	// DryRun plans and checks and writes nothing (configs neither: their
	// actions say what would be done).
	DryRun bool
	// Verify reads the standby back after writing (restore.Verify).
	Verify bool
	// CreateTopics creates the standby's Connect internal topics that are
	// missing (offsets, config, status: cleanup.policy=compact, the
	// primary's partition counts), with ReplicationFactor (0: the
	// broker's default); without it they are named (ErrTopicsMissing)
	// and nothing is written. See topics.go.
	CreateTopics      bool
	ReplicationFactor int
	// Store, when set, keeps the record of the configs written to the
	// standby's Connect (see configrecord.go): a restarted daemon still
	// tells its own configs from an operator's. Without it the record is
	// the Syncer's memory.
	Store *store.Store
	// Failover lets a connector that runs on the standby pass when Sync
	// writes nothing for it (a failover run again after it resumed some):
	// one it would write still refuses.
	Failover bool
}

// Finding is a connector and what was found about it.
type Finding struct {
	Connector string `json:"connector"`
	Why       string `json:"why"`
}

// Report is what one Sync did.
type Report struct {
	// At is the moment of the state applied (the journal's newest
	// change), Done when Sync returned.
	At   time.Time `json:"at"`
	Done time.Time `json:"done"`
	// InStep are the connectors of the scope whose offsets the standby
	// holds as the state has them after this Sync; OutOfStep those it
	// does not (a write failed, a translation missed), with why.
	InStep    []string  `json:"in_step"`
	OutOfStep []Finding `json:"out_of_step"`
	// Running are the connectors in scope the standby runs: Sync wrote
	// nothing because of them.
	Running []Finding `json:"running"`
	// AlreadyRunning are, under Config.Failover, the connectors in scope
	// that run on the standby although Sync writes nothing for them (the
	// standby holds their state): let pass, never silently.
	AlreadyRunning []Finding `json:"already_running,omitempty"`
	// Misses are the sink partitions that could not be translated.
	Misses []translate.TranslatedOffset `json:"translation_misses"`
	// Counts are the plan's (what differed before writing); Applied what
	// was written, nil when nothing was.
	Counts  restore.Counts  `json:"counts"`
	Applied *restore.Result `json:"-"`
	// Configs is what was done with each connector's config on the
	// standby's Connect (with Config.Connect).
	Configs []ConfigAction `json:"configs,omitempty"`
	// Warnings are the plan's warnings.
	Warnings []string `json:"warnings,omitempty"`
	// LiveRead says how the standby was read: ReadFull (the first sync of
	// a Syncer, after Forget or an error) or ReadIncremental (only what
	// was written to it since the last sync, by it or anyone else).
	// StateRead is how the caller read the state (Follower.Latest), ""
	// when it does not say.
	LiveRead  string `json:"live_read,omitempty"`
	StateRead string `json:"state_read,omitempty"`
	// Phases are the seconds each step of the Sync took: translate,
	// configs (with the topics' check), plan (the standby read), passive
	// (the running check), check, apply.
	Phases map[string]float64 `json:"phase_seconds,omitempty"`
	// CreatedTopics are the standby's Connect topics this Sync created
	// (Config.CreateTopics; a dry run: would create).
	CreatedTopics []string `json:"created_topics,omitempty"`
	// Verified is the read back (Config.Verify), nil when nothing was
	// written.
	Verified *restore.Verification `json:"-"`
	// Plan is the plan of the sync.
	Plan *restore.Plan `json:"-"`
	// State is the state applied, its sink offsets translated (see
	// DuplicateBounds).
	State *snapshot.Snapshot `json:"-"`
}

// RunningError is ErrRunning with the connectors that run.
type RunningError struct{ Running []Finding }

func (e *RunningError) Error() string {
	parts := make([]string, len(e.Running))
	for i, f := range e.Running {
		parts[i] = f.Connector + " (" + f.Why + ")"
	}
	return fmt.Sprintf("%s: %s; nothing was written (stop them on the standby, or they were started there: fail over instead)", ErrRunning, strings.Join(parts, ", "))
}

// Unwrap makes a RunningError match ErrRunning and restore.ErrRefused
// (a refusal: nothing written, exit 3).
func (e *RunningError) Unwrap() []error { return []error{ErrRunning, restore.ErrRefused} }

// Syncer applies states to one standby; between Syncs it keeps what
// Connect configs it wrote (see configs.go) and the live capture of its
// last plan, through which the next Sync reads only what was written to
// the standby since (restore.NewPlanAfter: the same as a full read). Not
// safe for concurrent use.
type Syncer struct {
	cfg Config
	// prev is the last Sync's plan, nil when the next must read the
	// standby whole.
	prev *restore.Plan
	// wrote holds the hash of the config last written to (or found
	// equal on) the standby per connector: a config that differs from it
	// was changed by an operator there (see configrecord.go). loaded is
	// the primary whose record wrote holds ("" before it was read from
	// Config.Store), dirty says it changed since stored, standbyID is the
	// standby's cluster id.
	wrote     map[string]string
	configs   configsSeen
	loaded    string
	dirty     bool
	standbyID string
}

// New returns a Syncer of cfg.
func New(cfg Config) (*Syncer, error) {
	switch cfg.Translate {
	case "", TranslateNone, TranslateTimestamp:
		if cfg.MM2SourceAlias != "" {
			return nil, errors.New("standby: the MirrorMaker 2 source alias goes with translation mm2")
		}
	case TranslateMM2:
		if cfg.MM2SourceAlias == "" {
			return nil, errors.New("standby: translation mm2 needs MirrorMaker 2's alias of the primary cluster")
		}
	default:
		return nil, fmt.Errorf("standby: translation %q: want none, mm2 or timestamp", cfg.Translate)
	}
	if cfg.Client == nil {
		return nil, errors.New("standby: no client of the standby cluster")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Options.AllowOtherCluster = true
	cfg.Options.Options.Defaults()
	return &Syncer{cfg: cfg, wrote: map[string]string{}}, nil
}

// Sync applies state, the primary's state at moment at, to the standby.
// It translates the sink offsets, plans against what the standby holds,
// refuses while a connector in scope runs there (ErrRunning), runs
// restore's safety checks (restore.ErrRefused), writes the difference
// (restore.Apply) and, with Config.Connect, keeps the configs in step.
// The Report holds what was found and done, also on an error.
func (s *Syncer) Sync(ctx context.Context, state *snapshot.Snapshot, at time.Time) (rep *Report, err error) {
	rep, lap := &Report{At: at}, time.Now()
	defer func() { rep.Done = time.Now() }()
	snap, err := s.translate(ctx, state, rep)
	if err != nil {
		return rep, err
	}
	rep.State = snap
	rep.lap("translate", &lap)
	opts := s.options(snap)
	if err := s.ensureTopics(ctx, snap, opts, rep); err != nil {
		return rep, err
	}
	if s.cfg.Connect != nil {
		// First, so that a connector created now names its own offsets
		// topic to the plan as a worker would read it.
		rep.Configs = s.syncConfigs(ctx, snap)
	}
	rep.lap("configs", &lap)
	prev := s.prev
	s.prev = nil // kept again only when this Sync ends without an error
	plan, err := restore.NewPlanAfter(ctx, s.cfg.Client, snap, opts, prev)
	if err != nil {
		return rep, fmt.Errorf("plan the standby: %w", err)
	}
	rep.Counts, rep.Warnings, rep.Plan = plan.Counts(), plan.Warnings, plan
	rep.LiveRead = ReadFull
	if plan.LiveReadIncremental() {
		rep.LiveRead = ReadIncremental
	}
	defer func() {
		if err == nil || errors.Is(err, ErrRunning) {
			s.prev = plan
		}
	}()
	rep.lap("plan", &lap)
	if err := s.checkPassive(ctx, plan, rep); err != nil {
		s.outOfStep(plan, rep, "the standby runs connectors in scope: nothing written")
		return rep, err
	}
	rep.lap("passive", &lap)
	if plan.Empty() {
		s.inStep(plan, rep)
		return rep, nil
	}
	if err := plan.Check(ctx, s.cfg.Client); err != nil {
		s.outOfStep(plan, rep, "refused by a safety check: nothing written")
		return rep, fmt.Errorf("write the standby: %w", err)
	}
	if s.cfg.DryRun {
		s.outOfStep(plan, rep, "dry run: nothing written")
		return rep, nil
	}
	rep.lap("check", &lap)
	res, err := restore.Apply(ctx, s.cfg.Client, plan)
	rep.Applied = res
	rep.lap("apply", &lap)
	if err != nil {
		s.outOfStep(plan, rep, "the write failed: the next sync writes it again")
		return rep, fmt.Errorf("write the standby: %w", err)
	}
	if s.cfg.Verify {
		v, err := restore.Verify(ctx, s.cfg.Client, plan)
		rep.Verified = v
		if err != nil {
			s.outOfStep(plan, rep, "written, but the read back differs")
			return rep, fmt.Errorf("verify the standby: %w", err)
		}
	}
	s.inStep(plan, rep)
	s.cfg.Log.Debug("standby written", "source_writes", res.SourceWrites, "tombstones", res.Tombstones,
		"sink_commits", res.SinkCommits, "duration", res.Duration, "phase_seconds", rep.Phases)
	return rep, nil
}

// lap records in rep.Phases the time since *from as phase name's, and
// moves *from to now.
func (r *Report) lap(name string, from *time.Time) {
	now := time.Now()
	if r.Phases == nil {
		r.Phases = map[string]float64{}
	}
	r.Phases[name] = now.Sub(*from).Seconds()
	*from = now
}

// Forget drops what the Syncer read of the standby: the next Sync reads
// it whole (a daemon that leads again after another did).
func (s *Syncer) Forget() { s.prev, s.loaded, s.configs = nil, "", configsSeen{} }

// options are the restore options of a sync of snap: the standby's worker
// offsets topics, and every connector's own offsets topic the primary's
// configs name (offsets.storage.topic), so that a connector the standby
// has no config for yet gets its keys in the topic it will read once
// created with the primary's config, not in the worker's.
func (s *Syncer) options(snap *snapshot.Snapshot) restore.Options {
	opts := s.cfg.Options
	opts.OffsetsTopics = slices.Clone(opts.OffsetsTopics)
	for _, c := range snap.Connectors {
		if t := c.Config[ownOffsetsTopic]; t != "" && !slices.Contains(opts.OffsetsTopics, t) {
			opts.OffsetsTopics = append(opts.OffsetsTopics, t)
		}
	}
	return opts
}

// ownOffsetsTopic is the connector config key of its own offsets topic.
const ownOffsetsTopic = "offsets.storage.topic"

// translate is state with its sink offsets translated into the standby's
// copies of the topics (Config.Translate); the misses go to rep.
func (s *Syncer) translate(ctx context.Context, state *snapshot.Snapshot, rep *Report) (*snapshot.Snapshot, error) {
	method := s.cfg.Translate
	if method == TranslateNone {
		method = ""
	}
	if method == "" && len(s.cfg.MapTopics) == 0 && s.cfg.TopicPrefix == "" {
		return state, nil
	}
	opts := translate.TranslateOptions{Method: method, SourceAlias: s.cfg.MM2SourceAlias, Margin: s.cfg.Margin,
		MapTopics: s.cfg.MapTopics, TopicPrefix: s.cfg.TopicPrefix, ConfigTopic: s.cfg.Options.ConfigTopic, GroupPrefix: s.cfg.Options.GroupPrefix, Connectors: s.cfg.Options.Connectors}
	out, tr, err := translate.Translate(ctx, s.cfg.Client, state, opts)
	if err != nil {
		return nil, fmt.Errorf("translate sink offsets for the standby: %w", err)
	}
	rep.Misses = tr.Untranslated()
	return out, nil
}

// checkPassive returns a *RunningError when a connector in scope runs on
// the standby, as its config topic says or (with Config.Connect) its
// REST API reports; what it finds goes to rep.Running.
func (s *Syncer) checkPassive(ctx context.Context, plan *restore.Plan, rep *Report) error {
	var rest map[string]connectrest.Status
	if s.cfg.Connect != nil {
		states, err := s.cfg.Connect.States(ctx)
		if err != nil {
			return fmt.Errorf("read the standby's connector states (Connect REST API): %w; nothing was written", err)
		}
		rest = states
	}
	for _, cp := range plan.Connectors {
		lc := cp.Live
		found := &rep.Running
		if s.cfg.Failover && !cp.Writes() {
			found = &rep.AlreadyRunning
		}
		switch st, ok := rest[cp.Name]; {
		case lc.HasConfig && !lc.Stopped():
			*found = append(*found, Finding{cp.Name, "target state " + cp.State() + " in the standby's config topic"})
		case ok && st.Connector.State != connectrest.StateStopped:
			*found = append(*found, Finding{cp.Name, "the standby's Connect reports it " + st.String()})
		case cp.Sink != nil && cp.Sink.Members > 0:
			*found = append(*found, Finding{cp.Name, fmt.Sprintf("sink group %s has members on the standby", cp.Sink.Group)})
		}
	}
	if len(rep.Running) == 0 {
		return nil
	}
	return &RunningError{Running: rep.Running}
}

// inStep sorts the plan's connectors into rep: in step, or out of step
// for a translation miss.
func (s *Syncer) inStep(plan *restore.Plan, rep *Report) {
	missed := map[string]int{}
	fixes := map[string][]string{}
	for _, m := range rep.Misses {
		missed[m.Connector]++
		if f := standbyFix(m.Fix); f != "" && !slices.Contains(fixes[m.Connector], f) {
			fixes[m.Connector] = append(fixes[m.Connector], f)
		}
	}
	for _, cp := range plan.Connectors {
		if n := missed[cp.Name]; n > 0 {
			why := fmt.Sprintf("%d sink partitions could not be translated", n)
			if f := fixes[cp.Name]; len(f) > 0 {
				why += fmt.Sprintf("; the daemon maps them with %s (OFFSETKEEPER_STANDBY_MAP_TOPIC, "+
					"OFFSETKEEPER_STANDBY_TOPIC_PREFIX)", strings.Join(f, " "))
			}
			rep.OutOfStep = append(rep.OutOfStep, Finding{cp.Name, why})
			continue
		}
		rep.InStep = append(rep.InStep, cp.Name)
	}
}

// outOfStep marks the connectors the plan would have written out of step
// (why), the others in step.
func (s *Syncer) outOfStep(plan *restore.Plan, rep *Report, why string) {
	for _, cp := range plan.Connectors {
		if cp.Writes() {
			rep.OutOfStep = append(rep.OutOfStep, Finding{cp.Name, why})
		} else if !slices.ContainsFunc(rep.Running, func(f Finding) bool { return f.Connector == cp.Name }) {
			rep.InStep = append(rep.InStep, cp.Name)
		}
	}
}

// standbyFix is a translation miss's fix (restore's --map-topic or
// --topic-prefix) as the standby daemon's setting of the same name: the
// daemon takes --standby-map-topic, and a miss said "restore with
// --map-topic", which the daemon's operator cannot run.
func standbyFix(fix string) string {
	for _, flag := range []string{"--map-topic ", "--topic-prefix "} {
		if v, ok := strings.CutPrefix(fix, flag); ok {
			return "--standby-" + strings.TrimPrefix(flag, "--") + v
		}
	}
	return ""
}
