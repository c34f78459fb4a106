package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// checkCommand is the check entry of the command table (main.go).
var checkCommand = commandInfo{
	name:    "check",
	summary: "check the live cluster's sink connectors for the ways they lose offsets unasked: offsets about to expire or gone, sink topics recreated, offsets below the log start; exit 1 when any applies",
	usage: `[--connector NAME]... [--output text|json]

Compares the live cluster with the newest full snapshot in the store and
reports, per sink connector:
  offsets-expire      its group has no members (the connector is STOPPED, PAUSED
                      long enough, or its tasks failed): Kafka deletes its committed
                      offsets offsets.retention.minutes (read from a broker) after
                      the group became Empty, unless the connector is resumed
  offsets-gone        its group held offsets in the snapshot and holds none now
                      (expired or deleted), with the restore that brings them back
                      (and, with a Connect URL, resumes the connector: --start)
  topic-recreated     a sink topic was deleted and created again since the snapshot
                      (its topic ID changed), with the restore that translates the
                      offsets onto the new topic by time
  below-log-start     a committed offset is below its partition's log start:
                      retention or DeleteRecords removed records the connector had
                      not read; on resume it resets by auto.offset.reset
Exit 0 when none applies, 1 when any does (or the check cannot run), so a
cron job or CI can gate on it. The commands printed run as printed.`,
	new: func(e *env) command { return &checkCmd{env: e} },
}

type checkCmd struct {
	*env
	connectors listFlag
	output     string
}

func (c *checkCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "only this connector; repeatable")
	fs.StringVar(&c.output, "output", "text", "output format: text or json (see docs/json-output.md)")
}

// checkResult is check --output json.
type checkResult struct {
	Snapshot  string `json:"snapshot"`
	ClusterID string `json:"cluster_id"`
	// RetentionMinutes is the brokers' offsets.retention.minutes, 0 when
	// it could not be read (offsets-expire is then not checked).
	RetentionMinutes int64              `json:"offsets_retention_minutes"`
	Traps            []restore.SinkTrap `json:"traps"`
	Warnings         []string           `json:"warnings"`
}

// errTraps is check's answer when a trap applies.
var errTraps = errors.New("sink offsets at risk")

func (c *checkCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	infos, err := st.Snapshots().List(ctx)
	if err != nil {
		return err
	}
	var snap *snapshot.Snapshot
	res := checkResult{Traps: []restore.SinkTrap{}, Warnings: []string{}}
	if latest := capture.LatestFull(infos); latest != nil {
		if snap, _, err = st.Snapshots().GetWith(ctx, latest.ID, nil); err != nil {
			return fmt.Errorf("read snapshot %s: %w", latest.ID, err)
		}
		res.Snapshot = snap.ID
	} else {
		res.Warnings = append(res.Warnings, "the store holds no full snapshot: recreated topics and offsets gone are not checked; take one with 'offsetkeeper snapshot'")
	}
	cl, opts, err := c.g.kafkaClient(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	opts.Connectors = c.connectors
	live, err := capture.Capture(ctx, cl, opts)
	if err != nil {
		return fmt.Errorf("read live state: %w", kafkaconf.DescribeError(err))
	}
	res.ClusterID = live.ClusterID
	retention, err := capture.ReadOffsetsRetention(ctx, kadm.NewClient(cl))
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("offsets expiry is not checked: %v", kafkaconf.DescribeError(err)))
	}
	res.RetentionMinutes = int64(retention / time.Minute)
	if snap != nil && len(c.connectors) > 0 {
		snap = snap.Filter(c.connectors)
	}
	if snap != nil {
		// The snapshot's sink topics, whether live groups still hold
		// offsets for them or not (a recreated topic lost them).
		ts, warnings := liveTopicIDs(ctx, cl, snap, live)
		live.SinkTopics = append(live.SinkTopics, ts...)
		res.Warnings = append(res.Warnings, warnings...)
	}
	res.Traps = append(res.Traps, restore.FindSinkTraps(snap, live, retention, time.Now(), c.g.commandSettings())...)
	if rc, err := c.g.connect.client(); err == nil && rc != nil {
		// A stopped sink's offsets expire unless it is resumed: the
		// command that resumes it (an orphaned group has no connector,
		// and its own advice).
		for i := range res.Traps {
			if t := &res.Traps[i]; t.Kind == restore.TrapExpiry && t.Command == "" && t.Delete == "" && t.Connector != "" {
				t.Command = restore.ResumeCommand(rc, t.Connector)
			}
		}
	}
	if c.output == "json" {
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
	} else {
		c.print(res)
	}
	if len(res.Traps) > 0 {
		return fmt.Errorf("%w: %s", errTraps, plural(len(res.Traps), "trap applies", "traps apply"))
	}
	return nil
}

// liveTopicIDs reads the IDs of snap's sink topics that live does not
// record (no live group holds offsets for them).
func liveTopicIDs(ctx context.Context, cl *kgo.Client, snap, live *snapshot.Snapshot) ([]snapshot.SinkTopic, []string) {
	var names []string
	for _, t := range snap.SinkTopics {
		if _, ok := live.SinkTopic(t.Name); !ok {
			names = append(names, t.Name)
		}
	}
	return capture.ReadSinkTopics(ctx, kadm.NewClient(cl), names)
}

// print writes res for a person, within 120 columns.
func (c *checkCmd) print(res checkResult) {
	against := "no snapshot"
	if res.Snapshot != "" {
		against = "snapshot " + res.Snapshot
	}
	fmt.Fprintf(c.stdout, "check: cluster %s against %s\n", res.ClusterID, against)
	for _, w := range res.Warnings {
		fmt.Fprintln(c.stdout, english.Wrap("warning: "+w, 120, "  "))
	}
	for _, t := range res.Traps {
		who := t.Connector
		if who == "" {
			who = t.Group
		}
		fmt.Fprintln(c.stdout, english.Wrap(fmt.Sprintf("%s  %s: %s", t.Kind, who, t.Message), 120, "  "))
		if t.Delete != "" { // an orphaned group, deleted on purpose
			fmt.Fprintln(c.stdout, english.Continue(t.Delete, lineWidth, "  delete: ", "      "))
		}
		if t.Command != "" {
			fmt.Fprintf(c.stdout, "  fix: %s\n", t.Command)
		}
	}
	if len(res.Traps) == 0 {
		fmt.Fprintln(c.stdout, "ok: no sink offsets at risk")
	}
}
