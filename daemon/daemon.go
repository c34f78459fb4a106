package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon/web"
	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Defaults for Config.
const (
	// DefaultListen is the HTTP address the CLI listens on.
	DefaultListen = ":9464"
	// DefaultRunTimeout bounds one run.
	DefaultRunTimeout = 5 * time.Minute
	// DefaultShutdownTimeout is how long a running snapshot may go on
	// after shutdown begins.
	DefaultShutdownTimeout = 10 * time.Second
)

// abortWait bounds how long Run waits for an aborted run, and for leaving
// the group, before it returns regardless.
const abortWait = 5 * time.Second

// Config configures a Daemon. Zero values take the defaults named.
type Config struct {
	// Schedule is a cron spec: five fields (minute, hour, day of month,
	// month, day of week) or a descriptor (@hourly, @daily, @every 15m).
	// Times are UTC unless the spec starts with CRON_TZ=<zone>. Required.
	Schedule string
	// RunTimeout bounds one run: capture, store, retention. Default
	// DefaultRunTimeout.
	RunTimeout time.Duration
	// SkipImmediately skips the snapshot otherwise taken as soon as the
	// daemon first leads; the first is then taken at the first tick.
	SkipImmediately bool
	// Policy is applied after each successful snapshot. The zero Policy
	// keeps everything (and deletes nothing).
	Policy snapshot.Policy
	// Listen is the HTTP address for health, readiness, metrics and the
	// snapshot list; "" serves no HTTP. The CLI default is DefaultListen.
	Listen string
	// WebConfig is a Prometheus web config file (exporter-toolkit format:
	// tls_server_config, basic_auth_users, http_server_config) applied to
	// everything Listen serves; "" serves plain HTTP without auth. Check it
	// with ValidateWebConfig before Run.
	WebConfig string
	// ShutdownTimeout is how long a snapshot running when Run's ctx is
	// canceled may go on before it is aborted. Default
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Leader configures leader election among replicas.
	Leader LeaderConfig
	// ProgressEvery, with Daemon.Progress, logs the progress of a run
	// still going at this interval (see DefaultProgressEvery); 0 logs none.
	ProgressEvery time.Duration
	// Journal configures the continuous journal (see journal.go); it runs
	// when Interval is positive and Daemon.Tail is set.
	Journal JournalConfig
	// DrillSchedule is the cron spec of the restore drills (drill.go),
	// run with Daemon.Drill; "" or DrillsOff runs none.
	DrillSchedule string
	// VerifySchedule is the cron spec of the checks of the whole store
	// (storecheck.go), run with Daemon.VerifyStore; "" or VerifyOff runs
	// none.
	VerifySchedule string
	// Commands are what the restore commands the daemon prints (its log's
	// "reset seen" lines, the page) carry: the settings of its command
	// line, and whether a Connect URL is known.
	Commands restore.CommandSettings
}

// Daemon takes snapshots on a schedule, applies retention after each, and
// serves health and metrics over HTTP. Set the exported fields, then call
// Run once. Handler may be called before or during Run.
type Daemon struct {
	Config Config
	// Store receives the snapshots and is pruned by Config.Policy. Required.
	Store *store.Store
	// Snapshot takes one snapshot; the daemon stores it. Usually the
	// Capture (or CaptureStreamed) method of one long-lived
	// snapshot.Capturer: it is never called concurrently, and a run stores
	// its snapshot before the next run starts. A snapshot without Reason
	// is stored as scheduled. Required.
	Snapshot func(ctx context.Context) (*snapshot.Snapshot, error)
	// Kafka, when set, is pinged by /readyz, and the page reads log ends
	// and StatusTopic over it.
	Kafka *kgo.Client
	// StatusTopic is Connect's status topic the page reads the workers'
	// reported states from; default snapshot.DefaultStatusTopic.
	StatusTopic string
	// Statuses, when set, reads the workers' reported states for the page
	// in place of StatusTopic (a layout's several status topics).
	Statuses func(ctx context.Context) (*capture.Statuses, error)
	// Logger receives the daemon's logs; nil discards them.
	Logger *slog.Logger
	// Progress, when set, is the one the Snapshot func counts into (the
	// Capturer's snapshot.Options.Progress); the daemon resets it at each
	// run, logs it every Config.ProgressEvery and sets the store phase.
	Progress *capture.Progress
	// Build labels offsetkeeper_build_info.
	Build BuildInfo
	// Tail reads the cluster for the journal; nil turns the journal off.
	Tail *Tailer
	// Drill, when set, drills the newest full snapshot on
	// Config.DrillSchedule (drill.go).
	Drill  func(ctx context.Context) (*drill.Report, error)
	drillM *drillMetrics
	// VerifyStore, when set, re-reads every stored snapshot and journal
	// epoch on Config.VerifySchedule (storecheck.go).
	VerifyStore func(ctx context.Context) (StoreCheck, error)
	checkM      *storeCheckMetrics
	// oneAtATime holds a drill and a store check apart (leading).
	oneAtATime sync.Mutex
	// lastCheck is the last store check ran to its end, for the page
	// (under mu).
	lastCheck *web.StoreCheck
	// Standby, when set, keeps a standby cluster in step while this
	// daemon leads (standby.go).
	Standby *Standby
	sb      standbyState
	sbm     *standbyMetrics
	// own is the daemon's cluster ID (cluster.go).
	own ownCluster

	once    sync.Once
	m       *metrics
	ops     *opsMetrics
	live    liveness
	lead    *leadership
	running atomic.Bool
	// jr is the journal, nil when off; wantSnapshot is how it asks the
	// schedule loop for a snapshot to start an epoch from.
	jr           *journalWriter
	wantSnapshot chan struct{}

	mu      sync.Mutex // guards the fields below
	status  runStatus
	addr    string
	storeOK probe

	// prev is the sink state of the last snapshot stored, for the
	// moved-backwards gauge; read and written by runs only, which never
	// overlap. prevEpoch is the leadership term it was read in.
	prev      *sinkState
	prevEpoch uint64

	// ret is what retention remembers between runs (retention.go).
	ret retention
}

// runStatus is what /readyz says about runs.
type runStatus struct {
	lastResult  string // success or failure; skipped runs leave it be
	lastErr     string
	lastSuccess time.Time
	lastID      string
}

// ParseSchedule parses a cron spec as Config.Schedule describes: in UTC
// unless it starts with CRON_TZ=<zone> (or TZ=<zone>). It rejects a spec
// that never fires.
func ParseSchedule(spec string) (cron.Schedule, error) {
	p := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	full := strings.TrimSpace(spec)
	if !strings.HasPrefix(full, "CRON_TZ=") && !strings.HasPrefix(full, "TZ=") {
		// cron reads a spec without a zone in the machine's local zone.
		full = "CRON_TZ=UTC " + full
	}
	s, err := p.Parse(full)
	if err != nil {
		return nil, fmt.Errorf("parse schedule %q: %w", spec, err)
	}
	if s.Next(time.Now().UTC()).IsZero() {
		return nil, fmt.Errorf("parse schedule %q: it never fires", spec)
	}
	return s, nil
}

func (d *Daemon) init() {
	d.once.Do(func() {
		d.m = newMetrics()
		if d.Drill != nil && d.Config.DrillSchedule != "" && d.Config.DrillSchedule != DrillsOff {
			d.drillM = newDrillMetrics(d.m.reg)
		}
		if d.VerifyStore != nil && d.Config.VerifySchedule != "" && d.Config.VerifySchedule != VerifyOff {
			d.checkM = newStoreCheckMetrics(d.m.reg)
		}
		d.ops = newOpsMetrics(d.m.reg, d.Build, func(ctx context.Context) ([]snapshot.Info, error) {
			if d.Store == nil {
				return nil, nil
			}
			return d.Store.Snapshots().List(ctx)
		})
		d.wantSnapshot = make(chan struct{}, 1)
		if d.Standby != nil {
			d.sbm = newStandbyMetrics(d.m.reg, d.standbyLag)
		}
		if d.Config.Journal.Interval > 0 && d.Tail != nil {
			d.jr = newJournal(d)
			d.m.journalLagFn = d.jr.lag
		}
		d.lead = newLeadership(func(leading bool) {
			if leading {
				d.m.leader.Set(1)
				d.log().Info("leading: this daemon takes the snapshots")
			} else {
				d.m.leader.Set(0)
				d.log().Info("not leading: standing by")
			}
		})
	})
}

func (d *Daemon) log() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

// Addr returns the address the HTTP server listens on, or "" before it
// listens (or when Config.Listen is empty).
func (d *Daemon) Addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr
}

// Run takes snapshots on the schedule until ctx is canceled, then shuts
// down: it stops scheduling, lets a running snapshot go on for up to
// ShutdownTimeout and aborts it after that (an aborted snapshot leaves no
// object behind), leaves the leader group and stops the HTTP server. It
// returns nil after a shutdown, and an error only when it cannot start
// (a bad schedule, a busy address, no leader topic). A failed or panicking
// run is logged and counted, never returned: the next tick runs again.
func (d *Daemon) Run(ctx context.Context) error {
	d.init()
	log := d.log()
	if d.Store == nil || d.Snapshot == nil {
		return errors.New("run daemon: Store and Snapshot are required")
	}
	sched, err := ParseSchedule(d.Config.Schedule)
	if err != nil {
		return err
	}
	if d.drillM != nil {
		if _, err := ParseSchedule(d.Config.DrillSchedule); err != nil {
			return fmt.Errorf("drill schedule: %w", err)
		}
	}
	if d.checkM != nil {
		if _, err := ParseSchedule(d.Config.VerifySchedule); err != nil {
			return fmt.Errorf("verify schedule: %w", err)
		}
	}

	if d.Config.Listen != "" {
		ln, err := net.Listen("tcp", d.Config.Listen)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", d.Config.Listen, err)
		}
		srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
		d.mu.Lock()
		d.addr = ln.Addr().String()
		d.mu.Unlock()
		served := make(chan struct{})
		go func() {
			defer close(served)
			if err := serveHTTP(srv, ln, d.Config.WebConfig, log); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("serve http", "addr", ln.Addr().String(), "error", err)
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				srv.Close()
			}
			<-served
		}()
		log.Info("serving http", "addr", ln.Addr().String())
	}

	var elector *kgo.Client
	if d.Config.Leader.Enabled {
		elector, err = elect(ctx, d.Config.Leader, d.lead, log)
		if err != nil {
			if ctx.Err() != nil {
				return nil // told to stop while joining
			}
			return err
		}
	} else {
		d.lead.begin()
	}

	log.Info("daemon started", "schedule", d.Config.Schedule, "policy", d.Config.Policy.String(),
		"skip_immediately", d.Config.SkipImmediately, "leader_election", d.Config.Leader.Enabled)

	// Runs outlive ctx by up to ShutdownTimeout, then abortRuns ends them.
	runsCtx, abortRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer abortRuns()
	var runs sync.WaitGroup

	jctx, stopJournal := context.WithCancel(ctx)
	defer stopJournal()
	var journalDone sync.WaitGroup
	if d.jr != nil {
		journalDone.Add(1)
		go func() { defer journalDone.Done(); d.jr.run(jctx) }()
		log.Info("journal started", "interval", d.Config.Journal.Interval)
	}
	if d.drillM != nil {
		journalDone.Add(1)
		go func() { defer journalDone.Done(); d.drills(jctx) }()
	}
	if d.checkM != nil {
		journalDone.Add(1)
		go func() { defer journalDone.Done(); d.storeChecks(jctx) }()
	}
	if d.Standby != nil && d.Standby.Syncer != nil {
		journalDone.Add(1)
		go func() { defer journalDone.Done(); d.standbyLoop(jctx) }()
		log.Info("standby started", "standby", d.Standby.Name)
	}

	next := sched.Next(time.Now())
	d.live.scheduled(next)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	ledBefore := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-d.lead.gained:
			if !ledBefore {
				ledBefore = true
				if !d.Config.SkipImmediately {
					d.trigger(runsCtx, &runs)
				}
			}
		case <-d.wantSnapshot:
			d.trigger(runsCtx, &runs)
		case <-timer.C:
			d.trigger(runsCtx, &runs)
			// Next is strictly after its argument, so a tick never fires
			// twice even if the wall clock lags the timer.
			now := time.Now()
			if now.Before(next) {
				now = next
			}
			next = sched.Next(now)
			d.live.scheduled(next)
			timer.Reset(time.Until(next))
		}
	}

	d.live.scheduled(time.Time{})
	log.Info("shutting down", "shutdown_timeout", d.shutdownTimeout())
	stopJournal()
	journalDone.Wait()
	if !waitGroup(&runs, d.shutdownTimeout()) {
		log.Warn("aborting the running snapshot", "shutdown_timeout", d.shutdownTimeout())
		abortRuns()
		if !waitGroup(&runs, abortWait) {
			log.Error("the running snapshot did not stop after abort; exiting anyway")
		}
	}
	if elector != nil {
		closed := make(chan struct{})
		go func() { elector.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(abortWait):
			log.Warn("leaving the leader group timed out; the other replicas take over after the session timeout")
		}
	}
	d.lead.end(0) // runs are done or abandoned by now
	log.Info("daemon stopped")
	return nil
}

// waitGroup waits for wg up to d and reports whether it finished.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

func (d *Daemon) runTimeout() time.Duration {
	if d.Config.RunTimeout <= 0 {
		return DefaultRunTimeout
	}
	return d.Config.RunTimeout
}

func (d *Daemon) shutdownTimeout() time.Duration {
	if d.Config.ShutdownTimeout <= 0 {
		return DefaultShutdownTimeout
	}
	return d.Config.ShutdownTimeout
}

// trigger starts a run if this daemon leads and no run is going; a tick
// that finds a run going is counted as skipped.
func (d *Daemon) trigger(base context.Context, runs *sync.WaitGroup) {
	lctx, epoch, done, ok := d.lead.start()
	if !ok {
		return
	}
	if !d.running.CompareAndSwap(false, true) {
		done()
		d.m.runs.WithLabelValues(ResultSkipped).Inc()
		d.log().Warn("snapshot run skipped: the previous run is still going", "result", ResultSkipped)
		return
	}
	runs.Add(1)
	go func() {
		defer runs.Done()
		defer d.running.Store(false)
		defer done()
		d.live.running(time.Now())
		defer d.live.running(time.Time{})
		d.run(base, lctx, epoch)
	}()
}

// report is the outcome of one run, for the summary line.
type report struct {
	result   string
	err      error
	info     snapshot.Info
	snap     *snapshot.Snapshot
	kept     int
	removed  int
	backward int
	// sources counts the source offsets the journal saw reset since the
	// previous run (nil without a journal): tombstoned and rewound.
	sources *sourceResets
	stack   []byte
}

// run performs one run and records it: metrics, status and one summary
// log line. ctx bounds it; it also ends when the leadership term lctx ends.
func (d *Daemon) run(base, lctx context.Context, epoch uint64) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(base, d.runTimeout())
	defer cancel()
	stop := context.AfterFunc(lctx, cancel)
	defer stop()

	rep := d.runOnce(ctx, epoch)
	dur := time.Since(start)
	// Between runs the daemon holds what the next run reuses, no more.
	memlimit.Release()

	d.m.duration.Observe(dur.Seconds())
	d.m.runs.WithLabelValues(rep.result).Inc()
	d.mu.Lock()
	switch rep.result {
	case ResultSuccess:
		d.status.lastResult, d.status.lastErr = ResultSuccess, ""
	case ResultFailure:
		d.status.lastResult, d.status.lastErr = ResultFailure, rep.err.Error()
	}
	if rep.info.ID != "" {
		d.status.lastSuccess, d.status.lastID = time.Now(), rep.info.ID
	}
	d.mu.Unlock()

	attrs := []slog.Attr{
		slog.String("result", rep.result),
		slog.Duration("duration", dur),
	}
	if rep.info.ID != "" {
		attrs = append(attrs,
			slog.String("snapshot_id", rep.info.ID),
			slog.Int("connectors", rep.info.Connectors),
			slog.Int("source_keys", rep.info.SourceKeys),
			slog.Int("sink_groups", rep.info.SinkGroups),
			slog.Int64("size", rep.info.Size),
			slog.Int("warnings", len(rep.snap.Warnings)),
			slog.Int("moved_backwards", rep.backward+rep.sources.total()),
			slog.Int("sink_moved_backwards", rep.backward),
			slog.Int("kept", rep.kept),
			slog.Int("removed", rep.removed),
		)
		if rep.sources != nil {
			attrs = append(attrs, slog.Int("source_tombstoned", rep.sources.tombstoned), slog.Int("source_rewound", rep.sources.rewound))
		}
	}
	level := slog.LevelInfo
	switch rep.result {
	case ResultFailure:
		level = slog.LevelError
		attrs = append(attrs, slog.Any("error", rep.err))
		if rep.stack != nil {
			attrs = append(attrs, slog.String("stack", string(rep.stack)))
		}
	case ResultSkipped:
		level = slog.LevelWarn
		attrs = append(attrs, slog.Any("error", rep.err))
	}
	d.log().LogAttrs(context.Background(), level, "snapshot run", attrs...)
}

// errNoLongerLeading ends a run whose leadership term ended.
var errNoLongerLeading = errors.New("leadership lost; nothing stored")

// runOnce takes, stores and prunes one snapshot. It never panics: a panic
// in the Snapshot func (or anywhere below) becomes a failure.
func (d *Daemon) runOnce(ctx context.Context, epoch uint64) (rep report) {
	defer func() {
		if r := recover(); r != nil {
			rep.result = ResultFailure
			rep.err = fmt.Errorf("snapshot run panicked: %v", r)
			rep.stack = debug.Stack()
		}
	}()
	// interrupted classifies a run cut short by the end of the leadership
	// term or by shutdown as skipped, not failed: no backup went wrong.
	interrupted := func(err error) report {
		if !d.lead.holds(epoch) {
			return report{result: ResultSkipped, err: errNoLongerLeading}
		}
		return report{result: ResultSkipped, err: fmt.Errorf("aborted by shutdown; nothing stored: %w", err)}
	}
	aborted := func() bool {
		return !d.lead.holds(epoch) || (ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded))
	}

	defer d.watchProgress()()
	d.recoverInterrupted(ctx)
	snap, err := d.Snapshot(ctx)
	if err != nil {
		if aborted() {
			return interrupted(err)
		}
		return report{result: ResultFailure, err: fmt.Errorf("take snapshot: %w", d.topicGone(ctx, err))}
	}
	if snap == nil {
		return report{result: ResultFailure, err: errors.New("take snapshot: no snapshot and no error")}
	}
	// A Snapshot func that returned after its ctx ended may hold a partial
	// read: never store it.
	if err := ctx.Err(); err != nil {
		if aborted() {
			return interrupted(err)
		}
		return report{result: ResultFailure, err: fmt.Errorf("take snapshot: %w", err)}
	}
	if snap.Reason == "" {
		snap.Reason = snapshot.ReasonScheduled
	}
	d.stampEmptySince(snap)
	cur := sinkStateOf(snap)
	prev := d.previous(ctx, epoch)
	if !d.lead.holds(epoch) {
		return interrupted(nil)
	}

	d.Progress.SetPhase(capture.PhaseStore)
	info, err := d.Store.Snapshots().Put(ctx, snap)
	if err != nil {
		if aborted() {
			return interrupted(err)
		}
		return report{result: ResultFailure, err: fmt.Errorf("store snapshot: %w", err)}
	}
	rep = report{result: ResultSuccess, info: info, snap: snap}
	d.m.lastSuccess.Set(float64(time.Now().UnixNano()) / 1e9)
	d.m.observeSnapshot(snap, info.Size)
	d.ops.warnings.Set(float64(len(snap.Warnings)))
	d.ops.unread.Set(float64(len(snap.Unread)))
	for _, u := range snap.Unread {
		slog.Warn("snapshot left a sink group out", "snapshot_id", info.ID, "group", u.Group, "connector", u.Connector, "reason", u.Reason)
	}
	for _, w := range snap.Warnings {
		if capture.IsPolicyWarning(w) {
			// Kafka deletes offsets while it lasts: said at every run.
			slog.Warn("offsets topic is not compacted", "snapshot_id", info.ID, "why", w)
		}
	}
	d.warnRecreated(ctx, snap, info)
	counts := movedBackwards(prev, cur)
	d.ownRestores(ctx, counts, prev, cur)
	for _, n := range counts {
		rep.backward += n
	}
	d.m.observeBackwards(counts)
	if d.jr != nil {
		rep.sources = sourceResetsOf(d.jr.takeResets())
		d.m.observeSourceResets(snap, rep.sources)
	}
	d.prev, d.prevEpoch = cur, epoch
	if d.jr != nil && len(snap.Scope) == 0 {
		d.jr.stored(info)
	}

	if d.Config.Policy.Empty() {
		return rep
	}
	if !d.lead.holds(epoch) {
		rep.result, rep.err = ResultSkipped, errors.New("leadership lost before retention; snapshot stored, nothing removed")
		return rep
	}
	rep.kept, rep.removed, err = d.retain(ctx, info.ID)
	if err != nil {
		rep.result, rep.err = ResultFailure, fmt.Errorf("apply retention after storing snapshot %s: %w", info.ID, err)
		return rep
	}
	if err := d.retainJournal(ctx); err != nil {
		rep.result, rep.err = ResultFailure, fmt.Errorf("apply journal retention after storing snapshot %s: %w", info.ID, err)
	}
	return rep
}

// topicGone explains a worker topic that does not exist although the
// store holds snapshots of it: deleted, or these brokers are another
// cluster (see snapshot.Gone). Any other err is returned as it is.
func (d *Daemon) topicGone(ctx context.Context, err error) error {
	if !errors.Is(err, capture.ErrTopicMissing) {
		return err
	}
	infos, lerr := d.Store.Snapshots().List(ctx)
	if lerr != nil {
		return err
	}
	latest := capture.LatestFull(infos)
	return capture.Gone(err, latest, store.HistoryTopics(ctx, d.Store, latest), "", d.goneAdvice(ctx, latest)) // topicgone_journal.go
}

// previous returns the sink state to compare a new snapshot with: the one
// this daemon stored last in this leadership term, or else the latest in
// the store (another replica may have stored snapshots meanwhile). It
// returns nil, logging why, when there is none or it cannot be read; the
// moved-backwards gauge then reads 0.
func (d *Daemon) previous(ctx context.Context, epoch uint64) *sinkState {
	if d.prev != nil && d.prevEpoch == epoch {
		return d.prev
	}
	snap, _, err := d.Store.Snapshots().GetWith(ctx, "latest", nil)
	if err != nil {
		if !errors.Is(err, snapshot.ErrNotFound) {
			d.log().Warn("read the latest snapshot to compare sink offsets with; this run reports none moved backwards", "error", err)
		}
		return nil
	}
	return sinkStateOf(snap)
}
