package main

// This file is diff --live's part of the topic guard (issue 37): the sink
// topics recreated since the old side, the live sink offsets below their
// log start, and the sink groups whose offsets are gone.

import (
	"context"
	"fmt"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// printSinkGuard prints the sink traps between s.a and the live cluster
// s.b after the changes: on stdout in text, on stderr with --output json
// (whose stdout is the array alone). A failed read of the topics is said
// so, not an error of the diff.
func (c *diffCmd) printSinkGuard(ctx context.Context, s diffSides) {
	if !s.live || s.a.ViaREST() || s.a.ClusterID != s.b.ClusterID {
		return
	}
	w := c.stdout
	if c.output == "json" {
		w = c.stderr
	}
	cl, _, err := c.g.kafkaClient(ctx)
	if err != nil {
		fmt.Fprintf(w, "note: sink topics not checked: %v\n", err)
		return
	}
	defer cl.Close()
	ts, warnings := liveTopicIDs(ctx, cl, s.a, s.b)
	live := *s.b
	live.SinkTopics = append(append(live.SinkTopics[:0:0], s.b.SinkTopics...), ts...)
	for _, m := range warnings {
		fmt.Fprintln(w, english.Fit(english.Wrap("note: "+m, lineWidth, "  "), lineWidth))
	}
	for _, t := range restore.FindSinkTraps(s.a, &live, 0, time.Now(), c.g.commandSettings()) {
		// A key in a note can be wider than a line alone: Fit breaks it
		// at its punctuation; the command is only ever continued.
		fmt.Fprintln(w, english.Fit(english.Wrap(fmt.Sprintf("warning: %s %s: %s", t.Kind, t.Connector, t.Message), lineWidth, "  "), lineWidth))
		if t.Command != "" {
			fmt.Fprintln(w, english.Continue(t.Command, lineWidth, "  fix: ", "      "))
		}
	}
}
