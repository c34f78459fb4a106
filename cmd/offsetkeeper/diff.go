package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// diffCommand is the diff entry of the command table (main.go).
var diffCommand = commandInfo{
	name:    "diff",
	summary: "compare a snapshot with another snapshot or with the live cluster, offset by offset",
	usage: `<ID|latest>|--at TIME [<ID>|--at TIME2|--live] [--connector NAME]... [--output text|json] [--exit-code]

Compares the first snapshot (old) with the second one, or with the live
cluster when no second ID is given (--live says so explicitly), per connector
and partition: sink offsets that moved forward or backward, source keys whose
value changed, and offsets that appeared or vanished. --output json prints a
JSON array of changes. The exit code is 0 whether or not they differ; with
--exit-code it is 1 when they differ, like git diff --exit-code. --at TIME
stands for the state at a moment from the journal (RFC 3339 or -15m; see
docs/journal.md): diff --at T --live, diff --at T1 --at T2, diff ID --at T.`,
	new: func(e *env) command { return &diffCmd{env: e} },
}

// errDiffers is returned with --exit-code when the two sides differ.
var errDiffers = errors.New("the snapshots differ (--exit-code)")

type diffCmd struct {
	*env
	connectors listFlag
	live       bool
	output     string
	exitCode   bool
	timeout    time.Duration
	at         listFlag
	st         *store.Store // for the records of restores that did not finish
	// fromCluster is --from-cluster (see at_cluster.go).
	fromCluster string
}

func (c *diffCmd) Flags(fs *flag.FlagSet) {
	fs.Var(&c.connectors, "connector", "compare only this connector; repeatable (default every connector on either side)")
	fs.BoolVar(&c.live, "live", false, "compare with the live cluster (the default when only one ID is given)")
	fs.StringVar(&c.output, "output", "text", "output format: text or json (an array of changes)")
	fs.BoolVar(&c.exitCode, "exit-code", false, "exit 1 when there are differences (default: exit 0 either way)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.Var(&c.at, "at", "compare the state at this moment (RFC 3339 or -15m; from the journal) instead of a snapshot; once for the old side, twice for both")
	registerFromCluster(fs, &c.fromCluster)
	c.g.connect.register(fs)
}

func (c *diffCmd) Run(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0 && len(c.at) == 0:
		return usagef("missing snapshot ID (or latest), or --at TIME")
	case len(args) > 2:
		return usagef("unexpected argument %q", args[2])
	case len(args)+len(c.at) > 2:
		return usagef("diff compares two sides: give at most two of snapshot IDs and --at TIME")
	case len(args)+len(c.at) == 2 && c.live:
		return usagef("give a second snapshot ID or --live, not both")
	case c.output != "text" && c.output != "json":
		return usagef("--output %q: want text or json", c.output)
	}
	if err := checkFromCluster(c.fromCluster, len(c.at) > 0); err != nil {
		return err
	}
	rc, err := c.g.connect.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	c.st = st
	sides, err := c.sides(ctx, st, args)
	if err != nil {
		return err
	}
	a := sides[0]
	b, bName, err := c.other(ctx, a, sides)
	if err != nil {
		return err
	}
	compare, leftOut := diffScope(a, b, c.connectors)
	var changes []restore.Change
	if len(compare) > 0 || len(leftOut) == 0 {
		changes = restore.Diff(a, b, compare)
	}
	if len(leftOut) > 0 {
		// On stderr with --output json, whose stdout is the array alone.
		w := c.stdout
		if c.output == "json" {
			w = c.stderr
		}
		defer fmt.Fprintf(w, "note: left out %s that only one side holds (a scoped or undo snapshot holds only its scope): %s\n",
			plural(len(leftOut), "connector", "connectors"), strings.Join(leftOut, ", "))
	}
	if err := c.print(ctx, rc, diffSides{a, b, bName, len(sides) == 1}, changes); err != nil {
		return err
	}
	c.printSinkGuard(ctx, diffSides{a, b, bName, len(sides) == 1})
	c.printStandby(ctx, diffSides{a, b, bName, len(sides) == 1}, compare, changes)
	if len(changes) == 0 && len(sides) == 1 && c.output == "text" {
		resetHint(ctx, c.stdout, st, a, c.connectors, c.g.commandSettings())
	}
	if c.exitCode && len(changes) > 0 {
		return errDiffers
	}
	return nil
}

// diffSides are what a diff compares: a and b, named bName; with live, b
// is the live state.
type diffSides struct {
	a, b  *snapshot.Snapshot
	bName string
	live  bool
}

// print writes the changes between the sides as text or JSON.
func (c *diffCmd) print(ctx context.Context, rc *connectrest.Client, s diffSides, changes []restore.Change) error {
	a, b, bName := s.a, s.b, s.bName
	if c.output == "json" {
		if changes == nil {
			changes = []restore.Change{}
		}
		if err := writeJSON(c.stdout, changes); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.stdout, "diff %s -> %s\n", a.ID, bName)
		if a.ClusterID != b.ClusterID {
			fmt.Fprintln(c.stdout, wrapNote(fmt.Sprintf("note: %s is from cluster %q, %s from cluster %q", a.ID, a.ClusterID, bName, b.ClusterID)))
		}
		if rc != nil {
			if err := printStates(ctx, c.stdout, rc, changes, c.connectors, s); err != nil {
				return err
			}
		}
		if err := restore.PrintChanges(c.stdout, changes); err != nil {
			return err
		}
	}
	return nil
}

// sides reads the snapshots named, then the states --at names, in order.
func (c *diffCmd) sides(ctx context.Context, st *store.Store, args []string) ([]*snapshot.Snapshot, error) {
	var out []*snapshot.Snapshot
	for _, ref := range args {
		s, _, err := st.Snapshots().For(c.connectors).GetWith(ctx, ref, nil)
		if err != nil {
			return nil, fmt.Errorf("read snapshot %q: %w", ref, err)
		}
		out = append(out, s)
	}
	w := c.stdout
	if c.output == "json" {
		w = c.stderr
	}
	pick, err := c.pick(ctx, st, out)
	if err != nil {
		return nil, err
	}
	for _, at := range c.at {
		s, err := c.g.stateAt(ctx, w, st, at, pick, args)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// other is the second side of the diff of a: the second of sides, or the
// live cluster. It returns it and the name to print for it.
func (c *diffCmd) other(ctx context.Context, a *snapshot.Snapshot, sides []*snapshot.Snapshot) (*snapshot.Snapshot, string, error) {
	if len(sides) == 2 {
		return sides[1], sides[1].ID, nil
	}
	if a.ViaREST() {
		return c.liveREST(ctx, a)
	}
	cl, opts, err := c.g.kafkaClient(ctx)
	if err != nil {
		return nil, "", err
	}
	defer cl.Close()
	recoverInterrupted(ctx, cl, c.st, c.stderr, c.log)
	opts.Connectors = liveScope(a, c.connectors)
	b, err := restore.CaptureLive(ctx, cl, a, restore.Options{Options: opts})
	if err != nil {
		return nil, "", fmt.Errorf("read live state: %w", kafkaconf.DescribeError(err))
	}
	// As the workers read (workerview.go).
	rc, err := c.g.connect.client()
	if err != nil {
		return nil, "", err
	}
	readAsWorkers(ctx, c.stderr, cl, c.g.workerRead(ctx, rc), b, opts.Connectors)
	return b, "live (cluster " + b.ClusterID + ")", nil
}

// liveREST is the live side of the diff of a snapshot captured through the
// Connect REST API: a capture through the same API (--connect-url), whose
// keys are in the same normalised form. No broker is asked.
func (c *diffCmd) liveREST(ctx context.Context, a *snapshot.Snapshot) (*snapshot.Snapshot, string, error) {
	rc, err := c.g.connect.client()
	if err != nil {
		return nil, "", err
	}
	if rc == nil {
		return nil, "", usagef("snapshot %s was captured through the Connect REST API: diff it with the live state through the same API, give --connect-url (or give a second snapshot ID)", a.ID)
	}
	b, err := capture.CaptureREST(ctx, rc, capture.RESTOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("read live state through the Connect REST API: %w", err)
	}
	if scope := liveScope(a, c.connectors); len(scope) > 0 {
		b = b.Filter(scope)
	}
	return b, "live through the Connect REST API (cluster " + b.ClusterID + ")", nil
}

// liveScope is what a diff with the live cluster captures: the connectors
// named, or those of a scoped or undo snapshot, or (nil) the whole cluster.
func liveScope(a *snapshot.Snapshot, only []string) []string {
	if len(only) > 0 {
		return only
	}
	return a.Scope
}

// diffScope returns the connectors a diff of a and b compares, those both
// sides hold, and those it leaves out because only one side holds them: a
// full snapshot holds every connector, a scoped or undo snapshot the
// connectors of its Scope. only, when given, limits both to those named.
// When both sides are full, compare is only (nil: every connector) and
// nothing is left out.
func diffScope(a, b *snapshot.Snapshot, only []string) (compare, leftOut []string) {
	if len(a.Scope) == 0 && len(b.Scope) == 0 {
		return only, nil
	}
	holds := func(s *snapshot.Snapshot, name string) bool {
		return len(s.Scope) == 0 || slices.Contains(s.Scope, name)
	}
	names := only
	if len(names) == 0 {
		set := map[string]bool{}
		for _, s := range []*snapshot.Snapshot{a, b} {
			for _, n := range s.Scope {
				set[n] = true
			}
			for _, conn := range s.Connectors {
				set[conn.Name] = true
			}
			for _, g := range s.SinkGroups {
				if g.Connector != "" {
					set[g.Connector] = true
				}
			}
			for _, o := range s.SourceTable().All() {
				if o.Connector != "" {
					set[o.Connector] = true
				}
			}
		}
		for n := range set {
			names = append(names, n)
		}
		slices.Sort(names)
	}
	for _, n := range names {
		if holds(a, n) && holds(b, n) {
			compare = append(compare, n)
		} else {
			leftOut = append(leftOut, n)
		}
	}
	return compare, leftOut
}
