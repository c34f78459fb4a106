package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

func init() {
	register(commandInfo{
		name:    "prune",
		summary: "remove the snapshots a retention policy does not keep (the daemon applies the same policy after each run)",
		usage:   "[--dry-run] --keep-last N | --keep-hourly N | --keep-daily N | --keep-weekly N | --keep-monthly N | --keep-within DURATION ...",
		noKafka: true,
		new:     func(e *env) command { return &pruneCmd{env: e} },
	})
}

// policyFlags are the retention flags the daemon and prune share.
type policyFlags struct {
	last, hourly, daily, weekly, monthly int
	within                               withinFlag
}

func (p *policyFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&p.last, "keep-last", 0, "keep the `N` newest snapshots (-1: all)")
	fs.IntVar(&p.hourly, "keep-hourly", 0, "keep the newest snapshot of each of the last `N` UTC hours that have one (-1: all)")
	fs.IntVar(&p.daily, "keep-daily", 0, "keep the newest snapshot of each of the last `N` UTC days that have one (-1: all)")
	fs.IntVar(&p.weekly, "keep-weekly", 0, "keep the newest snapshot of each of the last `N` ISO weeks that have one (-1: all)")
	fs.IntVar(&p.monthly, "keep-monthly", 0, "keep the newest snapshot of each of the last `N` months that have one (-1: all)")
	fs.Var(&p.within, "keep-within", "keep every snapshot, undo snapshots included, younger than `DURATION` (36h, 7d, 2w, 1d12h)")
}

// policy checks the flags and returns the policy they describe.
func (p *policyFlags) policy() (snapshot.Policy, error) {
	for _, f := range []struct {
		name string
		n    int
	}{{"keep-last", p.last}, {"keep-hourly", p.hourly}, {"keep-daily", p.daily}, {"keep-weekly", p.weekly}, {"keep-monthly", p.monthly}} {
		if f.n < -1 {
			return snapshot.Policy{}, usagef("--%s %d: want a count, or -1 for all", f.name, f.n)
		}
	}
	return snapshot.Policy{
		Last: p.last, Hourly: p.hourly, Daily: p.daily, Weekly: p.weekly, Monthly: p.monthly,
		Within: time.Duration(p.within),
	}, nil
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

type pruneCmd struct {
	*env
	dryRun bool
	keep   policyFlags
}

func (c *pruneCmd) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.dryRun, "dry-run", false, "print what would be kept and removed, and why; remove nothing")
	c.keep.register(fs)
}

func (c *pruneCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	p, err := c.keep.policy()
	if err != nil {
		return err
	}
	if p.Empty() {
		return usagef("no retention rule: give at least one of --keep-last, --keep-hourly, --keep-daily, --keep-weekly, --keep-monthly, --keep-within")
	}
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	infos, err := store.List(ctx)
	if err != nil {
		return err
	}
	keep, remove, reasons := snapshot.ApplyPolicy(infos, p, time.Now())

	removing := map[string]bool{}
	for _, s := range remove {
		removing[s.ID] = true
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tID\tTIME\tREASON\tCLUSTER\tWHY")
	for _, s := range sortedByTime(keep, remove) {
		action := "keep"
		if removing[s.ID] {
			action = "remove"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", action, s.ID, s.CreatedAt.UTC().Format(time.RFC3339), s.Reason, s.ClusterID, strings.Join(reasons[s.ID], ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.dryRun {
		fmt.Fprintf(c.stdout, "dry run: would keep %d and remove %d snapshots (policy: %s); nothing removed\n", len(keep), len(remove), p)
		return nil
	}

	removed := 0
	var errs []error
	for _, s := range remove {
		if err := store.Delete(ctx, s.ID); err != nil && !errors.Is(err, snapshot.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	fmt.Fprintf(c.stdout, "kept %d, removed %d snapshots (policy: %s)\n", len(keep), removed, p)
	c.log.Info("prune done", "kept", len(keep), "removed", removed, "failed", len(errs), "policy", p.String())
	if len(errs) > 0 {
		return fmt.Errorf("remove %d of %d snapshots: %w", len(errs), len(remove), errors.Join(errs...))
	}
	return nil
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
