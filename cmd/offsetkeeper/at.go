package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// parseAt reads a --at TIME: RFC 3339 (fractional seconds allowed) or a
// negative duration from now ("-15m", "-1h30m"). A malformed TIME is a
// usage error.
func parseAt(flagName, s string, now time.Time) (time.Time, error) {
	if strings.HasPrefix(s, "-") {
		d, err := time.ParseDuration(s)
		if err != nil || d >= 0 {
			return time.Time{}, usagef("--%s %q: want an RFC 3339 time (2026-12-01T09:14:03Z) or a negative duration from now (-15m)", flagName, s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("--%s %q: want an RFC 3339 time (2026-12-01T09:14:03Z, fractional seconds allowed) or a negative duration from now (-15m)", flagName, s)
	}
	return t, nil
}

// stateAt is the state of the store's cluster at TIME, for restore, show
// and diff: it prints the effective moment and the precision of each part
// to w (nil: not at all).
func stateAt(ctx context.Context, w io.Writer, store *snapshot.Store, at string) (*snapshot.Snapshot, error) {
	t, err := parseAt("at", at, time.Now())
	if err != nil {
		return nil, err
	}
	snap, info, err := store.StateAt(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("read state at %s: %w", at, err)
	}
	if w != nil {
		printStateInfo(w, info)
	}
	return snap, nil
}

// printStateInfo says how a state at a moment was made.
func printStateInfo(w io.Writer, si *snapshot.StateInfo) {
	if si.Fallback {
		fmt.Fprintf(w, "state at %s: snapshot %s (no journal)\n", si.At.UTC().Format(time.RFC3339Nano), si.Base.ID)
	} else {
		fmt.Fprintf(w, "state at %s: snapshot %s + journal epoch %s to segment %d (%d source records, %d sink observations, %d config records applied)\n",
			si.At.UTC().Format(time.RFC3339Nano), si.Base.ID, si.Epoch, si.Seq, si.Records, si.SinkObservations, si.ConfigRecords)
	}
	for _, p := range si.Precision {
		fmt.Fprintf(w, "  precision: %s\n", p)
	}
	for _, n := range si.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// withNothingWritten says so after a restore's error; a usage error stays one.
func withNothingWritten(err error) error {
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("%w; nothing was written", err)
}
