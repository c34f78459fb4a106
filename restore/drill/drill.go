// Package drill proves a backup restorable: a restore drill restores a
// state (a stored snapshot, the state at a moment, or a fresh capture)
// into a scratch Kafka cluster through the same restore.Run the restore
// command uses, reads everything back, compares the state with what
// Connect has, and measures RTO and RPO.
//
// The two things to know are [Run], one drill, and [Report], what it
// found, which is stored beside the snapshots (store.Drills.Put) as a bare
// JSON document or, signed with an ed25519 key, as a DSSE envelope
// ([Sign], [Verify]).
//
// Guarantees:
//   - A drill never passes by skipping: a scratch cluster that does not
//     start or a Connect REST API that does not answer is ErrCannotRun,
//     and no report is made. A check skipped by choice (no Connect URL) is
//     in the report as skipped, with the reason.
//   - The scratch cluster is the drill's own: the embedded one is stopped
//     after, and what the drill made in a --scratch-brokers cluster (its
//     topics and groups) is deleted after.
package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// ErrCannotRun: the drill could not run (the scratch cluster does not
// start or answer, the Connect REST API does not answer, the state cannot
// be restored into Kafka at all); no report was made. The command exits 2.
var ErrCannotRun = errors.New("drill cannot run")

// Env is what a drill works with.
type Env struct {
	// Store is read for the RPO (journal, newest full snapshot); the
	// caller stores the report in it.
	Store *store.Store
	// Live, when set and Connect is not, is the live cluster whose config
	// and offsets topics the completeness check compares with (a capture
	// now); nil skips that check unless Connect is set.
	Live *kgo.Client
	// Connect, when set, is the Connect REST API the completeness check
	// compares with (GET /connectors/{name}/offsets).
	Connect *connectrest.Client
	// Log gets one summary line per drill; nil is slog.Default.
	Log *slog.Logger
}

// Request is one drill.
type Request struct {
	// State is what to drill; nil with ReadError set when it could not be
	// read (a damaged snapshot object), which fails the drill.
	State     *snapshot.Snapshot
	ReadError error
	// Named says what State is (kind, snapshot ID and checksum, moment).
	Named State
	// Options name the worker topics, as for a restore.
	Options capture.Options
	// ScratchBrokers, when set, is a scratch cluster to restore into
	// instead of the embedded one: it must not have the state's topics.
	ScratchBrokers []string
	// SkipComplete skips the completeness check by choice (Reason says
	// why, for the report).
	SkipComplete       string
	ToolVersion        string
	Now                func() time.Time
	restoreOutForTests io.Writer
	// afterRestoreForTests, when set, runs between the restore into the
	// scratch cluster and the read-back (a test plants faults there).
	afterRestoreForTests func(ctx context.Context, scratch *kgo.Client)
}

// Run runs one drill and returns its report (Result Passed or Failed).
// A drill that cannot run is ErrCannotRun and no report.
func Run(ctx context.Context, env Env, req Request) (*Report, error) {
	if env.Log == nil {
		env.Log = slog.Default()
	}
	if req.Now == nil {
		req.Now = time.Now
	}
	began := req.Now()
	rep := &Report{Format: Format, Version: Version, ID: snapshot.NewID(began), StartedAt: began.UTC(), ToolVersion: req.ToolVersion, State: req.Named}
	if req.State != nil {
		rep.ClusterID = req.State.ClusterID
		rep.Counts = countsOf(req.State)
		if req.State.ViaREST() {
			return nil, fmt.Errorf("%w: %s was captured through the Connect REST API, which a restore writes through Connect only; drill a snapshot read from the Kafka topics", ErrCannotRun, describeState(req.Named))
		}
	}
	restorable, rto, err := checkRestorable(ctx, req)
	if err != nil {
		return nil, err
	}
	rep.Scratch = restorable.scratch
	rep.RTO = rto
	rep.Checks = append(rep.Checks, restorable.Check)
	complete, err := checkComplete(ctx, env, req)
	if err != nil {
		return nil, err
	}
	rep.Checks = append(rep.Checks, complete)
	rep.Checks = append(rep.Checks, checkRecoverable(ctx, env, req, restorable.Check, &rep.RPO, began))
	rep.Result = Passed
	if len(rep.Failed()) > 0 {
		rep.Result = Failed
	}
	rep.Duration = Millis(req.Now().Sub(began))
	env.Log.Info("drill", "result", rep.Result, "state", describeState(req.Named), "failed_checks", rep.FailedChecks(),
		"rto", time.Duration(rep.RTO.Restore).Round(time.Millisecond), "duration", time.Duration(rep.Duration).Round(time.Millisecond))
	return rep, nil
}

// restorable is the outcome of the Restorable check.
type restorable struct {
	Check
	scratch string
	ran     bool
}

// checkRestorable restores the state into the scratch cluster through
// restore.Run and reads it back.
func checkRestorable(ctx context.Context, req Request) (out restorable, rto RTO, _ error) {
	began := time.Now()
	out = restorable{Check: Check{Name: CheckRestorable}}
	var f findings
	defer func() { out.Duration = Millis(time.Since(began)) }()
	if req.State == nil {
		f.fail(Failure{Cause: CauseUnreadable, Partition: -1, Detail: fmt.Sprint(req.ReadError)})
		f.finish(&out.Check)
		out.Summary = "the state could not be read: nothing to restore"
		return out, rto, nil
	}
	state, opts := req.State, req.Options
	opts.Defaults()
	topics := scratchTopics(state, opts)
	sc, err := startScratch(ctx, req.ScratchBrokers, topics)
	if err != nil {
		return out, rto, err
	}
	defer sc.close(context.WithoutCancel(ctx))
	out.scratch = sc.name()
	parts := map[string]int32{}
	var offsetsTopics []string
	for _, t := range topics {
		parts[t.name] = t.partitions
	}
	for _, t := range state.Topics {
		if t.Role == snapshot.RoleOffsets {
			offsetsTopics = append(offsetsTopics, t.Name)
		}
	}
	tab := state.SourceTable()
	for i := range int32(tab.Len()) {
		if t := tab.Topic(i); !slices.Contains(offsetsTopics, t) {
			offsetsTopics = append(offsetsTopics, t)
		}
	}
	if len(offsetsTopics) == 0 {
		offsetsTopics = opts.OffsetsTopics
	}
	rep, took, err := restoreInto(ctx, sc, state, opts, offsetsTopics, req.restoreOutForTests)
	rto = RTO{Restore: Millis(took), Note: "restore.Run into the scratch cluster: plan, write and read-back verification; not starting the scratch cluster, nor stopping and resuming connectors"}
	if rep != nil && rep.Applied != nil {
		rto.Records, rto.Groups = rep.Applied.SourceWrites+rep.Applied.Tombstones, len(rep.Applied.Groups)
	}
	if sc.cluster != nil {
		rto.Note += "; the embedded scratch cluster is in process (no network, no replication): a real cluster takes longer"
	}
	if err != nil {
		f.fail(Failure{Cause: CauseRestoreFailed, Partition: -1, Detail: err.Error()})
	}
	for _, g := range state.SinkGroups {
		sc.groups = append(sc.groups, g.Group)
	}
	if req.afterRestoreForTests != nil {
		req.afterRestoreForTests(ctx, sc.cl)
	}
	out.ran = err == nil
	want, ignore := checkKeys(tab, parts, &f)
	if err := compareScratch(ctx, sc, tab, want, ignore, offsetsTopics, &f); err != nil {
		return out, rto, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	if err := compareSinks(ctx, kadm.NewClient(sc.cl), state, &f); err != nil {
		return out, rto, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	f.finish(&out.Check)
	out.Summary = fmt.Sprintf("restored into the %s scratch cluster through restore.Run and read back: %s, %s compared byte for byte",
		out.scratch, english.Count(len(want), "source key", "source keys"), english.Count(countSink(state), "sink offset", "sink offsets"))
	return out, rto, nil
}

// restoreInto restores state into the scratch cluster with restore.Run,
// as the restore command does (--allow-other-cluster --include-unowned);
// its undo snapshot goes to a store in memory.
func restoreInto(ctx context.Context, sc *scratch, state *snapshot.Snapshot, opts capture.Options, offsetsTopics []string, out io.Writer) (*restore.Report, time.Duration, error) {
	undo := store.NewStore(memblob.OpenBucket(nil))
	defer undo.Close()
	o := opts
	o.OffsetsTopics = offsetsTopics
	o.Layout, o.ConfigTopics, o.StatusTopics, o.Progress = nil, nil, nil, nil
	if out == nil {
		out = io.Discard
	}
	env := restore.Env{Client: sc.cl, Store: undo, Out: out, Warn: out, Log: slog.New(slog.DiscardHandler)}
	// The scratch cluster's sink topics are new, so their topic IDs always
	// differ from the state's: the sink guard (recreated topics) does not
	// apply to a restore into a cluster made for it, whatever its ID.
	st := *state
	st.SinkTopics = nil
	req := restore.Request{Snapshot: &st, Options: restore.Options{Options: o, AllowOtherCluster: true, IncludeUnowned: true}}
	if sc.cluster != nil {
		// The embedded scratch cluster keeps each batch as it was sent,
		// in this process: compressed, its copy of the state is a
		// fraction of the state. What is read back is the same bytes.
		req.Compression = scratchCompression
	}
	began := time.Now()
	rep, err := restore.Run(ctx, env, req)
	return rep, time.Since(began), err
}

// checkComplete compares the state with Connect: its REST API, or else
// the live cluster's config and offsets topics read now.
func checkComplete(ctx context.Context, env Env, req Request) (c Check, _ error) {
	began := time.Now()
	c = Check{Name: CheckComplete}
	defer func() { c.Duration = Millis(time.Since(began)) }()
	switch {
	case req.State == nil:
		c.Result, c.Summary = Skipped, "the state could not be read: nothing to compare"
		return c, nil
	case req.SkipComplete != "":
		c.Result, c.Summary = Skipped, req.SkipComplete
		return c, nil
	case env.Connect == nil && env.Live == nil:
		c.Result, c.Summary = Skipped, "no Connect URL (--connect-url) and no live cluster to compare with"
		return c, nil
	}
	var view *snapshot.Snapshot
	var err error
	what := ""
	if env.Connect != nil {
		view, err = capture.CaptureREST(ctx, env.Connect, capture.RESTOptions{})
		if err != nil {
			return c, fmt.Errorf("%w: read the connectors and their offsets through the Connect REST API (%s): %v", ErrCannotRun, strings.Join(env.Connect.URLs(), ", "), err)
		}
		what = "Connect's GET /connectors/{name}/offsets"
	} else {
		o := req.Options
		o.Reason, o.Incremental, o.Connectors = snapshot.ReasonManual, false, nil
		view, err = capture.Capture(ctx, env.Live, o)
		if err != nil {
			return c, fmt.Errorf("%w: read the live cluster's config and offsets topics: %v", ErrCannotRun, err)
		}
		what = "the live cluster's config and offsets topics"
	}
	parts := map[string]int32{}
	for _, t := range req.State.Topics {
		parts[t.Name] = int32(len(t.Partitions))
	}
	var viewParts map[string]int32
	if !view.ViaREST() {
		viewParts = map[string]int32{}
		for _, t := range view.Topics {
			viewParts[t.Name] = int32(len(t.Partitions))
		}
	}
	var f findings
	n := compareWithConnect(offsetsIn(req.State, parts), offsetsIn(view, viewParts), &f)
	f.finish(&c)
	c.Summary = fmt.Sprintf("%s compared with %s: same partitions; stopped and paused, same offsets; running, none behind", english.Count(n, "connector", "connectors"), what)
	return c, nil
}

// checkRecoverable fills rpo and says what the RTO and RPO are. It fails
// only when the restore did not complete (no RTO to give).
func checkRecoverable(ctx context.Context, env Env, req Request, restorable Check, rpo *RPO, now time.Time) Check {
	c := Check{Name: CheckRecoverable, Result: Passed}
	if env.Store != nil {
		if infos, err := env.Store.Snapshots().List(ctx); err == nil {
			if bad := req.Named.SnapshotID; req.State == nil && bad != "" {
				// The newest full snapshot that this drill found
				// unreadable is no recovery point.
				infos = slices.DeleteFunc(slices.Clone(infos), func(in snapshot.Info) bool { return in.ID == bad })
				c.Notes = append(c.Notes, "RPO counts from the newest full snapshot before "+bad+", which cannot be read")
			}
			if full := capture.LatestFull(infos); full != nil {
				rpo.NewestFull, rpo.NewestFullAge = full.ID, millisPtr(now.Sub(full.CreatedAt))
			}
		} else {
			c.Notes = append(c.Notes, "list snapshots: "+err.Error())
		}
		if cov, err := env.Store.Journal().Coverage(ctx); err == nil {
			var to time.Time
			for _, e := range cov {
				if e.Broken == "" && e.To.After(to) {
					to = e.To
				}
			}
			if !to.IsZero() {
				rpo.JournalLag = millisPtr(max(now.Sub(to), 0))
			}
		} else {
			c.Notes = append(c.Notes, "read the journal: "+err.Error())
		}
	}
	switch {
	case rpo.JournalLag != nil:
		rpo.Note = "a restore --at now would miss the last " + rpo.JournalLag.String() + " (the journal's lag)"
	case rpo.NewestFullAge != nil:
		rpo.Note = "no journal: a restore of the newest full snapshot would miss the last " + rpo.NewestFullAge.String()
	default:
		rpo.Note = "the store holds no full snapshot and no journal"
	}
	if restorable.Result != Passed {
		c.Result, c.Summary = Failed, "no recovery time: the restore into the scratch cluster did not succeed"
		c.Failures = []Failure{{Cause: CauseRestoreFailed, Partition: -1, Detail: "the Restorable check failed; see its failures"}}
		return c
	}
	c.Summary = "RTO and RPO measured"
	return c
}

func countsOf(s *snapshot.Snapshot) Counts {
	c := Counts{Connectors: len(s.Connectors), SinkGroups: len(s.SinkGroups), SinkOffsets: countSink(s)}
	tab := s.SourceTable()
	for i := range int32(tab.Len()) {
		switch {
		case tab.Connector(i) == "":
			c.Unowned++
		case tab.Value(i) == nil:
			c.Tombstones++
		default:
			c.SourceKeys++
		}
	}
	return c
}

func countSink(s *snapshot.Snapshot) int {
	n := 0
	for _, g := range s.SinkGroups {
		n += len(g.Offsets)
	}
	return n
}

// describeState names a state in one phrase.
func describeState(s State) string {
	switch s.Kind {
	case "snapshot":
		return "snapshot " + s.SnapshotID
	case "moment":
		return "the state at " + snapshot.FmtTime(s.At)
	default:
		return "a capture of the live cluster at " + snapshot.FmtTime(s.At)
	}
}
