package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// listCommand is the list entry of the command table (main.go).
var listCommand = commandInfo{
	name:    "list",
	summary: "list stored snapshots, oldest first",
	usage:   "[--connector NAME] [--kind full|scoped|undo] [--output text|json]",
	noKafka: true,
	new:     func(e *env) command { return &listCmd{env: e} },
}

type listCmd struct {
	*env
	output    string
	connector string
	kind      string
}

func (c *listCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.output, "output", "text", "output format: text or json")
	fs.StringVar(&c.connector, "connector", "", "only the snapshots that hold this connector (every full snapshot does)")
	fs.StringVar(&c.kind, "kind", "", "only the snapshots of this kind: full, scoped or undo")
}

// keep reports whether --connector and --kind let i through.
func (c *listCmd) keep(i snapshot.Info) bool {
	return (c.kind == "" || i.EffectiveKind() == c.kind) && (c.connector == "" || i.Holds([]string{c.connector}))
}

func (c *listCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	if !slices.Contains([]string{"", snapshot.KindFull, snapshot.KindScoped, snapshot.KindUndo}, c.kind) {
		return usagef("--kind %q: want full, scoped or undo", c.kind)
	}
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	infos, err := store.Pins().Snapshots(ctx)
	if err != nil {
		return err
	}
	infos = slices.DeleteFunc(infos, func(i snapshot.Info) bool { return !c.keep(i) })
	if c.output == "json" {
		if infos == nil {
			infos = []snapshot.Info{}
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(infos)
	}
	// The journal's coverage is in list_journal.go (text only: the JSON
	// array of snapshots stays as it is).
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	// No TIME column: the ID is the UTC time the snapshot was taken, to
	// the microsecond (created_at in --output json), and the line fits
	// 120 columns. SIZE, the widest-varying number, is last so that it
	// moves no other column.
	fmt.Fprintln(tw, "ID\tREASON\tKIND\tSCOPE\tCONNECTORS\tSOURCE KEYS\tSINK GROUPS\tPIN\tSIZE")
	for _, i := range infos {
		if i.Damaged != "" {
			fmt.Fprintf(tw, "%s\t-\tdamaged\t-\t-\t-\t-\t%s\t%d\n", i.ID, pinText(i), i.Size)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\n", i.ID, i.Reason, kindText(i), scopeText(i), i.Connectors, i.SourceKeys, i.SinkGroups, pinText(i), i.Size)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printPinNotes(c.stdout, infos)
	printDamaged(c.stdout, infos)
	if err := c.coverage(ctx, store); err != nil {
		return err
	}
	return c.lastDrill(ctx, store)
}

// kindText is the KIND column of a snapshot: its kind, then "rest" for
// one captured through the Connect REST API ("full rest").
func kindText(i snapshot.Info) string {
	if i.Captured == snapshot.CapturedConnectREST {
		return i.Kind + " rest"
	}
	return i.Kind
}

// pinText is the PIN column of a snapshot: "pinned" or "-".
func pinText(i snapshot.Info) string {
	if i.Pin == nil {
		return "-"
	}
	return "pinned"
}

// printPinNotes prints, after the table, the note of every pinned
// snapshot that has one (kept out of the table to keep it narrow).
func printPinNotes(w io.Writer, infos []snapshot.Info) {
	first := true
	for _, i := range infos {
		if i.Pin == nil || i.Pin.Note == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nPinned:")
			first = false
		}
		fmt.Fprintf(w, "  %s  %s  %s\n", i.ID, i.Pin.PinnedAt.UTC().Format(time.RFC3339), i.Pin.Note)
	}
}

// scopeText is the SCOPE column of a snapshot: "all" for a full snapshot,
// else the connectors it holds.
func scopeText(i snapshot.Info) string {
	if len(i.Scope) == 0 {
		if i.Kind == snapshot.KindFull {
			return "all"
		}
		return "-"
	}
	if len(i.Scope) == 1 {
		return i.Scope[0]
	}
	// A table line fits 120 columns: the whole list is in show and
	// --output json.
	return nameList(i.Scope, scopeWidth)
}

// scopeWidth is the widest SCOPE column list and prune print.
const scopeWidth = 24
