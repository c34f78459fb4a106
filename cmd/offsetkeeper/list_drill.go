package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// lastDrill prints, under list's table, the newest drill and its result
// (nothing when the store holds none): see drill.go.
func (c *listCmd) lastDrill(ctx context.Context, st *store.Store) error {
	ids, err := st.Drills().List(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	id := ids[len(ids)-1]
	data, err := st.Drills().Get(ctx, id)
	if err != nil {
		return err
	}
	rep, err := drill.Open(data)
	if err != nil {
		fmt.Fprintf(c.stdout, "last drill: %s: unreadable: %v\n", id, err)
		return nil
	}
	what := strings.ToUpper(rep.Result)
	if f := rep.Failed(); len(f) > 0 {
		what += " (" + strings.Join(f, ", ") + ")"
	}
	// The command carries the store settings list was given, and goes on
	// a line of its own past 120 columns.
	args := append([]string{programName, "drill", "--list"}, c.g.settingFlags(flagsOf(drillCommand))...)
	cmd := strings.Join(quoteEach(args), " ")
	text := fmt.Sprintf("last drill: %s %s, %s, RTO %s; %s: %s",
		id, what, stateName(rep.State), rep.RTO.Restore, plural(len(ids), "drill", "drills"), cmd)
	fmt.Fprintln(c.stdout, english.Advice(text, lineWidth, []string{cmd}))
	return nil
}
