package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

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
	for _, e := range cov {
		state := "ok"
		switch {
		case !e.BaseExists:
			state = "base snapshot gone: not restorable"
		case e.Broken != "":
			state = "broken after " + e.To.UTC().Format(time.RFC3339) + ": " + e.Broken
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", e.Epoch, e.From.UTC().Format(time.RFC3339Nano), e.To.UTC().Format(time.RFC3339Nano), e.Segments, e.Bytes, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// STATE ok is what the names in the store say: list reads no segment.
	_, err = fmt.Fprintln(c.stdout, "(STATE is from the listing alone; 'offsetkeeper verify' reads and checks every object)")
	return err
}
