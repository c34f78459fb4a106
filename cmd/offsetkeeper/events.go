package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
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
deleted (connector-deleted), and an offsets or config topic deleted or
deleted and created again, per connector whose offsets or config it held
(offsets-topic-deleted, config-topic-deleted). The undo of a connector
or config gone creates the connector again (--create-connectors, with a
Connect URL in the settings). offsetkeeper's own restores are no resets:
each is listed as "restored (undo ID)" with the restore of its undo
snapshot that rolls it back. Each gives the time, connector, kind and how
many offsets it touched, the moment just before it (the last instant
before its first record) and the restore that puts that connector back
as it was then, in two forms that run as printed: "check" (--dry-run,
writes nothing) and "undo" (with a Connect URL in the settings it stops
the connector first and resumes it: --stop-connectors --resume). The
"after:" line is the diff that shows no difference once the undo ran. The
commands repeat the settings given to events on its command line (--store,
--brokers, --worker-config, ...), not those from the environment nor
secrets. TIME is RFC 3339 or a negative duration from now (-24h); default
-24h.

Resets are caught only while 'offsetkeeper daemon' runs with
--journal-interval above 0: on a store without a journal, events says so
and exits 1.`,
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

// eventJSON is one event as --output json prints it: Undo is the real
// restore, UndoDryRun its dry run (Commands.Run and DryRun).
type eventJSON struct {
	snapshot.Event
	Undo       string `json:"undo"`
	UndoDryRun string `json:"undo_dry_run"`
	// Cluster is the cluster whose journal caught the event, in a store
	// the daemons of several clusters share (events_cluster.go).
	Cluster  string `json:"cluster_id,omitempty"`
	settings restore.CommandSettings
	// Note is what to know before the undo, when something: for the
	// expiry of a group whose connector is gone, what to do instead of
	// resuming it (restore.Orphaned).
	Note string `json:"note,omitempty"`
	// Delete, with Note, deletes an orphaned group (restore.Orphan).
	Delete string `json:"delete,omitempty"`
}

// errNoJournal is events' answer on a store without a journal.
var errNoJournal = errors.New("resets are caught only while 'offsetkeeper daemon' runs with --journal-interval above 0 (--journal-interval 1s, say) and reads the offsets topics (a daemon with --capture-via connect keeps no journal); start it so, and events lists the resets from then on")

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
	evs, err := store.Journal().Events(ctx, since)
	if err != nil {
		return err
	}
	l, err := store.Journal().List(ctx)
	if err != nil {
		return err
	}
	if len(evs) == 0 && len(l.Epochs) == 0 {
		return fmt.Errorf("list resets: store %s holds no journal: %w", c.g.store, errNoJournal)
	}
	broken := c.brokenEpochs(l, since) // events_broken.go
	keep := map[string]bool{}
	for _, n := range c.connectors {
		keep[n] = true
	}
	settings := c.g.commandSettings()
	clusterOf, err := epochClusters(ctx, store)
	if err != nil {
		return err
	}
	all, err := c.allEvents(ctx, store, evs) // events_sink.go
	if err != nil {
		return err
	}
	out := []eventJSON{}
	for _, e := range evs {
		if len(keep) == 0 || keep[e.Connector] {
			s := settings
			s.FromCluster = clusterOf[e.Epoch]
			if o, ok := sinkExpiryCommands(s, e, orphanOf(all, e)); ok {
				out = append(out, eventJSON{Event: e, Undo: o.Commands.Run, UndoDryRun: o.Commands.DryRun, Note: o.Note, Delete: o.Delete, Cluster: s.FromCluster, settings: s})
				continue
			}
			cmds := undoCommands(s, e)
			out = append(out, eventJSON{Event: e, Undo: cmds.Run, UndoDryRun: cmds.DryRun, Cluster: s.FromCluster, settings: s})
		}
	}
	if c.output == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		warnBroken(c.stderr, broken)
		return enc.Encode(out)
	}
	defer warnBroken(c.stdout, broken)
	if len(out) == 0 {
		fmt.Fprintf(c.stdout, "no resets since %s\n", since.UTC().Format(time.RFC3339))
		return nil
	}
	c.print(out, settings)
	if clusterOf != nil {
		fmt.Fprintln(c.stdout, wrapNote("note: the store holds the journals of several clusters (a standby's daemon shares it): "+
			"each event's commands read the journal of the cluster that saw it (--from-cluster) and write to the brokers given here; "+
			"run them with that cluster's settings"))
	}
	if stop := settings.StopFirst(); stop != "" {
		fmt.Fprintln(c.stdout, stop)
	}
	return nil
}

// print writes the text form of the events in out, each with the
// commands that undo it (or roll back the tool's own restore).
func (c *eventsCmd) print(out []eventJSON, settings restore.CommandSettings) {
	for _, e := range out {
		group := ""
		if e.Group != "" && e.Group != e.Connector {
			group = " (group " + e.Group + ")"
		}
		if e.Kind == snapshot.EventRestored {
			// The tool's own restore: no reset. Its undo rolls it back.
			fmt.Fprintf(c.stdout, "%s  %s  restored (undo %s)\n", restore.FormatMoment(e.Time), e.Connector, e.RestoreID)
			fmt.Fprintf(c.stdout, "  roll back: %s\n", e.Undo)
			continue
		}
		what := plural(e.Count, "offset", "offsets")
		if snapshot.ConfigLost(e.Kind) {
			what = "its config" // the count is 1, the config record
		}
		fmt.Fprintf(c.stdout, "%s  %s%s  %s  %s\n", restore.FormatMoment(e.Time), e.Connector, group, e.Kind, what)
		if printSinkExpiring(c.stdout, e) {
			continue
		}
		fmt.Fprintf(c.stdout, "  just before: %s\n", restore.FormatMoment(e.Before))
		if e.UndoGone != "" {
			fmt.Fprintf(c.stdout, "  undo: no longer possible: %s\n", e.UndoGone)
			continue
		}
		if e.Cluster != "" {
			fmt.Fprintf(c.stdout, "  cluster: %s\n", e.Cluster)
		}
		if e.Note != "" { // an orphaned group's expiry (events_sink.go)
			printOrphanNote(c.stdout, e)
		} else if note := e.settings.UndoNote(e.Kind); note != "" {
			fmt.Fprintf(c.stdout, "  note:  %s\n", note)
		}
		fmt.Fprintf(c.stdout, "  check: %s\n", e.UndoDryRun)
		fmt.Fprintf(c.stdout, "  undo:  %s\n", e.Undo)
		fmt.Fprintf(c.stdout, "  after: %s\n", e.settings.Diff("", e.Before, e.Connector))
	}
}

// undoCommands is the restore that puts e's connector back as it was just
// before e.
func undoCommands(s restore.CommandSettings, e snapshot.Event) restore.Commands {
	if o, ok := sinkExpiryCommands(s, e, orphan{}); ok {
		return o.Commands
	}
	if e.Kind == snapshot.EventRestored {
		return s.Snapshot(e.RestoreID, e.Connector)
	}
	return s.Undo(e.Kind, e.Before, e.Connector)
}
