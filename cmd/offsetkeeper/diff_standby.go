package main

// This file is what diff says when its live side is a standby that
// failover (or failback) wrote from the other side's cluster: which of the
// differences are the sink offsets its translation moved, and that they
// are expected (docs/standby.md).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// printStandby, when the live cluster is the standby a fence in the store
// names for a's cluster, translates a as that failover did and says how
// many of changes the translation explains and which ones it does not.
// With --output json it writes to stderr: stdout is the array alone.
func (c *diffCmd) printStandby(ctx context.Context, s diffSides, compare []string, changes []restore.Change) {
	if !s.live || s.a.ClusterID == s.b.ClusterID || s.a.ClusterID == "" {
		return
	}
	w := c.stdout
	if c.output == "json" {
		w = c.stderr
	}
	f, err := standby.FenceOf(ctx, c.st, s.a.ClusterID)
	if err != nil {
		fmt.Fprintf(w, "note: could not tell whether the live cluster is a standby of cluster %s: %v\n", s.a.ClusterID, err)
		return
	}
	if f == nil || f.Standby != s.b.ClusterID {
		return
	}
	method := f.Translate
	if method == "" {
		method = standby.TranslateNone
	}
	fmt.Fprintf(w, "note: live cluster %s is the standby of cluster %s (%s at %s)\n",
		s.b.ClusterID, f.Primary, f.By, f.At.UTC().Format(time.RFC3339))
	if len(changes) == 0 {
		return
	}
	translated := s.a
	if method != standby.TranslateNone || len(f.MapTopics) > 0 || f.TopicPrefix != "" {
		translated, err = c.translateAsFailover(ctx, s.a, f)
		if err != nil {
			fmt.Fprintf(w, "note: could not translate %s as %s did to tell its differences from others: %v\n", s.a.ID, f.By, err)
			return
		}
	}
	rest := restore.Diff(translated, s.b, compare)
	byTranslation := len(changes) - countIn(changes, rest)
	switch {
	case len(rest) == 0:
		fmt.Fprintf(w, "note: sink offsets translated (%s): all %d differences are the translation's, expected; "+
			"nothing else differs\n", method, len(changes))
	default:
		fmt.Fprintf(w, "note: sink offsets translated (%s): %d of the %d differences are the translation's, expected;\n",
			method, byTranslation, len(changes))
		fmt.Fprintf(w, "note: these %d are not:\n", len(rest))
		if err := restore.PrintChanges(w, rest); err != nil {
			fmt.Fprintf(w, "note: print the differences: %v\n", err)
		}
	}
}

// translateAsFailover is a with its sink offsets translated into the live
// cluster's topics as the failover of f did.
func (c *diffCmd) translateAsFailover(ctx context.Context, a *snapshot.Snapshot, f *standby.Fence) (*snapshot.Snapshot, error) {
	cl, opts, err := c.g.kafkaClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	method := f.Translate
	if method == standby.TranslateNone {
		method = "" // the topics renamed, the offsets kept
	}
	out, _, err := translate.Translate(ctx, cl, a, translate.TranslateOptions{Method: method, SourceAlias: f.MM2SourceAlias,
		Margin: f.Margin, MapTopics: f.MapTopics, TopicPrefix: f.TopicPrefix, ConfigTopic: opts.ConfigTopic, GroupPrefix: opts.GroupPrefix})
	return out, err
}

// countIn is how many of changes rest holds too (the same offset of the
// same connector, whatever its values).
func countIn(changes, rest []restore.Change) int {
	key := func(ch restore.Change) string {
		return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d\x00%s", ch.Connector, ch.Type, ch.Group, ch.Topic, ch.Partition, ch.Key)
	}
	in := map[string]bool{}
	for _, ch := range rest {
		in[key(ch)] = true
	}
	n := 0
	for _, ch := range changes {
		if in[key(ch)] {
			n++
		}
	}
	return n
}

// failoverDiffCommand is the diff to run after a failover to see what it
// moved on the standby: the state it applied against the standby, live.
// Its words are for wrapCommand. It repeats the store's flags given on the command line (the environment
// still holds the others); nil when the standby needs security settings a
// printed command would have to carry (secrets are never printed).
//
// It names the primary's journal (--from-cluster): the store is shared by
// the daemons of both clusters, and the standby's may cover the moment
// too (a failback's, whose old primary's daemon journals it).
func (c *failoverCmd) failoverDiffCommand(stateAt time.Time, primary string) []string {
	f := c.standby
	if f.saslMechanism != "" || f.tls || f.tlsCA != "" || f.tlsCert != "" || f.oauthTokenFile != "" {
		return nil
	}
	words := []string{c.g.commandSettings().Program, "diff"}
	flags := c.g.commandSettings().Flags
	for i := 0; i < len(flags); i++ {
		name, _, inline := strings.Cut(flags[i], "=")
		keep := strings.HasPrefix(name, "--store") || strings.HasPrefix(name, "--encrypt")
		if keep {
			words = append(words, flags[i])
		}
		if !inline && i+1 < len(flags) && !strings.HasPrefix(flags[i+1], "--") {
			if keep {
				words = append(words, restore.ShellQuote(flags[i+1]))
			}
			i++
		}
	}
	words = append(words, "--at", stateAt.UTC().Format(time.RFC3339Nano))
	if primary != "" {
		words = append(words, "--from-cluster", restore.ShellQuote(primary))
	}
	words = append(words, "--live", "--brokers", restore.ShellQuote(f.brokers))
	return words
}
