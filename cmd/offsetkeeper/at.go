package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// parseAt reads a --at TIME (snapshot.ParseMoment): RFC 3339 or a
// negative duration from now. A malformed TIME is a usage error.
func parseAt(flagName, s string, now time.Time) (time.Time, error) {
	t, err := snapshot.ParseMoment(s, now)
	if err != nil {
		return time.Time{}, usagef("--%s %q: %v", flagName, s, err)
	}
	return t, nil
}

// stateAt is the state of the cluster pick names (see at_cluster.go) at
// TIME, for restore, show and diff: it prints the effective moment and
// the precision of each part to w (nil: not at all). positional are the
// command's arguments, for the commands a refusal prints.
func (g *globals) stateAt(ctx context.Context, w io.Writer, st *store.Store, at string, pick store.ClusterPick, positional []string) (*snapshot.Snapshot, error) {
	t, err := parseAt("at", at, time.Now())
	if err != nil {
		return nil, err
	}
	snap, info, err := st.Journal().StateAtFor(ctx, t, pick)
	if errors.Is(err, store.ErrNoSuchCluster) {
		return nil, usagef("%v", err)
	}
	if err != nil {
		return nil, g.clusterChoice(fmt.Errorf("read state at %s: %w", at, err), at, positional)
	}
	if w != nil {
		printStateInfo(w, info)
	}
	return snap, nil
}

// printStateInfo says, on one line, how a state at a moment was made and
// how exact it is: the moment, the snapshot and journal it comes from, and
// the precision (source offsets to the record; sink offsets as the journal
// last read the groups; a merged journal's boundary). docs/journal.md has
// the details.
func printStateInfo(w io.Writer, si *journal.StateInfo) {
	at := si.At.UTC().Format(millis)
	if si.Fallback {
		fmt.Fprintf(w, "state at %s (no journal covers it: %s older): snapshot %s\n",
			at, si.At.Sub(si.Base.CreatedAt).Round(time.Second), si.Base.ID)
		if si.Base.Captured == snapshot.CapturedConnectREST {
			fmt.Fprintf(w, "note: snapshot %s was captured through the Connect REST API, which keeps no journal: restore --at needs a daemon that reads the offsets topics\n", si.Base.ID)
		}
		return
	}
	precision := "exact"
	if m := sinkObserved.FindStringSubmatch(strings.Join(si.Precision, "\n")); m != nil {
		if seen, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			precision += fmt.Sprintf("; sink offsets %s older", si.At.Sub(seen).Round(time.Millisecond))
		}
	}
	for _, n := range si.Notes {
		if m := mergedAsOf.FindStringSubmatch(n); m != nil {
			asOf := m[1]
			if t, err := time.Parse(time.RFC3339Nano, asOf); err == nil && t.UTC().Format(time.DateOnly) == si.At.UTC().Format(time.DateOnly) {
				asOf = t.UTC().Format("15:04:05Z")
			}
			precision = "as of " + asOf + ", merged"
		}
	}
	fmt.Fprintf(w, "state at %s (%s): snapshot %s + journal\n", at, precision, si.Base.ID)
}

// millis is RFC 3339 to the millisecond, as the journal's times are.
const millis = "2006-01-02T15:04:05.000Z07:00"

// The times printStateInfo reads from StateInfo's precision and notes.
var (
	sinkObserved = regexp.MustCompile(`sink offsets: as observed at (\S+),`)
	mergedAsOf   = regexp.MustCompile(`the moment is restored as of (\S+),`)
)

// withNothingWritten says so after a restore's error; a usage error stays one.
func withNothingWritten(err error) error {
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("%w; nothing was written", err)
}
