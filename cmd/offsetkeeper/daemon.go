package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// daemonCommand is the daemon entry of the command table (main.go).
var daemonCommand = commandInfo{
	name:    "daemon",
	summary: "take snapshots on a schedule, prune them, serve /healthz, /livez, /readyz, /metrics, /api/snapshots and the page at / (see docs/daemon.md, docs/web.md)",
	usage: `[--schedule SPEC] [--keep-... ] [--listen ADDR] [--capture-via kafka|connect [--connect-url URL...]] [flags]

--capture-via connect (OFFSETKEEPER_CAPTURE_VIA=connect) takes the scheduled
snapshots through the Connect REST API alone, as snapshot --via connect
does: no Kafka client is made, so there is no journal (it says so once at
start) and no leader election: run one replica. See docs/rest-only.md.`,
	new: func(e *env) command { return &daemonCmd{env: e} },
}

type daemonCmd struct {
	*env
	schedule        string
	skipImmediately bool
	runTimeout      time.Duration
	shutdownTimeout time.Duration
	progressEvery   time.Duration
	listen          string
	webConfig       string
	keep            policyFlags

	leaderElection bool
	leaderGroup    string
	leaderTopic    string
	leaderSession  time.Duration

	journalInterval   time.Duration
	journalKeepWithin withinFlag

	// captureVia is kafka or connect (see restDaemon): a setting, with
	// its environment twin, unlike snapshot's per-run --via.
	captureVia string
	drill      daemonDrillFlags // daemon_drill.go
	standby    standbyFlags     // standby.go
}

// journalOffREST is what the daemon logs once at start when it captures
// through the Connect REST API.
const journalOffREST = "journal off: capturing through the Connect REST API (--capture-via connect) gives no history between snapshots; restore --at needs a daemon that reads the offsets topics"

func (c *daemonCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.schedule, "schedule", "@hourly", "when to snapshot: a 5-field cron spec (\"*/15 * * * *\") or a descriptor (@hourly, @daily, \"@every 15m\"); UTC unless it starts with CRON_TZ=<zone>")
	fs.BoolVar(&c.skipImmediately, "skip-immediately", false, "do not snapshot at start; wait for the first tick")
	fs.DurationVar(&c.runTimeout, "run-timeout", daemon.DefaultRunTimeout, "give up one run (capture, store, retention) after this long; nothing is stored then")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", daemon.DefaultShutdownTimeout, "on SIGTERM or SIGINT, let a running snapshot finish for this long, then abort it (nothing is stored)")
	fs.DurationVar(&c.progressEvery, "progress-every", daemon.DefaultProgressEvery, "log the phase and the records read so far of a run still going at this interval; 0 logs none")
	fs.StringVar(&c.listen, "listen", daemon.DefaultListen, "HTTP address for /, /healthz, /livez, /readyz, /metrics and /api/snapshots; empty to serve none")
	fs.StringVar(&c.webConfig, "web-config", "", "Prometheus web config file (exporter-toolkit format: tls_server_config, basic_auth_users with bcrypt hashes) for TLS and basic auth of everything --listen serves; see docs/web.md")
	c.keep.register(fs)
	fs.BoolVar(&c.leaderElection, "leader-election", true, "elect one leader among replicas through a Kafka consumer group; only the leader snapshots")
	fs.StringVar(&c.leaderGroup, "leader-group", "", "consumer group of the leader election (default offsetkeeper-leader-<hash of --store>)")
	fs.StringVar(&c.leaderTopic, "leader-topic", daemon.DefaultLeaderTopic, "one-partition topic the election group subscribes to; created if missing")
	fs.DurationVar(&c.journalInterval, "journal-interval", daemon.DefaultJournalInterval, "how often the journal writes what changed (source records, sink offsets, configs) as one segment, for restore --at; 0 turns the journal off (see docs/journal.md)")
	c.journalKeepWithin = withinFlag(daemon.DefaultJournalKeepWithin)
	fs.Var(&c.journalKeepWithin, "journal-keep-within", "keep raw journal segments (restore --at to any moment) this long once a merged level holds them; after that a moment restores as of the minute boundary before it (an hour later, as of the hour's): 36h, 7d, 2w; 0 keeps them with their epoch")
	fs.StringVar(&c.captureVia, "capture-via", "kafka", "take the scheduled snapshots from kafka (the offsets topics and sink groups, exact bytes; the journal runs) or connect (through the Connect REST API alone, Kafka 3.5+, needs --connect-url: no journal, no leader election; see docs/rest-only.md)")
	c.drill.register(fs)
	c.standby.register(fs, true)
	c.g.connect.register(fs)
	fs.DurationVar(&c.leaderSession, "leader-session-timeout", daemon.DefaultSessionTimeout, "how long a leader that stopped heartbeating keeps the lead before another replica takes over")
}

func (c *daemonCmd) Run(ctx context.Context, args []string) error {
	policy, err := c.validate(args)
	if err != nil {
		return err
	}
	creds, err := c.g.fromCredentials(os.Getenv("CREDENTIALS_DIRECTORY"))
	if err != nil {
		return err
	}
	for _, name := range creds {
		c.log.Info("using a systemd credential", "flag", "--"+name)
	}
	// The daemon keeps its views between runs: its heap is mostly
	// pointer-free and its memory is the pod's (see internal/memlimit).
	memlimit.Start()
	if c.captureVia == "connect" {
		if c.standby.given() {
			return usagef("--standby-brokers: the standby is kept in step from the journal, which --capture-via connect does not keep")
		}
		return c.restDaemon(ctx, policy)
	}
	kcfg, opts, err := c.g.kafkaSettings()
	if err != nil {
		return err
	}
	kopts, err := kcfg.Opts()
	if err != nil {
		return fmt.Errorf("configure Kafka client: %w", err)
	}

	store, err := c.g.createStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		return fmt.Errorf("create Kafka client: %w", err)
	}
	defer cl.Close()

	opts.Reason = snapshot.ReasonScheduled
	opts.Incremental = true
	opts.Progress = new(capture.Progress)
	// One Capturer for the daemon's lifetime: each run reads only what is
	// new since the last.
	capt := capture.NewCapturer(cl, opts)
	d := &daemon.Daemon{
		Config: c.config(policy, kopts),
		Tail:   journalTailer(cl, opts),
		Store:  store,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			// Streamed: stored before the next run captures again.
			snap, err := capt.CaptureStreamed(ctx)
			if err != nil {
				return nil, kafkaconf.DescribeError(err)
			}
			return snap, nil
		},
		Kafka:       cl,
		StatusTopic: opts.StatusTopic,
		Statuses: func(ctx context.Context) (*capture.Statuses, error) {
			return capture.ReadWorkerStatuses(ctx, cl, opts)
		},
		Logger:   c.log,
		Progress: opts.Progress,
	}
	if err := c.attachStoreChecks(d); err != nil {
		return err
	}
	if err := c.attachDrills(d, store); err != nil {
		return err
	}
	closeStandby, err := c.attachStandby(ctx, d, restore.Options{Options: opts})
	if err != nil {
		return err
	}
	defer closeStandby()
	return c.runDaemon(ctx, d)
}

// runDaemon runs d until ctx ends.
func (c *daemonCmd) runDaemon(ctx context.Context, d *daemon.Daemon) error {
	ver, commit, gov := buildVersion()
	d.Build = daemon.BuildInfo{Version: ver, Revision: commit, GoVersion: gov}
	err := d.Run(ctx)
	if errors.Is(err, daemon.ErrLeaderElection) {
		return fmt.Errorf("%w; a single replica can run without election: --leader-election=false", kafkaconf.DescribeError(err))
	}
	return err
}

// restDaemon is daemon --capture-via connect: the scheduled snapshots are
// taken through the Connect REST API alone (capture.CaptureREST), and no
// Kafka client is made. So there is no journal (it tails the offsets
// topics), which it says once at start, and no leader election (a Kafka
// consumer group): run one replica.
func (c *daemonCmd) restDaemon(ctx context.Context, policy snapshot.Policy) error {
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	store, err := c.g.createStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	c.log.Warn(journalOffREST, "connect_url", rc.URLs()[0])
	cfg := c.config(policy, nil)
	cfg.Leader.Enabled = false
	cfg.Journal = daemon.JournalConfig{}
	d := &daemon.Daemon{
		Config: cfg,
		Store:  store,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			return capture.CaptureREST(ctx, rc, capture.RESTOptions{ProgramVersion: programVersion(), Reason: snapshot.ReasonScheduled})
		},
		Logger: c.log,
	}
	return c.runDaemon(ctx, d)
}

// validate checks the daemon's arguments and flags and returns its
// retention policy.
func (c *daemonCmd) validate(args []string) (snapshot.Policy, error) {
	if err := noArgs(args); err != nil {
		return snapshot.Policy{}, err
	}
	if _, err := daemon.ParseSchedule(c.schedule); err != nil {
		return snapshot.Policy{}, usagef("--schedule: %v", err)
	}
	if err := daemon.ValidateWebConfig(c.webConfig); err != nil {
		return snapshot.Policy{}, usagef("--web-config: %v", err)
	}
	if c.runTimeout <= 0 || c.shutdownTimeout <= 0 || c.leaderSession <= 0 || c.journalInterval < 0 {
		return snapshot.Policy{}, usagef("--run-timeout, --shutdown-timeout and --leader-session-timeout must be positive, --journal-interval 0 (off) or positive")
	}
	switch {
	case c.captureVia != "kafka" && c.captureVia != "connect":
		return snapshot.Policy{}, usagef("--capture-via %q: want kafka or connect", c.captureVia)
	case c.captureVia == "connect" && !c.g.connect.given():
		return snapshot.Policy{}, usagef("--capture-via connect captures through the Connect REST API: give --connect-url")
	case c.captureVia == "connect" && c.leaderElection && c.g.explicit("leader-election"):
		return snapshot.Policy{}, usagef("--capture-via connect reads no Kafka, and leader election needs a Kafka consumer group: run one replica with --leader-election=false")
	case c.captureVia == "connect" && c.journalInterval > 0 && c.g.explicit("journal-interval"):
		return snapshot.Policy{}, usagef("--journal-interval: the journal tails the offsets topics, which --capture-via connect does not read: leave it out (or 0)")
	}
	return c.keep.policy()
}

// config is the daemon's configuration from its flags.
func (c *daemonCmd) config(policy snapshot.Policy, kopts []kgo.Opt) daemon.Config {
	group := c.leaderGroup
	if group == "" {
		group = daemon.DefaultLeaderGroup(c.g.store)
	}
	return daemon.Config{
		Schedule:        c.schedule,
		RunTimeout:      c.runTimeout,
		SkipImmediately: c.skipImmediately,
		Policy:          policy,
		Listen:          c.listen,
		WebConfig:       c.webConfig,
		ShutdownTimeout: c.shutdownTimeout,
		ProgressEvery:   c.progressEvery,
		Leader: daemon.LeaderConfig{
			Enabled:        c.leaderElection,
			Group:          group,
			Topic:          c.leaderTopic,
			SessionTimeout: c.leaderSession,
			ClientOpts:     kopts,
		},
		Journal:  daemon.JournalConfig{Interval: c.journalInterval, KeepWithin: time.Duration(c.journalKeepWithin)},
		Commands: c.g.commandSettings(),
	}
}
