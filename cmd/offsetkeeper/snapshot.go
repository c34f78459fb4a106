package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// snapshotCommand is the snapshot entry of the command table (main.go).
var snapshotCommand = commandInfo{
	name:    "snapshot",
	summary: "take one snapshot of every Connect offset and store it; prints its ID as the last line",
	usage: `[--connector NAME]... [--via kafka|connect [--connect-url URL...]] [--pin [--note TEXT]] [flags]

By default it reads the offsets topics and the sink groups from Kafka (exact
key and value bytes). --via connect reads them through the Connect REST API
alone (GET /connectors, /connectors/NAME/config, /status and /offsets;
Kafka 3.5+), for a team that may use Connect's REST API but not its
internal topics: the snapshot holds Connect's normalised keys and no
partitions, list and show mark it "rest", and it is restored with
restore --via connect. See docs/rest-only.md.

With --connect-url and the default --via kafka, the snapshot also records each
connector's plugin version (GET /connector-plugins), and names in its
unread_groups every sink connector Connect runs that the capture did not read.

Exit 4: the snapshot was stored, but a sink connector's group could not be
read or classified; each is named on stderr and in unread_groups.`,
	new: func(e *env) command { return &snapshotCmd{env: e} },
}

type snapshotCmd struct {
	*env
	connectors listFlag
	timeout    time.Duration
	output     string
	progress   progressFlag
	pin        bool
	note       string
	// via is kafka (read the offsets topics and groups) or connect
	// (through the Connect REST API alone, see snapshotREST).
	via string
}

// snapshotResult is snapshot --output json: the stored snapshot's Info
// (ID, kind, scope, counts, size, checksum) with what only the capture
// knows.
type snapshotResult struct {
	snapshot.Info
	// Unparsed counts the offsets topic keys kept raw (not [connector,
	// {partition}]); Warnings are the snapshot's warnings, never null.
	Unparsed int      `json:"unparsed"`
	Warnings []string `json:"warnings"`
	// Unread names the sink groups that could not be read, never null;
	// not empty, the exit code is 4.
	Unread []snapshot.UnreadGroup `json:"unread_groups"`
}

// pinStored pins the snapshot just stored (snapshot --pin). A pin that
// fails leaves the snapshot stored: the error says how to pin it again.
func (c *snapshotCmd) pinStored(ctx context.Context, sto *store.Store, info *snapshot.Info) error {
	if !c.pin {
		return nil
	}
	_, p, err := sto.Pins().Pin(ctx, info.ID, c.note, time.Now())
	if err != nil {
		return fmt.Errorf("snapshot %s stored, but not pinned: %w; pin it with: offsetkeeper pin %s", info.ID, err, info.ID)
	}
	info.Pin = &p
	c.log.Info("snapshot pinned", "snapshot_id", info.ID, "note", c.note)
	return nil
}

func (c *snapshotCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "capture only this connector; repeatable (default all)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up the whole snapshot after this long; nothing is stored then")
	fs.StringVar(&c.output, "output", "text", "output format: text (counts, then the ID as the last line) or json (see docs/json-output.md)")
	c.progress.register(fs)
	fs.BoolVar(&c.pin, "pin", false, "pin the snapshot: the daemon's retention and prune never remove it (see pin, unpin)")
	fs.StringVar(&c.note, "note", "", "with --pin: why it is pinned, shown by list")
	fs.StringVar(&c.via, "via", "kafka", "capture from kafka (the offsets topics and sink groups, exact bytes, the default) or connect (through the Connect REST API alone, Kafka 3.5+: GET /connectors/NAME/offsets, needs --connect-url; see docs/rest-only.md)")
	c.g.connect.register(fs)
}

func (c *snapshotCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	if c.note != "" && !c.pin {
		return usagef("--note goes with --pin")
	}
	if len(c.note) > store.MaxPinNote {
		return usagef("--note: %d bytes, at most %d", len(c.note), store.MaxPinNote)
	}
	switch {
	case c.via != "kafka" && c.via != "connect":
		return usagef("--via %q: want kafka or connect", c.via)
	case c.via == "connect" && !c.g.connect.given():
		return usagef("--via connect captures through the Connect REST API: give --connect-url")
	}
	// A capture's heap is its views, pointer-free: collecting it more
	// often is cheap (see internal/memlimit).
	memlimit.Start()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	sto, err := c.g.createStore(ctx)
	if err != nil {
		return err
	}
	defer sto.Close()
	if c.via == "connect" {
		return c.snapshotREST(ctx, sto)
	}
	cl, opts, err := c.g.kafkaClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	recoverInterrupted(ctx, cl, sto, c.stderr, c.log)
	opts.Connectors = c.connectors
	opts.Reason = snapshot.ReasonManual
	opts.Progress = new(capture.Progress)
	progress := c.progress.start(c.stderr, "snapshot", opts.Progress)
	defer progress.Stop()

	began := time.Now()
	capt := capture.NewCapturer(cl, opts)
	// Streamed and stored once: the source offsets go from what was read
	// straight into the stored document's frames, each partition's as
	// soon as it is read, and what was read goes as it is encoded.
	snap, err := capt.CaptureStreamedOnce(ctx)
	if err != nil {
		return fmt.Errorf("take snapshot: %w", kafkaconf.DescribeError(topicGoneJournal(ctx, sto, cl, err, c.g.commandSettings())))
	}
	if err := c.addFromREST(ctx, snap); err != nil {
		return err
	}
	captured := time.Now()
	opts.Progress.SetPhase(capture.PhaseStore)
	info, err := sto.Snapshots().Put(ctx, snap)
	if err != nil {
		return fmt.Errorf("store snapshot: %w", err)
	}
	progress.Stop()
	st := capt.Stats()
	c.log.Debug("snapshot timings", "config_read", st.ConfigRead, "offsets_read", st.OffsetsRead,
		"build", st.Build, "groups", st.Groups, "capture", captured.Sub(began), "store", time.Since(captured))
	c.printWarnings(snap, info.ID)
	c.warnRecreated(ctx, sto, snap, info)
	c.log.Info("snapshot taken", "snapshot_id", info.ID, "cluster_id", snap.ClusterID,
		"connectors", info.Connectors, "source_keys", info.SourceKeys, "sink_groups", info.SinkGroups,
		"records", capt.Stats().RecordsRead, "size", info.Size, "duration", time.Since(began).Round(time.Millisecond),
		"capture", captured.Sub(began).Round(time.Millisecond), "store", time.Since(captured).Round(time.Millisecond))
	return c.printResult(ctx, sto, snap, info)
}

// snapshotREST is snapshot --via connect: every connector's offsets read
// through the Connect REST API alone (capture.CaptureREST), no broker
// asked, and stored as any snapshot.
func (c *snapshotCmd) snapshotREST(ctx context.Context, sto *store.Store) error {
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	began := time.Now()
	snap, err := capture.CaptureREST(ctx, rc, capture.RESTOptions{Connectors: c.connectors, ProgramVersion: programVersion(), Reason: snapshot.ReasonManual})
	if err != nil {
		return fmt.Errorf("take snapshot through the Connect REST API: %w; nothing was stored", err)
	}
	capture.AddFromREST(ctx, rc, snap)
	info, err := sto.Snapshots().Put(ctx, snap)
	if err != nil {
		return fmt.Errorf("store snapshot: %w", err)
	}
	c.printWarnings(snap, info.ID)
	c.log.Info("snapshot taken through the Connect REST API", "snapshot_id", info.ID, "cluster_id", snap.ClusterID,
		"connectors", info.Connectors, "source_keys", info.SourceKeys, "sink_groups", info.SinkGroups,
		"size", info.Size, "duration", time.Since(began).Round(time.Millisecond))
	return c.printResult(ctx, sto, snap, info)
}

// printResult pins the snapshot stored if asked and prints what was stored.
func (c *snapshotCmd) printResult(ctx context.Context, sto *store.Store, snap *snapshot.Snapshot, info snapshot.Info) error {
	if err := c.pinStored(ctx, sto, &info); err != nil {
		return err
	}
	if c.output == "json" {
		res := snapshotResult{Info: info, Unparsed: snap.Unparsed(), Warnings: append([]string{}, snap.Warnings...), Unread: append([]snapshot.UnreadGroup{}, snap.Unread...)}
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
		return incomplete(snap, info.ID)
	}
	if snap.ViaREST() {
		fmt.Fprintf(c.stdout, "captured through the Connect REST API (%s): Connect's normalised keys, no partitions; restore with --via connect\n", snap.ConnectURL)
	}
	fmt.Fprintf(c.stdout, "kind: %s, connectors: %d, source keys: %d (unparsed %d), sink groups: %d, size: %d bytes\n",
		info.Kind, info.Connectors, info.SourceKeys, snap.Unparsed(), info.SinkGroups, info.Size)
	if info.Pin != nil {
		fmt.Fprintf(c.stdout, "pinned%s\n", noteText(info.Pin.Note))
	}
	fmt.Fprintln(c.stdout, info.ID)
	return incomplete(snap, info.ID)
}

// printWarnings prints the snapshot's warnings on stderr (or logs them with
// --log-format json).
func (c *snapshotCmd) printWarnings(snap *snapshot.Snapshot, id string) {
	for _, u := range snap.Unread {
		if c.g.logFormat == "text" {
			warn(c.stderr, "snapshot", unreadText(u))
		} else {
			c.log.Warn("snapshot left a sink group out", "snapshot_id", id, "group", u.Group, "connector", u.Connector, "reason", u.Reason)
		}
	}
	for _, w := range snap.Warnings {
		switch {
		case snap.Unparsed() > 0 && strings.Contains(w, "kept raw"):
			// Harmless: Connect keeps such keys too, a restore leaves
			// them alone, and the summary counts them (unparsed N).
			c.log.Info("snapshot warning", "snapshot_id", id, "warning", w)
		case c.g.logFormat == "text" && capture.IsPolicyWarning(w):
			// Ends with the kafka-configs.sh command that fixes it:
			// printed whole, to paste.
			_, fix, _ := strings.Cut(w, "Set it back with: ")
			fmt.Fprintln(c.stderr, english.Advice("offsetkeeper snapshot: warning: "+w, lineWidth, []string{fix}))
		case c.g.logFormat == "text":
			warn(c.stderr, "snapshot", w)
		default:
			c.log.Warn("snapshot warning", "snapshot_id", id, "warning", w)
		}
	}
}

// addFromREST records, when --connect-url is given, each connector's
// plugin version and names every sink connector Connect runs that the
// capture left out (capture.AddFromREST).
func (c *snapshotCmd) addFromREST(ctx context.Context, snap *snapshot.Snapshot) error {
	if !c.g.connect.given() {
		return nil
	}
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	capture.AddFromREST(ctx, rc, snap)
	return nil
}
