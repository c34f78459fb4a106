package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// coverage prints, after the snapshots, from when to when each journal
// epoch can restore the cluster (restore --at).
func (c *listCmd) coverage(ctx context.Context, st *store.Store) error {
	cov, err := st.Journal().Coverage(ctx)
	if err != nil {
		return err
	}
	if len(cov) == 0 {
		return nil
	}
	fmt.Fprintln(c.stdout, "\njournal (restore --at TIME):")
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EPOCH\tFROM\tTO\tSEGMENTS\tSIZE\tSTATE")
	// The table's lines stay within 120 columns: a broken epoch's STATE is
	// one word, its cause a note under the table.
	var notes []string
	for _, e := range cov {
		state := "ok"
		switch {
		case !e.BaseExists:
			state = "base gone"
			notes = append(notes, "epoch "+e.Epoch+": base snapshot gone: not restorable")
		case e.Broken != "":
			state = "broken"
			notes = append(notes, "epoch "+e.Epoch+": broken after "+e.To.UTC().Format(time.RFC3339)+": "+e.Broken)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", e.Epoch, e.From.UTC().Format(time.RFC3339Nano), e.To.UTC().Format(time.RFC3339Nano), e.Segments, e.Bytes, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(c.stdout, wrapNote(n))
	}
	if n := sharedJournalNote(ctx, st, cov); n != "" {
		fmt.Fprintln(c.stdout, wrapNote(n))
	}
	// STATE ok is what the names in the store say: list reads no segment.
	verify := strings.Join(quoteEach(append([]string{programName, "verify"}, c.g.settingFlags(flagsOf(verifyCommand))...)), " ")
	_, err = fmt.Fprintln(c.stdout, english.Advice("STATE is from the listing alone; every object is read and checked by "+verify, lineWidth, []string{verify}))
	return err
}
