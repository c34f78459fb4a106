package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Values of Request.Via.
const (
	// ViaKafka writes the offsets into Kafka, exact bytes (the default).
	ViaKafka = "kafka"
	// ViaConnect writes them through PATCH /connectors/NAME/offsets
	// (Kafka 3.6+) and verifies with GET.
	ViaConnect = "connect"
)

// Env is what [Run] works with.
type Env struct {
	// Client reaches the cluster restored into.
	Client *kgo.Client
	// Store keeps the undo snapshot.
	Store *store.Store
	// Connect, when set, adds the Connect REST states to the plan and the
	// safety checks; Request.StopConnectors and Via ViaConnect need it.
	Connect *connectrest.Client
	// Out gets the progress lines (the plan, "undo snapshot: ID",
	// "applied: ...", "verified: ..."); Warn the warnings of --force.
	// Either may be nil (io.Discard).
	Out, Warn io.Writer
	// Log gets one summary line per restore; nil is slog.Default.
	Log *slog.Logger
	// Progress, when set, gets the stage (plan, stop connectors, undo
	// snapshot, apply, verify, resume connectors), the records read and
	// written and the groups committed, as the restore goes; Run sets it
	// as the captures' Options.Progress unless the request has one.
	Progress *capture.Progress
}

// Request is one restore.
type Request struct {
	// Snapshot is what to restore: a stored snapshot, or one built from a
	// file (see offsetsfile.OffsetsFile.Snapshot) or elsewhere.
	Snapshot *snapshot.Snapshot
	Options
	// DryRun prints the plan and the safety checks and writes nothing.
	DryRun bool
	// Force skips the safety checks (not the cluster identity of the
	// Connect workers) and fences another restore's open transaction.
	Force bool
	// StopConnectors stops the connectors in scope through Env.Connect
	// first and waits until they are STOPPED with no tasks and their sink
	// groups are empty; Resume puts those it stopped back once verified.
	StopConnectors, Resume bool
	// Start, with StopConnectors and Resume, also resumes the connectors
	// the restore writes that were STOPPED or PAUSED before it (a sink
	// whose offsets expired: restored but left stopped, they expire again).
	Start bool
	// StopTimeout bounds each wait of StopConnectors and Resume; default 2m.
	StopTimeout time.Duration
	// NotStrimziManaged lets StopConnectors stop connectors on workers
	// that look like Strimzi's, which it refuses otherwise (see
	// refuseStrimzi in strimzi.go): a Strimzi cluster whose operator does
	// not manage the connectors.
	NotStrimziManaged bool
	// Via is ViaKafka (also "") or ViaConnect.
	Via string
	// CreateConnectors creates, through Env.Connect, every connector in
	// scope that it does not have, STOPPED, with the snapshot's config
	// (Kafka 3.7+), before the offsets are written (see create.go);
	// Resume then resumes them once verified. A connector it has with
	// another config is reported, never overwritten.
	CreateConnectors bool
	// Resets looks in Env.Store's journal for the resets of the connectors
	// in scope that the snapshot was captured after, and opens the plan
	// with them (Report.AfterResets): set it for a stored snapshot or a
	// state at a moment, not for a file.
	Resets bool
	// Commands are what the restore commands the restore prints (to go
	// back before a reset, to roll back) carry.
	Commands CommandSettings
	// CreateTopics creates the Connect internal topics (offsets, config,
	// status) missing here before the plan, compacted, with the snapshot's
	// partition counts and ReplicationFactor (0: the broker's default); see
	// createtopics.go.
	CreateTopics      bool
	ReplicationFactor int
	// ConfigRewrites are the sink configs a translation rewrote
	// (Translation.Configs): created so, and a topics.regex it could not
	// rewrite refuses the creation or resume of its connector.
	ConfigRewrites []ConfigRewrite
	// Again is this restore as a command to run again (the snapshot by
	// its ID, never "latest": the undo snapshot is the latest once
	// taken); after a restore that failed part way the advice leads with
	// it, since re-running finishes the restore and rolling back brings
	// back the state it was restoring from. Empty leaves it out.
	Again Commands
	// ToOffsetsTopic, with one source connector in Connectors and Via
	// kafka, writes that connector's source offsets to this offsets topic
	// instead, each key on its murmur2 partition: a topic that holds
	// nothing (created compacted when missing, with the partitions of the
	// one the snapshot read), for a connector recreated with
	// offset.storage.topic set to it (see totopic.go).
	ToOffsetsTopic string
}

// Report is what [Run] did.
type Report struct {
	// Snapshot is the ID of the snapshot restored; DryRun and Forced are
	// the request's DryRun and Force.
	Snapshot       string
	DryRun, Forced bool
	// Outcome is OutcomeRestored, OutcomeNothingToDo, OutcomePlanned,
	// OutcomeRefused or OutcomeFailed.
	Outcome string
	// Plan is the plan checked and applied (made again once the
	// connectors stopped, with StopConnectors).
	Plan *Plan
	// Refusals are the safety checks' reasons to refuse, skipped under
	// Force (with DryRun and StopConnectors, those stopping resolves are
	// left out).
	Refusals []Refusal
	// Fenced are the transactional ids of other restores fenced under Force.
	Fenced []string
	// Undo is the id of the undo snapshot; empty when nothing was written.
	Undo string
	// Applied is what Apply wrote (Via ViaKafka); Connect what the PATCH
	// requests did (Via ViaConnect).
	Applied *Result
	Connect []ConnectResult
	// Verified is the read back after writing.
	Verified *Verification
	// Stopped names the connectors stopped by StopConnectors.
	Stopped []string
	// Created is what CreateConnectors did, or would do, per connector.
	Created []Creation
	// Unowned are the keys no connector owns, compared (IncludeUnowned).
	Unowned []UnownedChange
	// AfterResets are the resets of connectors in scope that the state
	// restored was captured after (see Request.Resets).
	AfterResets []AfterReset
	// OffsetsTopic is what Request.ToOffsetsTopic did to its topic.
	OffsetsTopic *OffsetsTopicReport
	// LeftStopped are the connectors the restore wrote that it leaves
	// STOPPED or PAUSED without having stopped them (nameStillStopped).
	LeftStopped []LeftStopped
}

// LeftStopped is a connector a restore wrote and leaves not running.
type LeftStopped struct {
	Connector string `json:"connector"`
	// State is STOPPED or PAUSED; Why says what it was before the restore
	// and in the state restored; Start is the command that starts it.
	State string `json:"state"`
	Why   string `json:"why"`
	Start string `json:"start"`
}

// refusal marks err as a refusal: it matches ErrRefused and err.
type refusal struct{ err error }

func (r refusal) Error() string   { return r.err.Error() }
func (r refusal) Unwrap() []error { return []error{ErrRefused, r.err} }

// run is one Run: the request, its environment and what it did so far.
type run struct {
	Env
	req    Request
	began  time.Time
	report *Report
	stop   *stopper
	info   *connectrest.ServerInfo
	// intent is what the run recorded in the store about itself;
	// inherited the records of restores that did not finish, whose stopped
	// connectors it takes over (see intent.go, putback.go).
	intent       *store.RestoreIntent
	inherited    []store.RestoreIntent
	repairFailed bool
	// carry is set for a Request.ToOffsetsTopic.
	carry *carry
	// unread are the CheckConfigTopics refusals (sinkconfig.go).
	unread []Refusal
	// id is the run's ID; held its cluster's restore lock (lock.go).
	id   string
	held *store.Held
	// wouldCreate are the topics a dry run's CreateTopics would create;
	// createdTopics those it created.
	wouldCreate, createdTopics []string
	// memOnly are the connectors Connect runs without a config in the
	// config topic (configgone.go).
	memOnly []string
}

// Run runs a whole restore of req.Snapshot: it plans, runs the safety
// checks (with Env.Connect, the Connect REST states too), stops the
// connectors first if asked, stores the undo snapshot, fences under Force,
// applies (into Kafka or through Connect), verifies and resumes. Progress
// goes to Env.Out as it happens. A refusal matches ErrRefused (and, for a
// snapshot of another cluster, ErrOtherCluster); nothing is written then.
// The Report holds what was done so far, also on an error.
func Run(ctx context.Context, env Env, req Request) (rep *Report, err error) {
	if env.Out == nil {
		env.Out = io.Discard
	}
	if env.Warn == nil {
		env.Warn = io.Discard
	}
	if env.Log == nil {
		env.Log = slog.Default()
	}
	if req.StopTimeout <= 0 {
		req.StopTimeout = 2 * time.Minute
	}
	if req.Via == "" {
		req.Via = ViaKafka
	}
	if req.Options.Options.Progress == nil {
		req.Options.Options.Progress = env.Progress
	}
	r := &run{Env: env, req: req, began: time.Now(), report: &Report{DryRun: req.DryRun, Forced: req.Force}}
	if req.Snapshot != nil {
		r.report.Snapshot = req.Snapshot.ID
	}
	defer func() { r.report.Outcome = outcome(r.report.Outcome, err) }()
	if err := r.validate(); err != nil {
		return r.report, err
	}
	if req.ToOffsetsTopic != "" {
		if err := r.carryTo(ctx); err != nil {
			return r.report, err
		}
		defer r.carry.close()
	}
	if req.Via == ViaConnect {
		if err := CheckConnectOffsetsAPI(ctx, env.Connect); err != nil {
			return r.report, err
		}
	}
	if err := r.lockCluster(ctx); err != nil {
		return r.report, err
	}
	defer r.unlock(ctx) // last: after the record is settled and connectors put back
	defer func() { r.settle(ctx, err) }()
	defer func() {
		err = interrupted(ctx, err)
		switch {
		case r.stop == nil || errors.Is(err, ErrNotRestored):
		case r.nothingWritten():
			err = r.stop.putBack(ctx, err)
		default:
			err = r.stop.fail(ctx, err)
		}
		err = r.topicsStay(r.againAfterInterrupt(err))
	}()
	return r.report, r.run(ctx)
}

// outcome is the Report.Outcome of a Run that returns err; set is what
// the run set on the way (nothing to do, planned).
func outcome(set string, err error) string {
	switch {
	case errors.Is(err, ErrRefused):
		return OutcomeRefused
	case errors.Is(err, ErrNotRestored):
		return OutcomePartial
	case err != nil:
		return OutcomeFailed
	case set != "":
		return set
	}
	return OutcomeRestored
}

func (r *run) validate() error {
	switch {
	case r.req.Snapshot == nil:
		return errors.New("restore: no snapshot given")
	case r.req.Via != ViaKafka && r.req.Via != ViaConnect:
		return fmt.Errorf("restore: via %q: want %s or %s", r.req.Via, ViaKafka, ViaConnect)
	case r.req.Start && (!r.req.StopConnectors || !r.req.Resume):
		return errors.New("restore: Start goes with StopConnectors and Resume")
	case r.req.Resume && !r.req.StopConnectors && !r.req.CreateConnectors:
		return errors.New("restore: Resume resumes the connectors StopConnectors stopped or CreateConnectors created: set one of them")
	case (r.req.StopConnectors || r.req.CreateConnectors || r.req.Via == ViaConnect) && r.Connect == nil:
		return errors.New("restore: StopConnectors, CreateConnectors and Via connect need a Connect REST client")
	case r.req.Snapshot.ViaREST() && r.req.IncludeUnowned:
		return fmt.Errorf("restore: snapshot %s was captured through the Connect REST API, which shows no unowned keys: restore it without --include-unowned; nothing was written", r.req.Snapshot.ID)
	case r.req.Snapshot.ViaREST() && r.req.CreateConnectors:
		return fmt.Errorf("restore: snapshot %s was captured through the Connect REST API: --create-connectors needs a restore that reads Kafka; create the connectors STOPPED by hand (POST /connectors with \"initial_state\":\"STOPPED\" and the config show prints), then restore; nothing was written", r.req.Snapshot.ID)
	}
	if err := CheckVia(r.req.Snapshot, r.req.Via); err != nil {
		return err
	}
	return r.validateCloud()
}

// CheckConnectOffsetsAPI refuses a restore through Connect (Via
// ViaConnect) when the workers run a Kafka older than 3.6. Run calls it
// first; a caller may call it earlier.
func CheckConnectOffsetsAPI(ctx context.Context, rc *connectrest.Client) error {
	if _, err := rc.RequireOffsetsAPI(ctx); err != nil {
		if errors.Is(err, connectrest.ErrUnsupported) {
			return refusal{fmt.Errorf("--via connect: %w; nothing was written", err)}
		}
		return fmt.Errorf("--via connect: %w; nothing was written", err)
	}
	return nil
}

func (r *run) run(ctx context.Context) error {
	snap := r.req.Snapshot
	if err := r.recoverFirst(ctx); err != nil {
		return err
	}
	if err := r.createTopics(ctx); err != nil {
		return err
	}
	r.Progress.SetStage(capture.PhasePlan)
	plan, err := r.plan(ctx, "")
	if err != nil {
		return r.createTopicsAdvice(err)
	}
	r.report.Plan = plan
	r.report.AfterResets = r.afterResets(ctx, plan)
	if r.Connect != nil && (r.req.StopConnectors || r.req.CreateConnectors || r.req.Via == ViaConnect) {
		if err := r.sameCluster(ctx, plan.ClusterID); err != nil {
			return err
		}
	}
	var creations []Creation
	if r.req.CreateConnectors {
		if creations, err = r.planCreations(ctx, plan); err != nil {
			return err
		}
	}
	if r.unread = r.unreadRefusals(plan, creations); len(r.unread) > 0 && !r.req.DryRun && !r.req.Force {
		// Before anything is stopped or created.
		r.report.Refusals = r.unread
		return refusal{&RefusedError{Refusals: r.unread, Scoped: len(r.req.Connectors) > 0, ConnectURL: true}}
	}
	if r.req.StopConnectors {
		r.Progress.SetStage(capture.PhaseStop)
		r.stop = &stopper{rc: r.Connect, cl: r.Client, configTopic: plan.opts.ConfigTopic, out: r.Out, log: r.Log, timeout: r.req.StopTimeout, resume: r.req.Resume, start: r.req.Start, dryRun: r.req.DryRun}
		if plan, err = r.stopFirst(ctx, plan); err != nil {
			return err
		}
		r.stop.inherit(plan, snap, r.inherited)
		if r.req.Resume && !r.req.DryRun {
			r.stop.resumeAsRestored(plan, snap)
		}
	}
	r.report.Plan = plan
	if err := r.check(ctx, plan); err != nil {
		return err
	}
	var reqs []ConnectRequest
	if r.req.Via == ViaConnect {
		if reqs, err = r.connectRequests(plan); err != nil {
			return err
		}
	}
	var unowned []UnownedChange
	if r.req.IncludeUnowned {
		if unowned, err = r.planUnowned(ctx, plan); err != nil {
			return err
		}
		r.printUnowned(unowned)
	}
	counts := plan.Counts()
	if counts.Writes() == 0 && toCreate(creations) == 0 && unownedWrites(unowned) == 0 {
		if diffs := plan.Differences(); len(diffs) > 0 {
			return fmt.Errorf("%w: nothing can be written, but %s differ:\n  - %s", ErrVerifyFailed, plural(len(diffs), "offset", "offsets"), strings.Join(diffs, "\n  - "))
		}
		what := "snapshot " + snap.ID
		if snap.Reason == journal.ReasonAt {
			what = "the state at " + snap.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		}
		if err := plan.NotRestoredError(r.req.DryRun, false); err != nil {
			// The same in a dry run: what can be written here matches.
			fmt.Fprintf(r.Out, "nothing written: what can be written here already matches %s\n", what)
			return r.finish(ctx, plan, err)
		}
		fmt.Fprintf(r.Out, "nothing to do: the live state of %s already matches %s\n", plural(len(plan.Connectors), "connector", "connectors"), what)
		r.Log.Info("restore: nothing to do", "snapshot_id", snap.ID, "connectors", len(plan.Connectors), "duration", r.since())
		r.report.Outcome = OutcomeNothingToDo
		return r.stop.finish(ctx)
	}
	if r.req.DryRun {
		r.report.Outcome = OutcomePlanned
		fmt.Fprintln(r.Out, "dry run: nothing written")
		r.printWouldCreate() // createtopics.go
		r.Log.Info("restore planned (dry run)", "snapshot_id", snap.ID, "connectors", len(plan.Connectors),
			"source_writes", counts.SourceWrites, "tombstones", counts.Tombstones, "sink_commits", counts.SinkCommits, "sink_deletions", counts.SinkDeletions,
			"duration", r.since())
		// The real run would end with the same error and exit code.
		return plan.NotRestoredError(true, false)
	}
	if err := r.record(ctx, plan, store.IntentStarted, nil); err != nil {
		return fmt.Errorf("record the restore in the store: %w; nothing was written", err)
	}
	if err := r.create(ctx, creations); err != nil {
		return err
	}
	if counts.Writes() == 0 && unownedWrites(unowned) == 0 {
		fmt.Fprintf(r.Out, "nothing to write: the live offsets of %s already match snapshot %s\n", plural(len(plan.Connectors), "connector", "connectors"), snap.ID)
		r.report.Outcome = OutcomeNothingToDo
		return r.stop.finish(ctx)
	}
	if r.carry != nil && r.carry.missing {
		if plan, err = r.carry.create(ctx, r); err != nil {
			return err
		}
		r.report.Plan = plan
	}
	r.Progress.SetStage(capture.PhaseUndo)
	undo, err := r.Store.Snapshots().Put(ctx, plan.Live)
	if err != nil {
		return fmt.Errorf("store undo snapshot: %w; nothing was written", err)
	}
	r.report.Undo = undo.ID
	fmt.Fprintf(r.Out, "undo snapshot: %s\n", undo.ID)
	if err := r.record(ctx, plan, store.IntentWriting, nil); err != nil {
		return fmt.Errorf("record the restore in the store: %w; nothing was written", err)
	}
	atPoint("undo")
	r.Progress.SetStage(capture.PhaseApply)
	switch {
	case counts.Writes() == 0:
	case r.req.Via == ViaConnect:
		err = r.applyConnect(ctx, reqs)
	default:
		err = r.apply(ctx, plan)
	}
	if err != nil {
		return err
	}
	if err := r.applyUnowned(ctx, unowned); err != nil {
		return fmt.Errorf("%w; the connectors' offsets were written and verified before; the undo snapshot %s does not hold the unowned keys", err, undo.ID)
	}
	if r.stop != nil && r.req.Resume {
		r.Progress.SetStage(capture.PhaseResume)
	}
	return r.finish(ctx, plan, plan.NotRestoredError(false, true))
}

// finish resumes what StopConnectors stopped, except the connectors with
// offsets not restored here (notRestored, from Plan.NotRestoredError, is
// returned then).
func (r *run) finish(ctx context.Context, plan *Plan, notRestored error) error {
	if r.stop != nil && notRestored != nil {
		r.stop.hold = map[string]bool{}
		for _, cp := range plan.Connectors {
			if cp.Sink != nil && cp.Sink.has(Skipped) {
				r.stop.hold[cp.Name] = true
			}
		}
	}
	if err := r.stop.finish(ctx); err != nil {
		return err
	}
	r.nameStillStopped(plan)
	return r.withAgain(notRestored)
}

// nameStillStopped ends a restore that wrote offsets by naming each
// connector it wrote that is STOPPED or PAUSED and that nothing above
// named (what the run stopped and resumed, or left STOPPED, is named by
// the stopper; what restores that did not finish stopped, by settle):
// why it is not running, and the command that starts it. Offsets written
// into a connector that stays stopped do nothing until it starts, and a
// sink's may expire.
func (r *run) nameStillStopped(plan *Plan) {
	if r.req.DryRun || plan == nil {
		return
	}
	var snapConns map[string]*snapshot.Connector // made for the first one
	for i := range plan.Connectors {
		cp := &plan.Connectors[i]
		state := cp.Live.TargetState
		if (state != snapshot.StateStopped && state != snapshot.StatePaused) || !cp.Live.HasConfig || !cp.Writes() || r.stoppedBefore(cp.Name) {
			continue
		}
		if snapConns == nil {
			snapConns = make(map[string]*snapshot.Connector, len(r.req.Snapshot.Connectors))
			for j := range r.req.Snapshot.Connectors {
				snapConns[r.req.Snapshot.Connectors[j].Name] = &r.req.Snapshot.Connectors[j]
			}
		}
		why := state + " before the restore"
		target := snapshot.StateStarted
		if c := snapConns[cp.Name]; c != nil && c.HasConfig {
			why += ", " + c.TargetState + " in the state restored"
			if c.TargetState == snapshot.StatePaused {
				target = snapshot.StatePaused
			}
		}
		if target == state {
			continue // paused, as in the state restored: its offsets are read once resumed, as before
		}
		r.report.LeftStopped = append(r.report.LeftStopped, LeftStopped{Connector: cp.Name, State: state, Why: why, Start: startCommand(r.Connect, cp.Name, target)})
	}
	printLeftStopped(r.Out, r.report.LeftStopped)
}

// stoppedBefore reports whether this run or a restore that did not
// finish stopped the connector: they name it themselves.
func (r *run) stoppedBefore(name string) bool {
	if r.stop != nil && slices.ContainsFunc(r.stop.stopped, func(sc stoppedConnector) bool { return sc.name == name }) {
		return true
	}
	return slices.ContainsFunc(r.inherited, func(in store.RestoreIntent) bool {
		return slices.ContainsFunc(in.Stopped, func(st store.IntentStopped) bool { return st.Name == name })
	})
}

// printLeftStopped says which connectors are left stopped: one alone on
// a line with its command; several of the same state and reason under
// one line, a command each on its own line.
func printLeftStopped(w io.Writer, left []LeftStopped) {
	for i := 0; i < len(left); {
		j := i + 1
		for j < len(left) && left[j].State == left[i].State && left[j].Why == left[i].Why {
			j++
		}
		l := left[i]
		if j-i == 1 {
			fmt.Fprintln(w, wrapLines(fmt.Sprintf("left %s: connector %s (%s); start it with: %s", l.State, l.Connector, l.Why, l.Start), l.Start))
		} else {
			fmt.Fprintln(w, wrapLines(fmt.Sprintf("left %s: %d connectors (%s); start each with:", l.State, j-i, l.Why)))
			for _, x := range left[i:j] {
				fmt.Fprintln(w, "    "+x.Start)
			}
		}
		i = j
	}
}

func (r *run) since() time.Duration { return time.Since(r.began).Round(time.Millisecond) }

// plan makes the plan of the request; when says when, for the error.
func (r *run) plan(ctx context.Context, when string) (*Plan, error) {
	snap := r.req.Snapshot
	if snap.ViaREST() {
		return r.planREST(ctx, when)
	}
	if r.carry != nil && r.carry.missing {
		return r.carry.plan(ctx, r)
	}
	plan, err := NewPlan(ctx, r.Client, snap, r.req.Options)
	if err != nil {
		if errors.Is(err, ErrOtherCluster) && when == "" {
			return nil, refusal{fmt.Errorf("%w; nothing was written", err)}
		}
		r.withBrokers(err)
		r.withShow(err)
		return nil, fmt.Errorf("plan restore of snapshot %s%s: %w; nothing was written", snap.ID, when, kafkaconf.DescribeError(err))
	}
	return plan, nil
}

// serverInfo asks the Connect workers once per restore who they are.
func (r *run) serverInfo(ctx context.Context) (connectrest.ServerInfo, error) {
	if r.info == nil {
		info, err := r.Connect.ServerInfo(ctx)
		if err != nil {
			return info, err
		}
		r.info = &info
	}
	return *r.info, nil
}

// sameCluster refuses when the Connect workers keep their topics in
// another Kafka cluster than the one the brokers given belong to: stopping
// or altering through them would act on another cluster's connectors.
// Force does not skip it.
func (r *run) sameCluster(ctx context.Context, clusterID string) error {
	info, err := r.serverInfo(ctx)
	if err != nil {
		return fmt.Errorf("read the Connect REST API: %w; nothing was written", err)
	}
	if restClusterDiffers(r.Connect, info.KafkaClusterID, clusterID) {
		return refusal{fmt.Errorf("the Connect REST API at %s belongs to Kafka cluster %q, the brokers given are cluster %q: point --connect-url at the workers of this cluster; nothing was written, no connector was stopped", strings.Join(r.Connect.URLs(), ", "), info.KafkaClusterID, clusterID)}
	}
	return nil
}

// check runs every safety check (the plan's and, with Env.Connect, the
// REST view's) and prints the plan. Under Force it warns, and fences
// another restore's open transaction; otherwise a refusal is returned,
// which a dry run lists on Env.Out after the plan.
func (r *run) check(ctx context.Context, plan *Plan) error {
	snap := r.req.Snapshot
	var restRefused []Refusal
	if r.Connect != nil {
		var err error
		if restRefused, err = r.restRefusals(ctx, plan); err != nil {
			return fmt.Errorf("check restore of snapshot %s: %w; nothing was written", snap.ID, err)
		}
	}
	restRefused = append(restRefused, r.unread...)
	checkErr := plan.Check(ctx, r.Client)
	var refused *RefusedError
	if checkErr != nil && !errors.As(checkErr, &refused) {
		return fmt.Errorf("check restore of snapshot %s: %w; nothing was written", snap.ID, checkErr)
	}
	printAfterResets(r.Out, r.report.AfterResets)
	r.noteDeleted(plan, r.report.Created) // deletednote.go
	plan.settleExpiry(r.resumes(plan), r.resumeHint(plan))
	if err := plan.Print(r.Out); err != nil {
		return err
	}
	if len(r.memOnly) > 0 {
		fmt.Fprintln(r.Out, wrapLines("WARNING: "+r.configGoneAdvice(r.memOnly), r.configGoneCommands(r.memOnly)...))
	}
	if len(restRefused) > 0 {
		if refused == nil {
			refused = &RefusedError{}
		}
		refused.Refusals = append(refused.Refusals, restRefused...)
	}
	if refused != nil && r.stop != nil && r.req.DryRun {
		// Stopping first would resolve these.
		refused.Refusals = slices.DeleteFunc(refused.Refusals, func(x Refusal) bool { return r.stop.resolved(plan, x) })
		if len(refused.Refusals) == 0 {
			refused = nil
		}
	}
	if refused != nil {
		r.report.Refusals = refused.Refusals
		refused.Scoped, refused.ConnectURL, refused.Stopping = len(r.req.Connectors) > 0, r.Connect != nil, r.req.StopConnectors
		refused.Layout = r.req.Options.Layout != nil
	}
	if r.req.Force {
		return r.force(ctx, plan, refused)
	}
	if refused == nil {
		return nil
	}
	if r.req.DryRun {
		var b strings.Builder
		fmt.Fprintf(&b, "dry run: nothing written; the restore would be refused (%s):", plural(len(refused.Refusals), "problem", "problems"))
		refused.list(&b)
		fmt.Fprintln(r.Out, wrapLines(b.String()))
		return refusal{fmt.Errorf("dry run: %w, nothing was written (%s, listed with the plan)", ErrRefused, plural(len(refused.Refusals), "problem", "problems"))}
	}
	return refusal{refused}
}

// force warns that the safety checks are skipped and, unless a dry run,
// fences the open transactions of other restores the checks found, on
// topics written to or not.
func (r *run) force(ctx context.Context, plan *Plan, refused *RefusedError) error {
	fmt.Fprintln(r.Warn, "WARNING: --force: the safety checks are SKIPPED (connector running, sink group members, open transactions, offsets topic cleanup.policy, another restore running).")
	fmt.Fprintln(r.Warn, "WARNING: a running connector overwrites restored offsets, and the broker rejects commits into a group that has members.")
	if refused != nil {
		fmt.Fprintln(r.Warn, "WARNING: without --force this restore would be refused:")
		for _, x := range refused.Refusals {
			fmt.Fprintf(r.Warn, "WARNING:   - %s\n", x)
		}
	}
	r.Log.Warn("safety checks skipped with --force", "snapshot_id", r.req.Snapshot.ID, "refusals", len(r.report.Refusals))
	if r.req.DryRun || len(plan.OpenRestores) == 0 {
		return nil
	}
	// As documented: Force fences the other restore's open transaction at
	// once, even when this one has nothing to write to its topic (else the
	// next restore is refused until the broker's timeout aborts it).
	ids, err := FenceOpenRestores(ctx, r.Client)
	r.report.Fenced = ids
	for _, id := range ids {
		fmt.Fprintf(r.Warn, "WARNING: --force: fenced the open transaction %q of another restore; nothing it wrote in that transaction is kept\n", id)
	}
	if err != nil {
		return fmt.Errorf("fence another restore's transaction: %w; nothing was written", err)
	}
	return nil
}

// restRefusals sets each connector's REST state on the plan and returns
// the refusals the REST view adds to the safety checks: workers of another
// Kafka cluster and, for a connector the plan writes, a config whose REST
// status is not STOPPED with no tasks (or that Connect does not know), or
// no config while Connect reports it anyway.
func (r *run) restRefusals(ctx context.Context, plan *Plan) ([]Refusal, error) {
	info, err := r.serverInfo(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the Connect REST API: %w", err)
	}
	states, err := r.Connect.States(ctx)
	if err != nil {
		return nil, err
	}
	if !plan.rest && !r.Connect.Cloud() && r.req.Options.Layout == nil {
		r.memOnly = memoryOnly(plan, func(n string) bool { _, ok := states[n]; return ok })
	}
	var out []Refusal
	add := func(connector, format string, args ...any) {
		out = append(out, Refusal{Connector: connector, Check: CheckConnectState, Reason: fmt.Sprintf(format, args...)})
	}
	if restClusterDiffers(r.Connect, info.KafkaClusterID, plan.ClusterID) {
		add("", "the Connect REST API at %s belongs to Kafka cluster %q, the brokers given are cluster %q: point --connect-url at the workers of this cluster", strings.Join(r.Connect.URLs(), ", "), info.KafkaClusterID, plan.ClusterID)
	}
	for i := range plan.Connectors {
		cp := &plan.Connectors[i]
		st, known := states[cp.Name]
		cp.REST = connectrest.StateOf(states, cp.Name)
		isListed := false
		if cp.Live.HasConfig && !known {
			// Connect leaves a connector it has no status for out of its
			// list; it may only have been created a moment ago.
			if isListed, err = r.Connect.Known(ctx, cp.Name); err != nil {
				return nil, fmt.Errorf("read connector %q from the Connect REST API: %w", cp.Name, err)
			}
			if isListed {
				cp.REST = "no status yet"
			}
		}
		if !cp.Writes() {
			continue // left alone
		}
		if r.Connect.Cloud() && known {
			continue // Cloud pauses and resumes the connector itself
		}
		switch {
		case cp.Live.HasConfig && !known && isListed && cp.Live.Stopped():
			// Just created STOPPED: the worker writes its first status a
			// moment later, and a connector that never had a task commit
			// runs no task anywhere.
		case cp.Live.HasConfig && !known && isListed:
			add(cp.Name, "Connect has its config but no status for it yet (just created, or being assigned to a worker): try again in a moment")
		case cp.Live.HasConfig && !known:
			add(cp.Name, "has a config in the config topic, but the Connect REST API does not know it: check that --connect-url and --config-topic name the same Connect cluster")
		case cp.Live.HasConfig && !st.Stopped():
			name := url.PathEscape(cp.Name)
			add(cp.Name, "its REST status is %s: stop it with PUT /connectors/%s/stop and wait until GET /connectors/%s/status shows STOPPED with no tasks (or restore with --stop-connectors)", st, name, name)
		case !cp.Live.HasConfig && known && !st.Stopped():
			add(cp.Name, "has no config in the config topic, but the Connect REST API reports it %s: check --config-topic", st)
		}
	}
	return out, nil
}

// stopFirst stops the connectors of the plan through the Connect REST API
// (or, with DryRun, says it would) and returns the plan made again once
// they are stopped: they may have written until then. Refusals that
// stopping cannot resolve refuse before anything is stopped.
func (r *run) stopFirst(ctx context.Context, plan *Plan) (*Plan, error) {
	todo := r.stop.toStop(plan)
	if err := r.refuseStrimzi(ctx, todo); err != nil {
		return nil, err
	}
	if r.req.DryRun {
		if len(todo) > 0 {
			r.stop.wouldStop(todo)
		}
		return plan, nil
	}
	if !r.req.Force {
		if err := r.blockingRefusals(ctx, plan); err != nil {
			return nil, err
		}
		if r.req.Via == ViaConnect {
			if cp := plan.ConnectRequests(); len(cp.Unsendable) > 0 {
				return nil, refusal{fmt.Errorf("%w (nothing was stopped either)", unsendable(cp))}
			}
		}
	}
	// Recorded before the first stop: a store it cannot write refuses
	// here, with nothing stopped, and a later run resumes what this one
	// stopped if it does not finish.
	if err := r.record(ctx, plan, store.IntentStarted, r.stop.toStop(plan)); err != nil {
		return nil, fmt.Errorf("record the restore in the store: %w; nothing was written, nothing was stopped", err)
	}
	if err := r.stop.stop(ctx, plan); err != nil {
		return nil, err
	}
	r.report.Stopped = r.stop.names()
	return r.plan(ctx, " once the connectors stopped")
}

// blockingRefusals refuses, before anything is stopped, for the reasons
// stopping the connectors would not resolve.
func (r *run) blockingRefusals(ctx context.Context, plan *Plan) error {
	snap := r.req.Snapshot
	var blocking []Refusal
	rest, err := r.restRefusals(ctx, plan)
	if err != nil {
		return fmt.Errorf("check restore of snapshot %s: %w; nothing was written, nothing was stopped", snap.ID, err)
	}
	for _, x := range rest {
		if !r.stop.resolved(plan, x) {
			blocking = append(blocking, x)
		}
	}
	var refused *RefusedError
	if err := plan.Check(ctx, r.Client); errors.As(err, &refused) {
		for _, x := range refused.Refusals {
			if x.Check == CheckCleanupPolicy || x.Check == CheckConcurrentRestore {
				blocking = append(blocking, x)
			}
		}
	} else if err != nil {
		return fmt.Errorf("check restore of snapshot %s: %w; nothing was written, nothing was stopped", snap.ID, err)
	}
	if len(blocking) > 0 {
		return refusal{fmt.Errorf("%w (nothing was stopped either)", &RefusedError{Refusals: blocking, Scoped: len(r.req.Connectors) > 0, ConnectURL: true, Stopping: true})}
	}
	return nil
}

// connectRequests builds the PATCH requests of Via ViaConnect and prints
// them with what Connect writes otherwise than the plan says. Changes
// Connect cannot make at all refuse the restore, unless Force.
func (r *run) connectRequests(plan *Plan) ([]ConnectRequest, error) {
	cp := plan.ConnectRequests()
	for _, w := range cp.Warnings {
		fmt.Fprintf(r.Out, "warning: --via connect: %s\n", w)
	}
	if len(cp.Unsendable) > 0 {
		if !r.req.Force {
			return nil, refusal{unsendable(cp)}
		}
		fmt.Fprintln(r.Warn, "WARNING: --force: these changes of the plan cannot be made through Connect and are left undone:")
		for _, u := range cp.Unsendable {
			fmt.Fprintf(r.Warn, "WARNING:   - %s\n", u)
		}
	}
	for _, x := range cp.Requests {
		fmt.Fprintln(r.Out, requestLine(r.Connect, x))
	}
	return cp.Requests, nil
}

// unsendable is the refusal of a restore through Connect that would leave
// changes undone.
func unsendable(cp *ConnectPlan) error {
	rs := make([]Refusal, len(cp.Unsendable))
	for i, u := range cp.Unsendable {
		rs[i] = Refusal{Check: CheckConnectState, Reason: "--via connect cannot make this change: " + u + "; restore --via kafka (the default) to write exact bytes"}
	}
	return &RefusedError{Refusals: rs}
}

// applyConnect sends the requests and verifies them with GET.
func (r *run) applyConnect(ctx context.Context, reqs []ConnectRequest) error {
	undo := r.report.Undo
	results, err := ApplyConnect(ctx, r.Connect, reqs)
	r.report.Connect = results
	for _, x := range results {
		if line := progressLine(x); line != "" {
			fmt.Fprintln(r.Out, line)
		}
		fmt.Fprintf(r.Out, "applied through Connect: connector %s, %s: %s\n", x.Connector, plural(x.Entries, "partition", "partitions"), x.Message)
		if x.FrameworkOnly {
			fmt.Fprintf(r.Out, "note: connector %s: Connect altered only the offsets it manages itself; if the connector keeps offsets in its own system too, change them there by hand\n", x.Connector)
		}
	}
	if note := pendingNote(err, undo); note != "" {
		return fmt.Errorf("%w; %s", err, note)
	}
	if err != nil {
		if len(results) == 0 {
			return fmt.Errorf("%w; nothing of this restore was written, so there is nothing to undo (its undo snapshot %s is not needed)", err, undo)
		}
		return r.rolledBack(err, connectWritten(results))
	}
	r.Progress.SetStage(capture.PhaseVerify)
	v, err := VerifyConnect(ctx, r.Connect, reqs)
	r.report.Verified = v
	if err != nil {
		return r.rolledBack(err, connectWritten(results))
	}
	fmt.Fprintf(r.Out, "verified through Connect: %s the restored offsets (GET /connectors/NAME/offsets)\n", plural(v.Connectors, "connector shows", "connectors show"))
	r.Log.Info("restore done through Connect", "snapshot_id", r.req.Snapshot.ID, "undo_snapshot_id", undo, "connectors", len(reqs),
		"duration", r.since())
	return nil
}

// apply writes the plan into Kafka and verifies it.
func (r *run) apply(ctx context.Context, plan *Plan) error {
	undo := r.report.Undo
	plan.notify = func(msg string) { fmt.Fprintln(r.Out, msg) }
	plan.restoreID = undo
	res, err := Apply(ctx, r.Client, plan)
	r.report.Applied = res
	if errors.Is(err, ErrNotReadable) {
		// Committed, all of it: another producer's transaction keeps it
		// from readers. Rolling back would not help (the error says what
		// does).
		return err
	}
	if err != nil {
		written := res.Written()
		switch {
		case errors.Is(err, ErrFenced) && len(written) == 0:
			// Regression: this said "to roll back: offsetkeeper restore
			// <undo>" although nothing was written, and doing so would
			// have undone the other restore.
			return fmt.Errorf("%w; another restore took over; nothing of this restore was written; do not restore its undo snapshot %s: it would undo the other restore", err, undo)
		case errors.Is(err, ErrFenced):
			// Part of this restore was committed, then another restore took
			// over: it writes after this one's undo snapshot was taken, so
			// rolling back to it would undo the other restore too.
			return fmt.Errorf("%w; another restore took over; do not restore its undo snapshot %s: the other restore wrote after it was taken, and rolling back to it would undo that too", err, undo)
		}
		if note := r.repairAborted(ctx, plan, res.Topics); note != "" {
			err = fmt.Errorf("%w; %s", err, note)
		}
		if len(written) == 0 {
			return fmt.Errorf("%w; nothing of this restore was written, so there is nothing to undo (its undo snapshot %s is not needed)", kafkaconf.DescribeError(err), undo)
		}
		// Apply's error names what was written already.
		return r.rolledBack(kafkaconf.DescribeError(err), nil)
	}
	fmt.Fprintf(r.Out, "applied: %s and %s in %s, %s and %s in %s (%s)\n",
		plural(res.SourceWrites, "source write", "source writes"), plural(res.Tombstones, "tombstone", "tombstones"), plural(len(res.Topics), "topic", "topics"),
		plural(res.SinkCommits, "sink commit", "sink commits"), plural(res.SinkDeletions, "sink deletion", "sink deletions"), plural(len(res.Groups), "group", "groups"),
		res.Duration.Round(time.Millisecond))
	r.Progress.SetStage(capture.PhaseVerify)
	v, err := Verify(ctx, r.Client, plan)
	r.report.Verified = v
	if err != nil {
		if others := otherWriters(ctx, r.Client, res, undo); len(others) > 0 {
			return fmt.Errorf("%w; %s", err, r.otherWriterAdvice(others))
		}
		return r.rolledBack(err, res.Written())
	}
	except := ""
	if len(plan.NotRestored()) > 0 {
		except = ", but for the offsets not restored here"
	}
	fmt.Fprintf(r.Out, "verified: %s the snapshot%s\n", plural(v.Connectors, "connector matches", "connectors match"), except)
	if r.carry != nil {
		r.carry.done(r)
	}
	r.Log.Info("restore done", "snapshot_id", r.req.Snapshot.ID, "undo_snapshot_id", undo, "connectors", v.Connectors,
		"records", res.SourceWrites+res.Tombstones, "sink_offsets", res.SinkCommits+res.SinkDeletions,
		"duration", r.since())
	return nil
}

// rollBack is the advice after a restore that committed written and then
// failed: what it wrote (unless written is nil: the error names it), and
// the restore of its undo snapshot.
func (r *run) rollBack(written []string) string {
	if r.carry != nil {
		return r.carry.rollBack(r.report.Undo)
	}
	cmds := r.req.Commands.Snapshot(r.report.Undo)
	what := ""
	if len(written) > 0 {
		what = "this restore wrote " + strings.Join(written, ", ") + "; "
	}
	if again := r.req.Again; again.Run != "" {
		// Rolling back restores the state this restore was to repair (the
		// bad reset); finishing it is what the operator came for.
		what += fmt.Sprintf("the rest was not written: once the cause above is fixed, run the same restore again, which leaves what is already restored alone: %s (check first: %s); only to undo this restore instead, ", again.Run, again.DryRun)
	}
	return fmt.Sprintf("%sto roll back what it wrote: %s (check first: %s)", what, cmds.Run, cmds.DryRun)
}

// connectWritten names the connectors whose offsets Connect altered.
func connectWritten(results []ConnectResult) []string {
	out := make([]string, len(results))
	for i, x := range results {
		out[i] = "connector " + x.Connector + " (through Connect)"
	}
	return out
}

func planNames(cps []ConnectorPlan) []string {
	names := make([]string, len(cps))
	for i, cp := range cps {
		names[i] = cp.Name
	}
	return names
}
