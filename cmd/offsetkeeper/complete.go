package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// completeCommand is the hidden entry point the completion scripts call:
//
//	offsetkeeper __complete <words after offsetkeeper, the last under the cursor>
//
// It prints the values that fit the word under the cursor, one a line:
// snapshot IDs (and latest) where a command takes an ID, the connectors of
// the latest snapshot after --connector, its sink groups after --group,
// read from the store the words so far name (flags, then the environment,
// as the command would). Flags and file names the scripts complete
// themselves. It prints nothing, quickly, when the store cannot be read.
const completeCommand = "__complete"

// completeTimeout bounds a completion call: a <TAB> that waits on an
// unreachable bucket is worse than one that offers nothing.
const completeTimeout = 2 * time.Second

// idArgs are the commands taking snapshot IDs, with how many (-1: any).
var idArgs = map[string]int{"restore": 1, "show": 1, "diff": 2, "verify": -1, "pin": -1, "unpin": -1}

// runComplete is __complete. Errors print nothing: a completion never
// writes to the terminal the user is typing in.
func runComplete(ctx context.Context, words []string, stdout io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	for _, c := range completions(ctx, words) {
		fmt.Fprintln(stdout, c)
	}
	return exitOK
}

// completions returns the candidates for the last of words.
func completions(ctx context.Context, words []string) []string {
	if len(words) == 0 {
		return nil
	}
	words = joinEquals(words)
	done, cur := words[:len(words)-1], words[len(words)-1]
	done, err := hoistShared(done)
	if err != nil || len(done) == 0 {
		return nil
	}
	info, ok := commands[done[0]]
	if !ok {
		return nil
	}
	e := &env{stdout: io.Discard, stderr: io.Discard, g: &globals{}}
	fs, _ := newFlagSet(info, e)
	args := expandShort(fs, done[1:])
	// What is being completed: a flag's value (--connector NAME,
	// --connector=NAME) or a positional argument.
	valueOf := ""
	if n, v, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(n, "-") {
		valueOf, cur = longName(fs, n), v
	} else if len(args) > 0 {
		if prev := args[len(args)-1]; strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
			if f := fs.Lookup(strings.TrimLeft(prev, "-")); f != nil && !isBoolFlag(f) {
				valueOf, args = f.Name, args[:len(args)-1]
			}
		}
	}
	if valueOf == "" && strings.HasPrefix(cur, "-") {
		return nil
	}
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return nil
	}
	if _, err := applyEnv(fs, os.LookupEnv); err != nil {
		return nil
	}
	var all []string
	switch valueOf {
	case "":
		n, ok := idArgs[info.name]
		if !ok || (n >= 0 && len(positional) >= n) {
			return nil
		}
		all = snapshotRefs(ctx, e.g)
	case "connector":
		all = latestNames(ctx, e.g, false)
	case "group":
		all = latestNames(ctx, e.g, true)
	default:
		return nil
	}
	var out []string
	for _, c := range all {
		if strings.HasPrefix(c, cur) {
			out = append(out, c)
		}
	}
	return out
}

// joinEquals undoes bash's split of --flag=value into "--flag", "=",
// "value" (COMP_WORDBREAKS holds "=").
func joinEquals(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		if words[i] == "=" && len(out) > 0 && strings.HasPrefix(out[len(out)-1], "-") {
			out[len(out)-1] += "="
			if i+1 < len(words) {
				out[len(out)-1] += words[i+1]
				i++
			}
			continue
		}
		out = append(out, words[i])
	}
	return out
}

// longName is the flag name of -c or --connector.
func longName(fs *flag.FlagSet, arg string) string {
	name := strings.TrimLeft(arg, "-")
	if long, ok := shortFlags[name]; ok && fs.Lookup(long) != nil {
		return long
	}
	return name
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
