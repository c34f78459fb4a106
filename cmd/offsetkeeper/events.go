package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// eventsCommand is the events entry of the command table (main.go).
var eventsCommand = commandInfo{
	name:    "events",
	summary: "list the resets the daemon's journal caught (tombstoned or rewound offsets, deleted groups and connectors), each with the restore that undoes it",
	usage: `[--since TIME] [--connector NAME]... [--output text|json]

Lists, oldest first, the resets the journal recorded: source keys
tombstoned (source-tombstoned), source offsets rewritten to a position
behind (source-rewound), sink group offsets deleted or the group deleted
(sink-deleted), sink offsets moved backwards (sink-rewound), connectors
deleted (connector-deleted). Each line gives the time, connector, kind and
how many offsets it touched, and the command that puts that connector back
as it was just before: offsetkeeper restore --at <moment> --connector NAME.
TIME is RFC 3339 or a negative duration from now (-24h); default -24h.`,
	noKafka: true,
	new:     func(e *env) command { return &eventsCmd{env: e} },
}

type eventsCmd struct {
	*env
	since      string
	connectors listFlag
	output     string
}

func (c *eventsCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.since, "since", "-24h", "list events at or after this moment: RFC 3339 or a negative duration from now")
	fs.Var(&c.connectors, "connector", "only events of this connector; repeatable")
	fs.StringVar(&c.output, "output", "text", "output format: text or json")
}

// eventJSON is one event as --output json prints it.
type eventJSON struct {
	snapshot.Event
	Undo string `json:"undo"`
}

func (c *eventsCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	since, err := parseAt("since", c.since, time.Now())
	if err != nil {
		return err
	}
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	evs, err := store.Events(ctx, since)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, n := range c.connectors {
		keep[n] = true
	}
	out := []eventJSON{}
	for _, e := range evs {
		if len(keep) == 0 || keep[e.Connector] {
			out = append(out, eventJSON{Event: e, Undo: undoCommand(e)})
		}
	}
	if c.output == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(out) == 0 {
		fmt.Fprintf(c.stdout, "no resets since %s\n", since.UTC().Format(time.RFC3339))
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tCONNECTOR\tKIND\tCOUNT\tUNDO")
	for _, e := range out {
		undo := e.Undo
		if e.UndoGone != "" {
			undo = "no longer possible: " + e.UndoGone
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", e.Time.UTC().Format(time.RFC3339Nano), e.Connector, e.Kind, e.Count, undo)
	}
	return tw.Flush()
}

// undoCommand is the restore that puts e's connector back as it was just
// before e.
func undoCommand(e snapshot.Event) string {
	return fmt.Sprintf("offsetkeeper restore --at %s --connector %s", e.Before.UTC().Format(time.RFC3339Nano), shellQuote(e.Connector))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
