package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// drillCommand is the drill entry of the command table (main.go).
var drillCommand = commandInfo{
	name:    "drill",
	summary: "prove a backup restorable: restore it into a scratch Kafka, read it back, compare with Connect, measure RTO and RPO (exit 0 pass, 1 fail, 2 cannot run)",
	usage: `[ID|latest | --at TIME] [--connect-url URL] [--scratch-brokers B] [--signing-key FILE] [--output text|json]
       --list [--output text|json]
       show ID
       verify REPORT --public-key FILE

Drills a state: the snapshot named, the state at --at TIME from the
journal, or by default a fresh capture of the live cluster (not stored).
Three checks, one report:
  restorable   the state is restored through restore.Run, the restore
               command's own path (plan, write, read-back verification,
               --allow-other-cluster --include-unowned), into a scratch
               Kafka: by default an embedded one the drill starts in
               process, or --scratch-brokers (a cluster without the
               state's topics: the drill creates them and deletes them and
               its groups after). The offsets, config and status topics and
               the sink topics are created as the state describes them.
               Everything is read back and compared byte for byte: each
               key on its murmur2 partition with its value, tombstones
               absent, every sink offset; each connector's key and value
               must read as Connect's JsonConverter reads them.
  complete     with --connect-url: every connector Connect has is in the
               state; for each, GET /connectors/NAME/offsets and the state
               hold the same partitions; stopped or paused (now and in the
               state), the same offsets; running, none behind the state
               (the journal's movement rule). Without --connect-url it is
               skipped, and the report says so.
  recoverable  RTO: how long restore.Run took into the scratch cluster
               (the embedded one is in process: a real cluster is slower);
               RPO: the journal's lag now and the age of the newest full
               snapshot.
The report (text; --output json prints the stored document) names the
state (snapshot ID and SHA-256, or the moment), the counts, each failure
with its connector and partition, the durations, the tool version and the
cluster ID, and is stored in the store as drills/<DRILL-ID>.json, never
changed after. With --signing-key (ed25519, PEM PKCS#8, as openssl genpkey
-algorithm ed25519 writes it) it is a DSSE envelope (payloadType
application/vnd.offsetkeeper.drill+json); drill verify REPORT --public-key
FILE checks one (REPORT a file, or a drill ID in the store). drill show ID
prints a stored report as it is stored. drill --list lists them.

Exit codes of drill: 0 the drill passed, 1 it failed (or verify: the
signature does not verify), 2 it cannot run (the scratch cluster does not
start, Connect does not answer, the store or the snapshot cannot be read)
or a usage error. See docs/drills.md.`,
	new: func(e *env) command { return &drillCmd{env: e} },
}

type drillCmd struct {
	*env
	at             string
	list           bool
	output         string
	scratchBrokers string
	signingKey     string
	publicKey      string
	timeout        time.Duration
	// runByDaemon: the daemon runs this drill as its child process
	// (daemon_drill_child.go); a hidden flag.
	runByDaemon bool
	// fromCluster is --from-cluster (see at_cluster.go).
	fromCluster string
}

func (c *drillCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.at, "at", "", "drill the state at this moment from the journal: RFC 3339 or a negative duration from now (-15m)")
	registerFromCluster(fs, &c.fromCluster)
	fs.BoolVar(&c.list, "list", false, "list the drills stored in the store, oldest first")
	fs.StringVar(&c.output, "output", "text", "output format: text, or json (the report document as stored: a DSSE envelope when signed)")
	fs.StringVar(&c.scratchBrokers, "scratch-brokers", "", "restore into this scratch Kafka cluster (comma-separated host:port, plaintext) instead of an embedded one; it must not have the state's topics")
	fs.StringVar(&c.signingKey, "signing-key", "", "sign the report with this ed25519 private key (PEM PKCS#8, openssl genpkey -algorithm ed25519): it is stored as a DSSE envelope")
	fs.StringVar(&c.publicKey, "public-key", "", "drill verify: the ed25519 public key (PEM, openssl pkey -pubout) to check the report's signature with")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Minute, "give up the drill after this long")
	fs.BoolVar(&c.runByDaemon, "run-by-daemon", false, "the daemon runs this drill as its child process: the report and the log say so")
	c.g.connect.register(fs)
}

// daemonSkipComplete is the report's reason for a completeness check a
// drill run by the daemon skips.
const daemonSkipComplete = "skipped by choice: the daemon has no --connect-url to compare with"

// errDrillFailed: the drill ran and failed (exit 1); the report says why.
var errDrillFailed = errors.New("drill failed")

func (c *drillCmd) Run(ctx context.Context, args []string) error {
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	if len(args) > 0 && (args[0] == "verify" || args[0] == "show") {
		if len(args) != 2 {
			return usagef("drill %s takes one argument: drill %s REPORT", args[0], args[0])
		}
		if args[0] == "show" {
			return c.show(ctx, args[1])
		}
		return c.verify(ctx, args[1])
	}
	switch {
	case c.list && (len(args) > 0 || c.at != ""):
		return usagef("--list lists the stored drills: give no ID and no --at with it")
	case c.list:
		return c.history(ctx)
	case len(args) > 1:
		return usagef("unexpected argument %q", args[1])
	case len(args) == 1 && c.at != "":
		return usagef("--at drills the state at a moment: give no snapshot ID with it")
	case c.publicKey != "":
		return usagef("--public-key is for drill verify REPORT")
	case c.fromCluster != "" && c.at == "":
		return checkFromCluster(c.fromCluster, false)
	}
	key, err := c.readSigningKey()
	if err != nil {
		return err
	}
	if c.runByDaemon {
		// The daemon logs these lines as its own: which process they
		// came from is in each.
		c.log = c.log.With("component", "drill", "pid", os.Getpid())
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	rep, err := c.drill(ctx, args)
	if err != nil {
		return cannotRun(err)
	}
	return c.finish(ctx, rep, key)
}

// cannotRun marks err as a drill that could not run (exit 2).
func cannotRun(err error) error {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, drill.ErrCannotRun) {
		return err
	}
	return fmt.Errorf("%w: %w", drill.ErrCannotRun, err)
}

// drillHeadroom is the drill's floor of the collector's headroom
// (memlimit.StartWith), half the other commands' memlimit.Headroom. A
// drill is a background check that runs beside the daemon in its pod: it
// takes more CPU (collections closer together while it writes into the
// scratch cluster) to hold its memory within restore's bound, which the
// daemon's memory limit is sized for. Its RTO is measured under that
// collector, and errs long.
const drillHeadroom = 8 << 20

// drill reads the state and runs the drill.
func (c *drillCmd) drill(ctx context.Context, args []string) (*drill.Report, error) {
	memlimit.StartWith(drillHeadroom)
	st, err := c.g.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rc, err := c.g.connect.client()
	if err != nil {
		return nil, err
	}
	_, opts, err := c.g.kafkaSettings()
	if err != nil {
		return nil, err
	}
	req := drill.Request{Options: opts, ToolVersion: "offsetkeeper " + programVersion()}
	if c.scratchBrokers != "" {
		req.ScratchBrokers = splitList(c.scratchBrokers)
	}
	if rc == nil {
		req.SkipComplete = "skipped by choice: no --connect-url to compare with"
		if c.runByDaemon {
			req.SkipComplete = daemonSkipComplete
		}
	}
	switch {
	case c.at != "":
		snap, err := c.stateAt(ctx, st)
		if err != nil {
			return nil, err
		}
		req.State, req.Named = snap, drill.State{Kind: "moment", At: snap.CreatedAt, Description: snap.ID}
	case len(args) == 1:
		if err := drill.ReadSnapshot(ctx, st, args[0], &req); err != nil {
			return nil, err
		}
	default:
		cl, opts, err := c.g.kafkaClient(ctx)
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		opts.ProgramVersion, opts.Reason = programVersion(), snapshot.ReasonManual
		snap, err := capture.Capture(ctx, cl, opts)
		if err != nil {
			return nil, fmt.Errorf("capture the live cluster: %w", err)
		}
		req.State, req.Named, req.Options = snap, drill.State{Kind: "capture", At: snap.CreatedAt}, opts
	}
	return drill.Run(ctx, drill.Env{Store: st, Connect: rc, Log: c.log}, req)
}

// stateAt reads the state at --at from the journal. A moment no journal
// covers is refused: the store would fall back to the newest snapshot
// before it, and a report naming the moment would vouch for a state the
// drill did not restore.
func (c *drillCmd) stateAt(ctx context.Context, st *store.Store) (*snapshot.Snapshot, error) {
	t, err := parseAt("at", c.at, time.Now())
	if err != nil {
		return nil, err
	}
	snap, info, err := st.Journal().StateAtFor(ctx, t, store.ClusterPick{From: c.fromCluster})
	if errors.Is(err, store.ErrNoSuchCluster) {
		return nil, usagef("%v", err)
	}
	if err != nil {
		return nil, c.g.clusterChoice(fmt.Errorf("read state at %s: %w", c.at, err), c.at, nil)
	}
	if info != nil && info.Fallback {
		return nil, fmt.Errorf("read state at %s: no journal covers %s (it is before the daemon's journal); "+
			"the newest state before it is snapshot %s, %s older: drill that snapshot by its ID instead",
			c.at, t.UTC().Format(millis), info.Base.ID, t.Sub(info.Base.CreatedAt).Round(time.Second))
	}
	return snap, nil
}

// finish stores the report (signed with key, when set), prints it and
// returns errDrillFailed for a failed drill.
func (c *drillCmd) finish(ctx context.Context, rep *drill.Report, key []byte) error {
	var priv ed25519.PrivateKey
	signed := ""
	if key != nil {
		var err error
		if priv, err = drill.ParsePrivateKey(key); err != nil {
			return cannotRun(err)
		}
		signed = " (signed: a DSSE envelope)"
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return cannotRun(err)
	}
	defer st.Close()
	stored, err := drill.Save(ctx, st, rep, priv)
	if err != nil {
		return cannotRun(err)
	}
	if c.output == "json" {
		if _, err := c.stdout.Write(stored); err != nil {
			return err
		}
	} else {
		drill.PrintText(c.stdout, rep)
		show := c.printed(drillCommand, "drill", "show", rep.ID)
		stored := fmt.Sprintf("  report stored as drills/%s.json%s; print it with: %s", rep.ID, signed, show)
		if utf8.RuneCountInString(stored) > lineWidth { // the command on lines of its own, whole
			stored = fmt.Sprintf("  report stored as drills/%s.json%s; print it with:\n%s", rep.ID, signed,
				english.Continue(show, lineWidth, "    ", "        "))
		}
		fmt.Fprintln(c.stdout, stored)
	}
	if rep.Result != drill.Passed {
		err := fmt.Errorf("%w: %s failed (%d failures); the report names each with its cause, and docs/drills.md says what each cause means and what to do", errDrillFailed, strings.Join(rep.Failed(), ", "), rep.FailedChecks())
		next, cmds := c.nextAfterUnreadable(ctx, st, rep)
		if next == "" {
			next, cmds = c.nextAfterAbsent(rep)
		}
		if next != "" {
			return &restore.AdvisedError{Err: fmt.Errorf("%w. %s", err, next), Commands: cmds}
		}
		return err
	}
	return nil
}

func (c *drillCmd) readSigningKey() ([]byte, error) {
	if c.signingKey == "" {
		return nil, nil
	}
	data, err := os.ReadFile(c.signingKey)
	if err != nil {
		return nil, cannotRun(fmt.Errorf("read --signing-key: %w", err))
	}
	if _, err := drill.ParsePrivateKey(data); err != nil {
		return nil, usagef("--signing-key %s: %v", c.signingKey, err)
	}
	return data, nil
}

// readReport reads REPORT: a file, or a drill ID in the store.
func (c *drillCmd) readReport(ctx context.Context, ref string) ([]byte, error) {
	data, err := os.ReadFile(ref)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return data, err
	}
	if _, perr := snapshot.ParseID(ref); perr != nil {
		return nil, fmt.Errorf("read report %s: %w (not a file, nor a drill ID)", ref, err)
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Drills().Get(ctx, ref)
}

func (c *drillCmd) show(ctx context.Context, ref string) error {
	data, err := c.readReport(ctx, ref)
	if err != nil {
		return cannotRun(err)
	}
	_, err = c.stdout.Write(data)
	return err
}

// verify checks a signed report with --public-key.
func (c *drillCmd) verify(ctx context.Context, ref string) error {
	if c.publicKey == "" {
		return usagef("drill verify needs --public-key FILE (PEM, openssl pkey -pubout)")
	}
	keyData, err := os.ReadFile(c.publicKey)
	if err != nil {
		return cannotRun(fmt.Errorf("read --public-key: %w", err))
	}
	pub, err := drill.ParsePublicKey(keyData)
	if err != nil {
		return usagef("--public-key %s: %v", c.publicKey, err)
	}
	data, err := c.readReport(ctx, ref)
	if err != nil {
		return cannotRun(err)
	}
	rep, _, err := drill.Verify(ctx, data, pub)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errDrillFailed, ref, err)
	}
	if c.output == "json" {
		return writeJSON(c.stdout, rep)
	}
	fmt.Fprintf(c.stdout, "verified: drill report %s is signed by this key; the drill %s (%s)\n", rep.ID, rep.Result, stateName(rep.State))
	return nil
}

func stateName(s drill.State) string {
	if s.SnapshotID != "" {
		return "snapshot " + s.SnapshotID
	}
	return "at " + s.At.UTC().Format(millis)
}

// history is drill --list.
func (c *drillCmd) history(ctx context.Context) error {
	st, err := c.g.openStore(ctx)
	if err != nil {
		return cannotRun(err)
	}
	defer st.Close()
	ids, err := st.Drills().List(ctx)
	if err != nil {
		return cannotRun(err)
	}
	type row struct {
		ID     string        `json:"id"`
		Signed bool          `json:"signed"`
		Report *drill.Report `json:"report,omitempty"`
		Error  string        `json:"error,omitempty"`
	}
	rows := []row{}
	for _, id := range ids {
		data, err := st.Drills().Get(ctx, id)
		r := row{ID: id}
		if err == nil {
			r.Signed = drill.Signed(data)
			r.Report, err = drill.Open(data)
		}
		if err != nil {
			r.Error = err.Error()
		}
		rows = append(rows, r)
	}
	if c.output == "json" {
		return writeJSON(c.stdout, rows)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DRILL\tRESULT\tSTATE\tFAILURES\tRTO\tSIGNED")
	for _, r := range rows {
		if r.Report == nil {
			fmt.Fprintf(tw, "%s\tunreadable\t%s\t\t\t\n", r.ID, r.Error)
			continue
		}
		signed := "no"
		if r.Signed {
			signed = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Report.Result, stateName(r.Report.State), r.Report.FailedChecks(), r.Report.RTO.Restore, signed)
	}
	return tw.Flush()
}
