package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

func init() {
	register(commandInfo{
		name:    "show",
		summary: "print a snapshot: a summary, the whole document, or Connect's REST offsets body for one connector",
		usage:   "<ID|latest> [--connector NAME]... [--output text|json|connect-rest]",
		noKafka: true,
		new:     func(e *env) command { return &showCmd{env: e} },
	})
}

type showCmd struct {
	*env
	connectors listFlag
	output     string
}

func (c *showCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "show only this connector; repeatable")
	fs.StringVar(&c.output, "output", "text", "output format: text, json (the whole document) or connect-rest (the body of GET /connectors/NAME/offsets; needs one --connector)")
}

func (c *showCmd) Run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		if len(args) == 0 {
			return usagef("missing snapshot ID (or latest)")
		}
		return usagef("unexpected argument %q", args[1])
	}
	switch c.output {
	case "text", "json", "connect-rest":
	default:
		return usagef("--output %q: want text, json or connect-rest", c.output)
	}
	if c.output == "connect-rest" && len(c.connectors) != 1 {
		return usagef("--output connect-rest prints one connector's offsets: give exactly one --connector")
	}
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	snap, _, err := store.Get(ctx, args[0])
	if err != nil {
		return err
	}
	for _, name := range c.connectors {
		if _, ok := snap.Connector(name); !ok {
			return fmt.Errorf("connector %q is not in snapshot %s; 'offsetkeeper show %s' lists its connectors", name, snap.ID, snap.ID)
		}
	}
	switch c.output {
	case "connect-rest":
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
	}
	return showText(c.stdout, snap, c.connectors)
}

func showText(w io.Writer, s *snapshot.Snapshot, only []string) error {
	fmt.Fprintf(w, "snapshot %s\n  created   %s\n  reason    %s\n  cluster   %s\n  program   %s\n", s.ID, s.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), s.Reason, s.ClusterID, s.ProgramVersion)
	if len(s.Scope) > 0 {
		fmt.Fprintf(w, "  scope     %s\n", strings.Join(s.Scope, ", "))
	}
	for _, t := range s.Topics {
		var n int64
		for _, p := range t.Partitions {
			n += p.EndOffset
		}
		fmt.Fprintf(w, "  topic     %s (%s, %d partitions, read to offsets summing %d)\n", t.Name, t.Role, len(t.Partitions), n)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "  warning   %s\n", warn)
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
		fmt.Fprintf(tw, "\nconnector %s\t%s\tstate %s\ttasks %d\t%s\n", conn.Name, conn.Type, state, conn.Tasks, conn.Class)
		for _, o := range s.SourceOffsetsOf(conn.Name) {
			fmt.Fprintf(tw, "  %s/%d\t%s\t-> %s\n", o.Topic, o.Partition, o.SourcePartition, o.Value)
		}
		if g, ok := s.SinkGroupOf(conn.Name); ok {
			fmt.Fprintf(tw, "  group %s\t%s\t%d members\n", g.Group, g.State, g.Members)
			for _, o := range g.Offsets {
				fmt.Fprintf(tw, "  %s/%d\t%d\n", o.Topic, o.Partition, o.Offset)
			}
		}
	}
	if len(only) == 0 {
		for _, o := range s.SourceOffsets {
			if o.Connector == "" {
				fmt.Fprintf(tw, "\nunparsed %s/%d@%d\t%q\t%s\n", o.Topic, o.Partition, o.Offset, []byte(o.Key), o.ParseError)
			}
		}
		for _, g := range s.SinkGroups {
			if g.Connector == "" {
				fmt.Fprintf(tw, "\ngroup %s (no connector)\t%s\t%d members\t%d offsets\n", g.Group, g.State, g.Members, len(g.Offsets))
			}
		}
	}
	return tw.Flush()
}
