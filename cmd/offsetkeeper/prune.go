package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// pruneCommand is the prune entry of the command table (main.go).
var pruneCommand = commandInfo{
	name:    "prune",
	summary: "remove the snapshots a retention policy does not keep (the daemon applies the same policy after each run)",
	usage: `[--dry-run] --keep-last N | --keep-hourly N | --keep-daily N | --keep-weekly N | --keep-monthly N | --keep-within DURATION ...

The --keep-last to --keep-monthly rules count scheduled full snapshots (the
daemon's). Whatever the rules, prune keeps pinned snapshots (pin), manual
full snapshots younger than --keep-manual-within, for every reset the
journal caught younger than --keep-reset-within the snapshot (and its
journal epoch) that restore --at the moment before it reads, the base of the
newest journal epoch, and each cluster's newest full snapshot. Each line
names the rule that kept or removes the snapshot.`,
	noKafka: true,
	new:     func(e *env) command { return &pruneCmd{env: e} },
}

// policyFlags are the retention flags the daemon and prune share.
type policyFlags struct {
	last, hourly, daily, weekly, monthly int
	within                               withinFlag
	undoWithin                           undoWithinFlag
	manualWithin, resetWithin            undoWithinFlag
}

func (p *policyFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&p.last, "keep-last", 0, "keep the `N` newest full snapshots (-1: all)")
	fs.IntVar(&p.hourly, "keep-hourly", 0, "keep the newest full snapshot of each of the last `N` UTC hours that have one (-1: all)")
	fs.IntVar(&p.daily, "keep-daily", 0, "keep the newest full snapshot of each of the last `N` UTC days that have one (-1: all)")
	fs.IntVar(&p.weekly, "keep-weekly", 0, "keep the newest full snapshot of each of the last `N` ISO weeks that have one (-1: all)")
	fs.IntVar(&p.monthly, "keep-monthly", 0, "keep the newest full snapshot of each of the last `N` months that have one (-1: all)")
	fs.Var(&p.within, "keep-within", "keep every full snapshot younger than `DURATION` (36h, 7d, 2w, 1d12h)")
	p.undoWithin.d = snapshot.DefaultUndoWithin
	fs.Var(&p.undoWithin, "keep-undo-within", "keep scoped (snapshot --connector) and undo snapshots younger than `DURATION`, remove older ones; 0 keeps none. They never count for the other --keep rules, and the newest full snapshot is always kept")
	p.manualWithin.d = snapshot.DefaultManualWithin
	fs.Var(&p.manualWithin, "keep-manual-within", "keep manual full snapshots (taken by the snapshot command) younger than `DURATION`; they never take a --keep-last/-hourly/-daily/-weekly/-monthly slot; 0 keeps none by this rule")
	p.resetWithin.d = snapshot.DefaultResetWithin
	fs.Var(&p.resetWithin, "keep-reset-within", "for every reset the journal caught younger than `DURATION`, keep the snapshot and journal that restore --at the moment before it needs (and the reset in events); 0 turns the rule off")
}

// policy checks the flags and returns the policy they describe. Without a
// rule for full snapshots and without --keep-undo-within the policy is
// empty (it keeps everything).
func (p *policyFlags) policy() (snapshot.Policy, error) {
	for _, f := range []struct {
		name string
		n    int
	}{{"keep-last", p.last}, {"keep-hourly", p.hourly}, {"keep-daily", p.daily}, {"keep-weekly", p.weekly}, {"keep-monthly", p.monthly}} {
		if f.n < -1 {
			return snapshot.Policy{}, usagef("--%s %d: want a count, or -1 for all", f.name, f.n)
		}
	}
	pol := snapshot.Policy{
		Last: p.last, Hourly: p.hourly, Daily: p.daily, Weekly: p.weekly, Monthly: p.monthly,
		Within: time.Duration(p.within), UndoWithin: p.undoWithin.d,
		ManualWithin: p.manualWithin.d, ResetWithin: p.resetWithin.d,
	}
	// The default --keep-undo-within alone is no policy: a daemon without
	// --keep-* flags removes nothing.
	if noFullRule := (snapshot.Policy{UndoWithin: 0, Last: pol.Last, Hourly: pol.Hourly, Daily: pol.Daily, Weekly: pol.Weekly, Monthly: pol.Monthly, Within: pol.Within}).Empty(); noFullRule && !p.undoWithin.set {
		pol.UndoWithin = 0
	}
	return pol, nil
}

// withinFlag is a duration that also takes days and weeks.
type withinFlag time.Duration

func (w *withinFlag) String() string {
	if *w == 0 {
		return ""
	}
	return snapshot.FormatDuration(time.Duration(*w))
}

func (w *withinFlag) Set(s string) error {
	d, err := snapshot.ParseDuration(s)
	if err != nil {
		return err
	}
	*w = withinFlag(d)
	return nil
}

// undoWithinFlag is --keep-undo-within: a withinFlag with a default that
// knows whether it was given.
type undoWithinFlag struct {
	d   time.Duration
	set bool
}

func (w *undoWithinFlag) String() string {
	if w.d == 0 {
		return "0"
	}
	return snapshot.FormatDuration(w.d)
}

func (w *undoWithinFlag) Set(s string) error {
	d, err := snapshot.ParseDuration(s)
	if err != nil {
		return err
	}
	w.d, w.set = d, true
	return nil
}

type pruneCmd struct {
	*env
	dryRun bool
	output string
	keep   policyFlags
}

func (c *pruneCmd) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.dryRun, "dry-run", false, "print what would be kept and removed, and why; remove nothing")
	fs.StringVar(&c.output, "output", "text", "output format: text or json (see docs/json-output.md)")
	c.keep.register(fs)
}

// pruneDecision is one snapshot's line of prune's output.
type pruneDecision struct {
	snapshot.Info
	Action string   `json:"action"` // keep or remove
	Why    []string `json:"why"`
	// Error is why a removal failed; the snapshot is then still stored.
	Error string `json:"error,omitempty"`
}

// pruneResult is prune --output json.
type pruneResult struct {
	DryRun bool   `json:"dry_run"`
	Policy string `json:"policy"`
	Kept   int    `json:"kept"`
	// Removed counts the snapshots removed; in a dry run, those that
	// would be.
	Removed   int             `json:"removed"`
	Failed    int             `json:"failed"`
	Snapshots []pruneDecision `json:"snapshots"`
}

func (c *pruneCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.output != "text" && c.output != "json" {
		return usagef("--output %q: want text or json", c.output)
	}
	p, err := c.keep.policy()
	if err != nil {
		return err
	}
	if p.Empty() {
		return usagef("no retention rule: give at least one of --keep-last, --keep-hourly, --keep-daily, --keep-weekly, --keep-monthly, --keep-within, --keep-undo-within")
	}
	st, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	infos, err := st.Pins().Snapshots(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	jr, err := st.Snapshots().RetentionJournal(ctx, infos, p, now, nil)
	if err != nil {
		return fmt.Errorf("read the journal's resets for retention: %w", err)
	}
	infos, damaged := store.Damaged(infos)
	keep, remove, reasons := snapshot.ApplyPolicy(infos, jr, p, now)
	// A damaged object cannot be restored whatever the policy: it goes.
	if reasons == nil {
		reasons = map[string][]string{}
	}
	for _, d := range damaged {
		remove = append(remove, d)
		reasons[d.ID] = []string{"damaged: " + d.Damaged}
	}
	res := pruneResult{DryRun: c.dryRun, Policy: p.String(), Kept: len(keep)}
	removing := map[string]bool{}
	for _, s := range remove {
		removing[s.ID] = true
	}
	for _, s := range sortedByTime(keep, remove) {
		d := pruneDecision{Info: s, Action: "keep", Why: reasons[s.ID]}
		if removing[s.ID] {
			d.Action = "remove"
		}
		res.Snapshots = append(res.Snapshots, d)
	}
	if c.output == "text" {
		if err := printPrune(c.stdout, res.Snapshots); err != nil {
			return err
		}
	}
	var errs []error
	if c.dryRun {
		res.Removed = len(remove) // would be
	} else {
		errs = c.remove(ctx, st, &res)
	}
	if c.output == "json" {
		if err := writeJSON(c.stdout, res); err != nil {
			return err
		}
	} else if c.dryRun {
		fmt.Fprintln(c.stdout, wrap(fmt.Sprintf("dry run: would keep %d and remove %s (policy: %s); nothing removed", len(keep), plural(len(remove), "snapshot", "snapshots"), p), lineWidth, "  "))
	} else {
		fmt.Fprintln(c.stdout, wrap(fmt.Sprintf("kept %d, removed %s (policy: %s)", res.Kept, plural(res.Removed, "snapshot", "snapshots"), p), lineWidth, "  "))
	}
	if c.dryRun {
		return nil
	}
	c.log.Info("prune done", "kept", res.Kept, "removed", res.Removed, "failed", res.Failed, "policy", p.String())
	if len(errs) > 0 {
		return fmt.Errorf("remove %d of %s: %w", len(errs), plural(len(remove), "snapshot", "snapshots"), errors.Join(errs...))
	}
	return nil
}

// maxFailingRemovals is how many removals in a row may fail before prune
// stops trying the rest: against a stuck store each would wait the whole
// --store-timeout.
const maxFailingRemovals = 3

// remove deletes the snapshots res marks for removal, logging each with
// its kind and why, and counts what was removed and what failed.
func (c *pruneCmd) remove(ctx context.Context, st *store.Store, res *pruneResult) []error {
	errs := c.removeEach(res, func(id string) (bool, error) { return st.Pins().Pinned(ctx, id) }, func(id string) error { return st.Snapshots().Delete(ctx, id) })
	// The journal of a removed snapshot's epoch goes with it.
	epochs, err := st.Journal().Prune(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, id := range epochs {
		c.log.Info("journal removed with its base snapshot", "epoch", id)
	}
	return errs
}

// removeEach is remove's loop over the decisions, with pinned and del
// reading and deleting in the store. After maxFailingRemovals failures in
// a row it tries no more, marking each left as not tried.
func (c *pruneCmd) removeEach(res *pruneResult, pinned func(id string) (bool, error), del func(id string) error) []error {
	var errs []error
	failing := 0
	fail := func(d *pruneDecision, err error) {
		errs = append(errs, err)
		d.Error = err.Error()
		res.Failed++
	}
	for i := range res.Snapshots {
		d := &res.Snapshots[i]
		if d.Action != "remove" {
			continue
		}
		if failing >= maxFailingRemovals {
			fail(d, fmt.Errorf("remove snapshot %s: not tried: the %d removals before it failed; run prune again once the store answers", d.ID, failing))
			continue
		}
		// A pin written since the listing still keeps the snapshot.
		if p, err := pinned(d.ID); err != nil || p {
			if err != nil {
				fail(d, err)
				failing++
				continue
			}
			d.Action, d.Why = "keep", []string{"pinned"}
			res.Kept++
			continue
		}
		if err := del(d.ID); err != nil && !errors.Is(err, snapshot.ErrNotFound) {
			fail(d, err)
			failing++
			continue
		}
		failing = 0
		res.Removed++
		c.log.Info("snapshot removed", "snapshot_id", d.ID, "kind", d.Kind, "created_at", d.CreatedAt, "why", strings.Join(d.Why, ", "))
	}
	return errs
}

// printPrune prints prune's table: per snapshot, oldest first, what is
// done with it, its kind and scope, and why.
func printPrune(w io.Writer, ds []pruneDecision) error {
	// To fit 120 columns: no TIME (the ID is the time) and a CLUSTER
	// column only when the snapshots come from more than one cluster.
	clusters := map[string]bool{}
	for _, d := range ds {
		clusters[d.ClusterID] = true
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	if len(clusters) > 1 {
		fmt.Fprintln(tw, "ACTION\tID\tKIND\tSCOPE\tREASON\tCLUSTER\tWHY")
	} else {
		fmt.Fprintln(tw, "ACTION\tID\tKIND\tSCOPE\tREASON\tWHY")
	}
	for _, d := range ds {
		cluster := ""
		if len(clusters) > 1 {
			cluster = d.ClusterID + "\t"
		}
		kind := d.Kind
		if d.Damaged != "" {
			kind = "damaged"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s%s\n", d.Action, d.ID, kind, scopeText(d.Info), d.Reason, cluster, strings.Join(d.Why, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, wrapLastColumn(table.String(), lineWidth))
	return err
}

// wrapLastColumn breaks the lines of a table wider than width in its last
// column (a comma-separated list such as prune's WHY) at its commas, the
// continuation lines aligned under the column; the whole list stays in
// --output json. A column that starts too far right is left as it is.
func wrapLastColumn(table string, width int) string {
	lines := strings.SplitAfter(table, "\n")
	if len(lines) == 0 {
		return table
	}
	header := strings.TrimRight(lines[0], " \n")
	col := strings.LastIndex(header, "  ")
	if col < 0 || width-col-2 < 20 {
		return table
	}
	col += 2
	for col < len(header) && header[col] == ' ' {
		col++
	}
	var b strings.Builder
	for _, l := range lines {
		r := []rune(strings.TrimSuffix(l, "\n"))
		if len(r) <= width || len(r) <= col {
			b.WriteString(l)
			continue
		}
		b.WriteString(string(r[:col]))
		indent := "\n" + strings.Repeat(" ", col)
		n := col
		for i, item := range strings.Split(string(r[col:]), ", ") {
			w := len([]rune(item))
			switch {
			case i == 0:
			case n+2+w > width:
				b.WriteString("," + indent)
				n = col
			default:
				b.WriteString(", ")
				n += 2
			}
			// An item wider than the column alone breaks at its spaces,
			// outside parentheses.
			for j, word := range unbreakable(item) {
				ww := len([]rune(word))
				if j > 0 {
					if n+1+ww > width {
						b.WriteString(indent)
						n = col
					} else {
						b.WriteByte(' ')
						n++
					}
				}
				b.WriteString(word)
				n += ww
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// sortedByTime merges keep and remove, oldest first, as list prints them.
func sortedByTime(keep, remove []snapshot.Info) []snapshot.Info {
	all := slices.Concat(keep, remove)
	slices.SortFunc(all, func(a, b snapshot.Info) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return all
}

// unbreakable splits s at its spaces outside parentheses: "(keep-manual-within
// 0)" stays one piece.
func unbreakable(s string) []string {
	var out []string
	depth := 0
	for _, f := range strings.Fields(s) {
		if depth > 0 && len(out) > 0 {
			out[len(out)-1] += " " + f
		} else {
			out = append(out, f)
		}
		depth += strings.Count(f, "(") - strings.Count(f, ")")
		depth = max(depth, 0)
	}
	return out
}
