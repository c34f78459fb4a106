package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// restoreCommand is the restore entry of the command table (main.go).
var restoreCommand = commandInfo{
	name:    "restore",
	summary: "write a snapshot's offsets back into Kafka (stop the connectors first; see docs/restore.md)",
	usage: `<ID|latest> [--connector NAME]... [--source-only|--sink-only] [--include-unowned] [--dry-run] [--force] [--allow-other-cluster] [--output text|json]
       [--connect-url URL... [--stop-connectors] [--create-connectors] [--resume] [--via kafka|connect]]
       [--allow-other-cluster --translate mm2|timestamp [--mm2-source-alias ALIAS] [--source-brokers B]
        [--translate-margin D]] [--map-topic SRC=DST]... [--topic-prefix P] [--rename-connector OLD=NEW]...
       --at TIME [--connector NAME]... [...the same flags]
       --from-file FILE [--connector NAME | --group G] [...the same flags]

Compares the snapshot with the live cluster for each connector in scope (the
snapshot's connectors, or those named with --connector) and prints the plan:
per connector "connector <name> (<type>, <state>)", then one line per offset
that changes (old -> new), and "plan: N source writes, M tombstones,
K sink commits, J sink deletions". A connector the plan writes nothing for
is left alone, running or not ("unchanged, running, left alone"). Then,
unless --dry-run:
  1. refuses (exit 3, nothing written) while a connector it writes runs or
     is paused (its target state is not STOPPED or its task count is not
     0), its sink group has members, or, exactly-once, has a transaction
     open on its offsets partitions; or while an offsets topic it writes is
     not cleanup.policy=compact or has another restore's transaction open;
     the refusal says how to go ahead; --force skips these checks;
  2. stores the current state of the connectors in scope as an undo snapshot
     and prints "undo snapshot: <ID>" (restore that ID to roll back);
  3. writes source offsets (exact key and value bytes, on murmur2(key) of the
     connector's offsets topic, one transaction per topic) and sink offsets
     (commits and deletions per group);
  4. reads everything back and prints "verified: N connectors match the
     snapshot", or lists what differs and exits 1.
A second run of the same restore finds "nothing to do". With --dry-run the
plan and, after it on stdout, the refusals the real run would hit are
printed and nothing is written; the exit code is 3 if the restore would be
refused. --output json prints one document on stdout instead (the plan, the
refusals, the undo snapshot ID, what was written, the verification; see
docs/json-output.md) and the text on stderr.

With --connect-url the plan shows each connector's REST state, and the
restore also refuses while the REST status of a connector it writes is not
STOPPED with no tasks. --stop-connectors stops the connectors it writes
first (PUT /connectors/NAME/stop) and waits until they are STOPPED with no
tasks and their sink groups are empty; --resume then puts those it stopped back
(resume, or pause for a PAUSED one) once the restore is verified. If
anything fails after stopping they are left stopped, and the error says the
state of each. On workers that are Strimzi's pods (their worker id is
<name>-connect-<n>.<name>-connect.<namespace>.svc:8083) or with --connect-url
naming Strimzi's <name>-connect-api Service, --stop-connectors refuses
(exit 3, nothing stopped or written) and prints the kubectl commands that
stop the KafkaConnector resources instead (the operator would undo a REST
stop); --not-strimzi-managed overrides that. --via connect writes through PATCH /connectors/NAME/offsets
(Kafka 3.6+) instead of Kafka and verifies with GET; Connect rewrites source
keys in its own byte form, so keys in another form are warned about.
A snapshot captured through the Connect REST API (snapshot --via connect)
is restored with --via connect alone, and then no Kafka broker is asked:
the plan compares it with a capture of the live state through the same API,
which is also the undo snapshot; --via kafka refuses it (exit 3, nothing
written). See docs/rest-only.md.
--include-unowned also writes the offsets topic keys no connector owns
(keys that are not [connector, {partition}], kept raw in the snapshot),
exact bytes, to the partition they had (their murmur2 partition when the
topic has another partition count here), listed after the plan; without it
the plan says they exist and are not restored.
--create-connectors (with --connect-url, Kafka 3.7+) creates every connector
in scope that Connect does not have, STOPPED (POST /connectors with
"initial_state":"STOPPED"), with the config the snapshot holds (renamed by
--rename-connector), after the safety checks and before writing; the
offsets are then written and verified, and --resume resumes them (a
connector PAUSED or STOPPED in the snapshot is put back so). A connector
Connect has with another config is reported and left as it is. On older
workers it refuses (exit 3, nothing written) and prints the steps to do it
by hand. The dry run lists the connectors it would create.
--from-file restores a file instead of a snapshot: a Connect REST offsets
body (with --connector NAME) or kafka-consumer-groups CSV
(group,topic,partition,offset, or with --group G the topic,partition,offset
lines kafka-consumer-groups.sh --export writes for one group), or a
standalone worker's offsets file (offset.storage.file.filename, told by the
Java serialization magic AC ED 00 05; its exact key and value bytes); the
partitions it names get its offsets (null removes one), the others stay.
See docs/connect-rest.md.

When the daemon's journal saw a reset of a connector in scope (in the 24
hours before the state restored) and the snapshot or moment restored was
captured after it, the plan opens with a WARNING naming the reset (time,
kind, count), the snapshot or moment that holds the state after it, and the
restore back to just before it, as events prints it (--output json:
after_resets).

--at TIME restores the state at a moment from the daemon's journal: TIME is
RFC 3339 (2026-12-01T09:14:03.250Z) or a negative duration from now (-15m);
the plan first says how the state was made and how exact each part is. A
TIME in the future, before anything restorable or inside a gap of the
journal exits 1, writing nothing. See docs/journal.md.

Into another cluster (docs/migrate.md): --translate translates each sink
offset into the target's copy of its topic, by MirrorMaker 2's checkpoints
(mm2: ALIAS.checkpoints.internal on the target; a group without checkpoints
falls back to MM2's offset syncs on --source-brokers, then to timestamps)
or by the timestamp of the last record the connector consumed (timestamp:
the first record at or after it, minus --translate-margin, clamped to the
last stable offset; the last consumed record is re-delivered rather than a
record skipped). --map-topic and --topic-prefix rename sink topics;
--rename-connector restores OLD's offsets as NEW's. The translation is
printed per sink partition (old offset, method, new offset, records
re-delivered or skipped); a partition that cannot be translated refuses the
restore (exit 3) unless --force, which leaves it as it is.`,
	new: func(e *env) command { return &restoreCmd{env: e} },
}

type restoreCmd struct {
	*env
	connectors        listFlag
	sourceOnly        bool
	sinkOnly          bool
	dryRun            bool
	force             bool
	allowOtherCluster bool
	timeout           time.Duration
	// Kafka Connect REST API, see restore_connect.go.
	stopConnectors bool
	resume         bool
	start          bool
	stopTimeout    time.Duration
	via            string
	fromFile       string
	at             string // --at TIME, see at.go
	output         string
	group          string
	// Moving offsets to another cluster, see restore_translate.go.
	tr           translateFlags
	progressMode progressFlag
	notStrimzi   bool
	// createConnectors: see restore/create.go.
	createConnectors bool
	includeUnowned   bool
	// toOffsetsTopic: see restore_totopic.go.
	toOffsetsTopic string
	// createTopics, replicationFactor: see restore/createtopics.go.
	createTopics      bool
	replicationFactor int
	// fromCluster is --from-cluster; atCluster the cluster whose journal
	// --at was read from, in a store of several (see at_cluster.go).
	fromCluster, atCluster string
}

func (c *restoreCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "restore only this connector of the snapshot; repeatable (default every connector in the snapshot)")
	fs.BoolVar(&c.sourceOnly, "source-only", false, "restore only source connector offsets (the offsets topics)")
	fs.BoolVar(&c.sinkOnly, "sink-only", false, "restore only sink connector offsets (the consumer groups)")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print the plan and the refusals the restore would hit, and write nothing (exit 3 if the restore would be refused)")
	fs.BoolVar(&c.force, "force", false, "skip the safety checks (connector running, sink group members, open transactions, offsets topic cleanup.policy, another restore running); dangerous")
	fs.BoolVar(&c.allowOtherCluster, "allow-other-cluster", false, "restore a snapshot taken from another Kafka cluster (migration or disaster recovery into a new cluster)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up the whole restore after this long")
	fs.BoolVar(&c.stopConnectors, "stop-connectors", false, "stop the connectors the restore writes through the Connect REST API first and wait until they are STOPPED with no tasks and their sink groups empty (needs --connect-url)")
	fs.BoolVar(&c.resume, "resume", false, "with --stop-connectors or --create-connectors: once the restore is verified, put back the connectors it stopped or created (resume, or pause those that were PAUSED)")
	fs.BoolVar(&c.includeUnowned, "include-unowned", false, "also write the offsets topic keys no connector owns (keys that are not [connector, {partition}], kept raw in the snapshot); the plan lists them")
	fs.BoolVar(&c.createConnectors, "create-connectors", false, "create every connector in scope that the Connect REST API (--connect-url) does not have, STOPPED (Kafka 3.7+), with the snapshot's config, before writing its offsets; one it has with another config is reported, never overwritten")
	fs.BoolVar(&c.start, "start", false, "with --stop-connectors --resume: also resume the connectors it writes that were STOPPED or PAUSED before (a sink whose offsets expired would lose them again if left stopped)")
	fs.DurationVar(&c.stopTimeout, "stop-timeout", 2*time.Minute, "how long --stop-connectors and --resume wait for the connectors to reach their state")
	fs.StringVar(&c.via, "via", restore.ViaKafka, "write the offsets through kafka (exact bytes, the default) or connect (PATCH /connectors/NAME/offsets, Kafka 3.6+; needs --connect-url)")
	fs.StringVar(&c.at, "at", "", "restore the state at this moment instead of a snapshot: RFC 3339 (2026-12-01T09:14:03Z) or a negative duration from now (-15m); from the journal (see docs/journal.md)")
	registerFromCluster(fs, &c.fromCluster)
	fs.StringVar(&c.fromFile, "from-file", "", "restore this file instead of a snapshot: a Connect REST offsets body (needs --connector NAME), a kafka-consumer-groups CSV (group,topic,partition,offset) or a standalone worker's offsets file (offset.storage.file.filename)")
	fs.StringVar(&c.output, "output", "text", "output format: text, or json (one document on stdout: the plan, the refusals, the undo snapshot ID, what was written, the verification; the text goes to stderr; see docs/json-output.md)")
	fs.StringVar(&c.group, "group", "", "with --from-file: the CSV is one consumer group's topic,partition,offset lines (kafka-consumer-groups.sh --export --group G), for group G")
	fs.StringVar(&c.toOffsetsTopic, "to-offsets-topic", "", "with --connector NAME: write the source connector's offsets to this new (or empty) offsets topic instead, created compacted, for a connector recreated with offset.storage.topic=TOPIC (MSK Connect's way to carry offsets to a new connector); prints that worker setting")
	fs.BoolVar(&c.createTopics, "create-topics", false, "create the Connect internal topics (offsets, config, status) missing here before restoring, cleanup.policy=compact, with the snapshot's partition counts (status: Connect's default 5): disaster recovery onto an empty cluster in one command")
	fs.IntVar(&c.replicationFactor, "replication-factor", 0, "with --create-topics: the replication factor of the topics created (default the broker's default.replication.factor)")
	c.tr.register(fs)
	fs.BoolVar(&c.notStrimzi, "not-strimzi-managed", false, "with --stop-connectors: stop connectors through the REST API even on workers that look like Strimzi's (whose operator would undo the stop), for a Strimzi cluster that does not manage its connectors")
	c.progressMode.register(fs)
	c.g.connect.register(fs)
}

// progress is where the text output goes: stdout, or stderr when stdout
// gets the JSON document.
func (c *restoreCmd) progress() io.Writer {
	if c.output == "json" {
		return c.stderr
	}
	return c.stdout
}

// request is the restore.Request the flags ask for, without its
// snapshot; rc is the Connect client (nil without --connect-url), snap
// the snapshot stored (nil with --from-file), named says an ID was given.
func (c *restoreCmd) request(opts capture.Options, rc *connectrest.Client, snap *snapshot.Snapshot, named bool) restore.Request {
	req := restore.Request{
		Options:           restore.Options{Options: opts, SourceOnly: c.sourceOnly, SinkOnly: c.sinkOnly, AllowOtherCluster: c.allowOtherCluster, IncludeUnowned: c.includeUnowned},
		DryRun:            c.dryRun,
		Force:             c.force,
		StopConnectors:    c.stopConnectors,
		Resume:            c.resume,
		Start:             c.start,
		StopTimeout:       c.stopTimeout,
		NotStrimziManaged: c.notStrimzi,
		Via:               c.via,
		CreateConnectors:  c.createConnectors,
		CreateTopics:      c.createTopics,
		ReplicationFactor: c.replicationFactor,
		Resets:            c.fromFile == "",
		Commands:          c.g.commandSettings(),
		ToOffsetsTopic:    c.toOffsetsTopic,
	}
	req.Connectors = c.connectors
	req.Commands.Cloud = rc != nil && rc.Cloud()
	req.Commands.FromCluster = c.atCluster
	if c.via == restore.ViaConnect {
		req.Commands.Via = restore.ViaConnect
	}
	if named && !c.tr.active() && c.toOffsetsTopic == "" {
		req.Again = c.again(req.Commands, snap.ID)
	}
	return req
}

func (c *restoreCmd) Run(ctx context.Context, args []string) error {
	if err := c.checkUsage(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	snap, err := c.storedSnapshot(ctx, st, args)
	if err != nil {
		return err
	}
	cl, opts, err := c.kafkaFor(ctx, snap)
	if err != nil {
		return err
	}
	if cl != nil {
		defer cl.Close()
	}
	if c.toOffsetsTopic != "" {
		if err := c.checkToTopic(snap, cl != nil); err != nil {
			return err
		}
	} else if opts.Layout != nil {
		// Deleting is MSK Connect's only stop, and a connector created
		// again gets topics of its own: the ones restored here are read
		// again only by a connector whose worker configuration names them.
		fmt.Fprintln(c.stderr, wrapNote("note: on MSK Connect a connector created again gets new topics: it reads the offsets restored here only if its custom worker configuration names this offsets topic (offset.storage.topic); to carry a connector's offsets to one created again, restore --connector NAME --to-offsets-topic NEW (docs/msk-connect.md)"))
	}
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	req := c.request(opts, rc, snap, len(args) > 0)
	if c.fromFile != "" {
		if c.via == restore.ViaConnect {
			// Before reading the file, as Run would.
			if err := restore.CheckConnectOffsetsAPI(ctx, rc); err != nil {
				return err
			}
		}
		if snap, err = c.fileSnapshot(ctx, cl, st, req.Options); err != nil {
			return err
		}
	}
	if c.tr.active() {
		translated, err := c.translate(ctx, cl, snap, &req.Options)
		if err != nil {
			return c.failedBeforeRun(snap, err)
		}
		snap = translated
		req.ConfigRewrites = c.tr.rewrites
	}
	req.Snapshot = snap
	env := restore.Env{Client: cl, Store: st, Connect: rc, Warn: c.stderr, Log: c.log, Progress: new(capture.Progress)}
	progress := c.progressMode.start(c.stderr, "restore", env.Progress)
	env.Out, env.Warn = progress.Wrap(c.progress()), progress.Wrap(c.stderr)
	env.Log = progress.Logger(c.g, c.log)
	rep, err := restore.Run(ctx, env, req)
	progress.Stop()
	if c.output == "json" {
		if jerr := writeJSON(c.stdout, rep.Document(err)); jerr != nil && err == nil {
			err = jerr
		}
	}
	return err
}

// kafkaFor opens the Kafka client of the restore of snap, unless snap was
// captured through the Connect REST API: that is restored with REST
// access alone (--via connect), no client is opened (nil) and the
// settings are the flags' only. Restoring it otherwise is refused here,
// before any broker is asked.
func (c *restoreCmd) kafkaFor(ctx context.Context, snap *snapshot.Snapshot) (*kgo.Client, capture.Options, error) {
	if !snap.ViaREST() {
		return c.g.kafkaClient(ctx)
	}
	if err := restore.CheckVia(snap, c.via); err != nil {
		return nil, capture.Options{}, err
	}
	if c.tr.active() {
		return nil, capture.Options{}, usagef("snapshot %s was captured through the Connect REST API: --translate needs a snapshot read from the Kafka topics", snap.ID)
	}
	_, opts, err := c.g.kafkaSettings()
	return nil, opts, err
}

// again is this restore of snapshot id as a command to run again: the
// settings, the connectors named and the choices that shape what it writes
// (not --force, --dry-run or the output's form).
func (c *restoreCmd) again(s restore.CommandSettings, id string) restore.Commands {
	for _, f := range []struct {
		on   bool
		flag string
	}{{c.sourceOnly, "--source-only"}, {c.sinkOnly, "--sink-only"}, {c.includeUnowned, "--include-unowned"}, {c.allowOtherCluster, "--allow-other-cluster"},
		{c.createConnectors, "--create-connectors"}} {
		if f.on {
			s.Flags = append(s.Flags, f.flag)
		}
	}
	return s.Snapshot(id, c.connectors...)
}

// storedSnapshot reads what the restore restores from the store: the state
// at --at, or the snapshot named; nil for --from-file (read later, once the
// client is made).
func (c *restoreCmd) storedSnapshot(ctx context.Context, st *store.Store, args []string) (*snapshot.Snapshot, error) {
	switch {
	case c.at != "":
		w := c.stdout // how the state was made: beside the plan, or on stderr beside JSON
		if c.output == "json" {
			w = c.stderr
		}
		snap, err := c.stateAt(ctx, w, st)
		if err != nil {
			return nil, withNothingWritten(err)
		}
		return snap, nil
	case c.fromFile != "":
		return nil, nil
	}
	// Restored as it is, its source offsets are read into a compact table
	// (a translation rewrites them: it needs them whole), and with
	// --source-only without the sink groups' offsets.
	var how *store.RestoreRead
	if !c.tr.active() {
		how = &store.RestoreRead{NoSinkOffsets: c.sourceOnly}
		// Then the restore's large structures are the snapshot's and the
		// plan's pointer-free records and arenas: collecting them often is
		// cheap (see internal/memlimit). A state at a moment, a
		// translation or a file is made of SourceOffsets, whose pointers
		// make each collection dear: under the limit --at over a day of
		// journal took about twice the CPU it takes without it.
		memlimit.Start()
	}
	return readSnapshot(ctx, st, args[0], c.connectors, how)
}

func (c *restoreCmd) checkUsage(args []string) error {
	switch {
	case c.at != "" && (len(args) > 0 || c.fromFile != ""):
		return usagef("--at restores the state at a moment: give no snapshot ID and no --from-file with it")
	case c.fromCluster != "" && c.at == "":
		return checkFromCluster(c.fromCluster, false)
	case len(args) == 0 && c.fromFile == "" && c.at == "":
		return usagef("missing snapshot ID (or latest), --at TIME, or --from-file FILE")
	case len(args) > 0 && c.fromFile != "":
		return usagef("unexpected argument %q: --from-file restores a file, not a snapshot", args[0])
	case len(args) > 1:
		return usagef("unexpected argument %q", args[1])
	case c.sourceOnly && c.sinkOnly:
		return usagef("--source-only and --sink-only exclude each other: give one or neither")
	case c.output != "text" && c.output != "json":
		return usagef("--output %q: want text or json", c.output)
	case c.replicationFactor != 0 && (!c.createTopics || c.replicationFactor < 0):
		return usagef("--replication-factor %d: goes with --create-topics, and is 1 or more", c.replicationFactor)
	}
	if err := c.checkConnectUsage(); err != nil {
		return err
	}
	_, err := c.tr.options()
	return err
}

// readSnapshot reads the snapshot to restore from the store. With
// connectors named, latest is the newest snapshot (full or scoped) that
// holds them.
//
// With how, it is read for a restore as it is (store.RestoreSink).
func readSnapshot(ctx context.Context, st *store.Store, id string, connectors []string, how *store.RestoreRead) (*snapshot.Snapshot, error) {
	var snap *snapshot.Snapshot
	var err error
	if how != nil {
		snap, _, err = st.Snapshots().For(connectors).GetWith(ctx, id, store.RestoreSink(*how))
	} else {
		snap, _, err = st.Snapshots().For(connectors).GetWith(ctx, id, nil)
	}
	if err != nil {
		if errors.Is(err, snapshot.ErrNotFound) {
			return nil, fmt.Errorf("read snapshot %q: %w; 'offsetkeeper list' shows the stored snapshots; nothing was written", id, err)
		}
		if errors.Is(err, store.ErrStore) {
			return nil, fmt.Errorf("read snapshot %q: %w; nothing was written", id, err)
		}
		return nil, fmt.Errorf("read snapshot %q: %w; do not restore it; nothing was written", id, err)
	}
	return snap, nil
}
