package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Completion runs on cobra's protocol: the scripts (offsetkeeper completion
// bash|zsh|fish|powershell) call the hidden offsetkeeper __complete with
// the words of the line; cobra completes the commands and flags, and the
// functions here the values that live in the store the line names (flags,
// then the environment, as the command would): snapshot IDs (and latest)
// where a command takes an ID, the connectors of the latest snapshot after
// --connector, its sink groups after --group. They offer nothing, quickly,
// when the store cannot be read.

// completeTimeout bounds a completion call: a <TAB> that waits on an
// unreachable bucket is worse than one that offers nothing.
const completeTimeout = 2 * time.Second

// idArgs are the commands taking snapshot IDs, with how many (-1: any).
var idArgs = map[string]int{"restore": 1, "show": 1, "diff": 2, "verify": -1, "pin": -1, "unpin": -1}

// registerCompletions gives cc its argument and flag value completions.
// A flag whose value is a local path completes file names; any other
// value flag, nothing.
func (c *cli) registerCompletions(cc *cobra.Command) {
	cm := c.cmds[cc]
	if cm.info.name == completionCommand.name {
		cc.ValidArgs = shells
	}
	if n, ok := idArgs[cm.info.name]; ok {
		cc.ValidArgsFunction = func(cc *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if n >= 0 && len(args) >= n {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return c.fromStore(cc, toComplete, snapshotRefs)
		}
	}
	for _, f := range flagList(cm.fs) {
		var complete cobra.CompletionFunc
		switch {
		case f.name == "connector":
			complete = func(cc *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return c.fromStore(cc, toComplete, latestConnectors)
			}
		case f.name == "group":
			complete = func(cc *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return c.fromStore(cc, toComplete, latestGroups)
			}
		case fileFlag(f):
			complete = cobra.FixedCompletions(nil, cobra.ShellCompDirectiveDefault)
		case !f.isBool:
			complete = cobra.NoFileCompletions
		default:
			continue
		}
		_ = cc.RegisterFlagCompletionFunc(f.name, complete)
	}
}

// fromStore returns the values of list that start with toComplete, read
// from the store the parsed line and the environment name.
func (c *cli) fromStore(cc *cobra.Command, toComplete string, list func(context.Context, *globals) []string) ([]string, cobra.ShellCompDirective) {
	cm := c.cmds[cc]
	markGoFlags(cm.fs, cc.Flags())
	if _, err := applyEnv(cm.fs, os.LookupEnv); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cc.Context(), completeTimeout)
	defer cancel()
	var out []string
	for _, v := range list(ctx, cm.env.g) {
		if strings.HasPrefix(v, toComplete) {
			out = append(out, v)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// snapshotRefs returns latest and the stored snapshots' IDs, newest first.
func snapshotRefs(ctx context.Context, g *globals) []string {
	store, err := g.openStore(ctx)
	if err != nil {
		return nil
	}
	defer store.Close()
	infos, err := store.Snapshots().List(ctx)
	if err != nil || len(infos) == 0 {
		return nil
	}
	out := []string{"latest"}
	for _, i := range slices.Backward(infos) {
		out = append(out, i.ID)
	}
	return out
}

func latestConnectors(ctx context.Context, g *globals) []string { return latestNames(ctx, g, false) }

func latestGroups(ctx context.Context, g *globals) []string { return latestNames(ctx, g, true) }

// latestNames returns the connectors (or the sink groups) of the latest
// snapshot, sorted.
func latestNames(ctx context.Context, g *globals, groups bool) []string {
	store, err := g.openStore(ctx)
	if err != nil {
		return nil
	}
	defer store.Close()
	snap, _, err := store.Snapshots().GetWith(ctx, "latest", nil)
	if err != nil {
		return nil
	}
	var out []string
	if groups {
		for _, sg := range snap.SinkGroups {
			out = append(out, sg.Group)
		}
	} else {
		for _, c := range snap.Connectors {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
