package main

// This file is diff's hint when it finds no differences between a state
// and the live cluster although the journal saw resets of those
// connectors before the state was captured: the state holds the damage
// too, so "no differences" is no all-clear (issue 40).

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// resetHint writes, when the journal of st holds a reset (of the
// connectors of scope, or any when scope is empty) in the day before a
// was captured that no restore of the connector followed, a note naming
// each and the events command that lists the restores to just before
// them. A journal that cannot be read adds nothing.
func resetHint(ctx context.Context, w io.Writer, st *store.Store, a *snapshot.Snapshot, scope []string, settings restore.CommandSettings) {
	evs, err := st.Journal().Events(ctx, a.CreatedAt.Add(-24*time.Hour))
	if err != nil {
		return
	}
	restored := map[string]time.Time{}
	for _, e := range evs {
		if e.Kind == snapshot.EventRestored && e.Time.After(restored[e.Connector]) {
			restored[e.Connector] = e.Time
		}
	}
	clusterOf, _ := epochClusters(ctx, st) // a shared store: another cluster's resets are not a's
	var names []string
	for _, e := range evs {
		if e.Kind == snapshot.EventRestored || !e.Before.Before(a.CreatedAt) || len(scope) > 0 && !slices.Contains(scope, e.Connector) {
			continue
		}
		if of := clusterOf[e.Epoch]; of != "" && a.ClusterID != "" && of != a.ClusterID {
			continue
		}
		if restored[e.Connector].After(e.Time) || slices.Contains(names, e.Connector) {
			continue
		}
		names = append(names, e.Connector)
	}
	if len(names) == 0 {
		return
	}
	program := settings.Program
	if program == "" {
		program = "offsetkeeper"
	}
	cmd := program + " events --since " + restore.FormatMoment(a.CreatedAt.Add(-24*time.Hour))
	for _, n := range names {
		cmd += " --connector " + restore.ShellQuote(n)
	}
	for _, f := range settings.Flags {
		cmd += " " + restore.ShellQuote(f)
	}
	fmt.Fprintln(w, english.Wrap(fmt.Sprintf("note: %s was captured after the journal saw %s reset (%s): it holds the damage too, so no difference is no all-clear;",
		a.ID, plural(len(names), "connector", "connectors"), joinMax(names, 5)), lineWidth, "  "))
	fmt.Fprintln(w, english.Continue(cmd, lineWidth, "  the restore to just before each reset: ", "      "))
}

// joinMax joins names, at most n of them and how many more.
func joinMax(names []string, n int) string {
	if len(names) <= n {
		return fmt.Sprint(names)
	}
	return fmt.Sprintf("%v and %d more", names[:n], len(names)-n)
}
