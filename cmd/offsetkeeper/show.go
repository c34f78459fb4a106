package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore/offsetsfile"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// showCommand is the show entry of the command table (main.go).
var showCommand = commandInfo{
	name:    "show",
	summary: "print a snapshot: a summary, the whole document, Connect's REST offsets bodies, sink offsets as CSV, or a standalone worker's offsets file",
	usage: `<ID|latest>|--at TIME [--connector NAME]... [--output text|json|connect-rest|connect-create|csv|strimzi-configmap|standalone-file] [--output-dir DIR] [--connect-url URL...]

--output connect-rest prints, for one --connector, exactly the body of
Connect's GET /connectors/NAME/offsets (feed it to PATCH as is); with
--output-dir it writes one <connector>.json per connector (every connector of
the snapshot, or those named), each byte of the name other than letters,
digits, '-', '_' and '.' written as %XX. --output csv prints the sink groups'
offsets as kafka-consumer-groups.sh --reset-offsets --from-file reads them:
group,topic,partition,offset, no header. --output connect-create prints, for
one --connector, the body of Connect's POST /connectors that creates it
with the snapshot's config (a config with secret-looking values needs
--show-secrets). With
--connect-url the text output
shows each connector's REST state next to the snapshot's. --output
strimzi-configmap prints, for one --connector, a ConfigMap that Strimzi's
KafkaConnector spec.alterOffsets.fromConfigMap accepts as is (the REST body
under offsets.json; see docs/restore.md). --output standalone-file writes
the source offsets (every connector, or those named) as the offsets file of
a standalone worker (offset.storage.file.filename: a Java-serialized
HashMap<byte[],byte[]> of the exact key and value bytes), binary, to a
redirected stdout: show ID --output standalone-file > connect.offsets.
--at TIME shows the state at a moment from the journal (RFC 3339 or -15m;
see docs/journal.md) instead of a snapshot.

The text output lists each connector's config as the snapshot holds it
("config KEY = VALUE"); --output json holds it as "config". Values of keys
whose names look like secrets (containing password, passwd, secret, token,
credential, an api key such as api.key or apikey, sasl.jaas.config or
basic.auth.user.info; not key.converter and the like) are printed as
******** in both, unless --show-secrets; a value that is only ConfigProvider
placeholders (${file:...}) is printed as it is.`,
	noKafka: true,
	new:     func(e *env) command { return &showCmd{env: e} },
}

type showCmd struct {
	*env
	connectors listFlag
	output     string
	outputDir  string
	strimzi    strimziFlags
	at         string
	// fromCluster is --from-cluster (see at_cluster.go).
	fromCluster string
	// showSecrets prints connector config values that look like secrets
	// (see secretKey); they are masked otherwise.
	showSecrets bool
}

func (c *showCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "show only this connector; repeatable")
	fs.StringVar(&c.output, "output", "text", "output format: text, json (the whole document), connect-rest (the body of GET /connectors/NAME/offsets; one --connector, or --output-dir), connect-create (the body of POST /connectors that creates the connector with the snapshot's config; one --connector), csv (sink offsets as group,topic,partition,offset), strimzi-configmap (a ConfigMap for Strimzi's alterOffsets; one --connector) or standalone-file (the source offsets as a standalone worker's offset.storage.file.filename; binary, so not to a terminal)")
	fs.StringVar(&c.outputDir, "output-dir", "", "with --output connect-rest: write <connector>.json into this directory for every connector (or those named with --connector)")
	fs.StringVar(&c.at, "at", "", "show the state at this moment instead of a snapshot: RFC 3339 or a negative duration from now (-15m); from the journal")
	fs.BoolVar(&c.showSecrets, "show-secrets", false, "print connector config values whose keys look like secrets (password, secret, token, credential, api key, ...) as they are, in the text and json output; they are masked otherwise")
	registerFromCluster(fs, &c.fromCluster)
	c.g.connect.register(fs)
	c.strimzi.register(fs)
}

func (c *showCmd) Run(ctx context.Context, args []string) error {
	if c.at != "" && len(args) > 0 {
		return usagef("--at shows the state at a moment: give no snapshot ID with it")
	}
	if err := checkFromCluster(c.fromCluster, c.at != ""); err != nil {
		return err
	}
	if len(args) != 1 && c.at == "" {
		if len(args) == 0 {
			return usagef("missing snapshot ID (or latest)")
		}
		return usagef("unexpected argument %q", args[1])
	}
	switch c.output {
	case "text", "json", "connect-rest", "connect-create", "csv", "strimzi-configmap", "standalone-file":
	default:
		return usagef("--output %q: want text, json, connect-rest, connect-create, csv, strimzi-configmap or standalone-file", c.output)
	}
	if c.output == "standalone-file" && isTerminal(c.stdout) {
		return usagef("--output standalone-file writes a binary file: redirect it (offsetkeeper show ID --output standalone-file > connect.offsets)")
	}
	switch {
	case c.outputDir != "" && c.output != "connect-rest":
		return usagef("--output-dir goes with --output connect-rest")
	case c.output == "connect-rest" && c.outputDir == "" && len(c.connectors) != 1:
		return usagef("--output connect-rest prints one connector's offsets: give exactly one --connector, or --output-dir DIR for a file per connector")
	case c.output == "connect-create" && len(c.connectors) != 1:
		return usagef("--output connect-create prints one connector: give exactly one --connector")
	case c.output == "strimzi-configmap" && len(c.connectors) != 1:
		return usagef("--output strimzi-configmap prints one connector's offsets: give exactly one --connector")
	}
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	snap, err := c.load(ctx, st, args)
	if err != nil {
		return err
	}
	for _, name := range c.connectors {
		if _, ok := snap.Connector(name); !ok {
			return fmt.Errorf("connector %q is not in snapshot %s; 'offsetkeeper show %s' lists its connectors", name, snap.ID, snap.ID)
		}
	}
	if c.output == "connect-create" {
		return writeConnectCreate(c.stdout, snap, c.connectors[0], c.showSecrets)
	}
	if !c.showSecrets {
		snap = maskSecrets(snap)
	}
	switch c.output {
	case "connect-rest":
		if c.outputDir != "" {
			return exportConnectREST(c.stdout, c.stderr, snap, c.connectors, c.outputDir)
		}
		body, err := snap.ConnectREST(c.connectors[0])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.stdout, "%s\n", body)
		return err
	case "json":
		if len(c.connectors) > 0 {
			snap = snap.Filter(c.connectors)
		}
		return snap.Encode(c.stdout)
	case "csv":
		return exportCSV(c.stdout, c.stderr, snap, c.connectors)
	case "strimzi-configmap":
		return c.strimzi.write(c.stdout, snap, c.connectors[0])
	case "standalone-file":
		_, err := c.stdout.Write(offsetsfile.AppendStandaloneFile(nil, offsetsfile.StandaloneEntries(snap, c.connectors)))
		return err
	}
	var rest map[string]connectrest.Status
	if rc != nil {
		if rest, err = rc.States(ctx); err != nil {
			return err
		}
	}
	return showText(c.stdout, snap, c.connectors, rest)
}

// load reads the snapshot named, or the state --at names; how that state
// was made goes to stdout for text output and to stderr otherwise.
func (c *showCmd) load(ctx context.Context, st *store.Store, args []string) (*snapshot.Snapshot, error) {
	if c.at == "" {
		snap, _, err := st.Snapshots().For(c.connectors).GetWith(ctx, args[0], nil)
		return snap, err
	}
	w := c.stderr
	if c.output == "text" {
		w = c.stdout
	}
	return c.g.stateAt(ctx, w, st, c.at, store.ClusterPick{From: c.fromCluster}, nil)
}

// showText prints a summary of s; rest, when not nil, holds the connectors'
// REST states to show next to the snapshot's. A line wider than lineWidth
// (a long key or offset, a long config value) is broken to fit; the whole
// value is in --output json.
func showText(w io.Writer, s *snapshot.Snapshot, only []string, rest map[string]connectrest.Status) error {
	var b bytes.Buffer
	if err := showTable(&b, s, only, rest); err != nil {
		return err
	}
	_, err := io.WriteString(w, english.Fit(b.String(), lineWidth))
	return err
}

// showTable is showText before its lines are fitted to lineWidth.
func showTable(w io.Writer, s *snapshot.Snapshot, only []string, rest map[string]connectrest.Status) error {
	fmt.Fprintf(w, "snapshot %s\n  created   %s\n  reason    %s\n  cluster   %s\n  program   %s\n", s.ID, s.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), s.Reason, s.ClusterID, s.ProgramVersion)
	if len(s.Scope) > 0 {
		fmt.Fprintf(w, "  scope     %s\n", strings.Join(s.Scope, ", "))
	}
	if s.ViaREST() {
		fmt.Fprintf(w, "  captured  through the Connect REST API (%s): Connect's normalised keys, no partitions; restore with --via connect\n", s.ConnectURL)
	}
	for _, t := range s.Topics {
		var n int64
		for _, p := range t.Partitions {
			n += p.EndOffset
		}
		fmt.Fprintf(w, "  topic     %s (%s, %s, read to offsets summing %d)\n", t.Name, t.Role, plural(len(t.Partitions), "partition", "partitions"), n)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "  warning   %s\n", warn)
	}
	for _, u := range s.Unread {
		fmt.Fprintf(w, "%s\n", wrap("  unread    "+unreadText(u), lineWidth, "            "))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, conn := range s.Connectors {
		if len(only) > 0 && !slices.Contains(only, conn.Name) {
			continue
		}
		state := conn.TargetState
		if !conn.HasConfig {
			state = "no config"
		}
		if rest != nil {
			fmt.Fprintf(tw, "\nconnector %s\t%s\tstate %s\t%s\trest %s\t%s\n", conn.Name, conn.Type, state, tasksText(conn), connectrest.StateOf(rest, conn.Name), conn.Class)
		} else {
			fmt.Fprintf(tw, "\nconnector %s\t%s\tstate %s\t%s\t%s\n", conn.Name, conn.Type, state, tasksText(conn), conn.Class)
		}
		for _, k := range slices.Sorted(maps.Keys(conn.Config)) {
			fmt.Fprintf(tw, "  config %s\t= %s\n", k, conn.Config[k])
		}
		for _, o := range s.SourceOffsetsOf(conn.Name) {
			fmt.Fprintf(tw, "  %s\t%s\t-> %s\n", snapshot.Where(o.Topic, o.Partition), o.SourcePartition, o.Value)
		}
		if g, ok := s.SinkGroupOf(conn.Name); ok {
			fmt.Fprintf(tw, "  group %s%s\t%s\t%s\n", g.Group, groupTypeText(g.Type), g.State, plural(g.Members, "member", "members"))
			for _, o := range g.Offsets {
				fmt.Fprintf(tw, "  %s/%d\t%d\n", o.Topic, o.Partition, o.Offset)
			}
		}
	}
	if len(only) == 0 {
		for _, o := range s.SourceTable().All() {
			if o.Connector == "" {
				fmt.Fprintf(tw, "\nunparsed %s/%d@%d\t%q\t%s\n", o.Topic, o.Partition, o.Offset, []byte(o.Key), o.ParseError)
			}
		}
		for _, g := range s.SinkGroups {
			if g.Connector == "" {
				fmt.Fprintf(tw, "\ngroup %s%s (no connector)\t%s\t%s\t%s\n", g.Group, groupTypeText(g.Type), g.State, plural(g.Members, "member", "members"), plural(len(g.Offsets), "offset", "offsets"))
			}
		}
	}
	return tw.Flush()
}

// tasksText is the task count of the connector's latest task commit, or
// "no task commit" when the config topic has none (Tasks -1).
func tasksText(c snapshot.Connector) string {
	if c.Tasks < 0 {
		return "no task commit"
	}
	return plural(c.Tasks, "task", "tasks")
}

// isTerminal reports whether w is a terminal: a character device other
// than /dev/null (where a redirect to nowhere is fine).
func isTerminal(w io.Writer) bool {
	if c, ok := w.(*countingWriter); ok {
		w = c.w // run counts what a command prints (jsonerr.go)
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
