package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// The commands that read the live cluster (snapshot, diff --live, verify
// with brokers, the daemon) first look for restores that did not finish
// and repair what their aborted transactions left visible to workers
// without exactly-once source support (see restore/interrupted.go).

// recoverInterrupted runs restore.RecoverInterrupted and says on w what
// it found; a failure to look is a warning, not the command's failure. It
// returns the restores it could not settle.
func recoverInterrupted(ctx context.Context, cl *kgo.Client, st *store.Store, w io.Writer, log *slog.Logger) []restore.Interrupted {
	found, err := restore.RecoverInterrupted(ctx, restore.Recovery{Client: cl, Store: st, Out: w, Log: log})
	if err != nil {
		fmt.Fprintf(w, "warning: could not look for restores that did not finish: %v\n", kafkaconf.DescribeError(err))
		log.Warn("look for restores that did not finish", "error", err)
		return nil
	}
	var left []restore.Interrupted
	for _, x := range found {
		if !x.Done() {
			left = append(left, x)
		}
	}
	return left
}

// workerReadsCommitted reports whether the worker config given
// (--worker-config) enables exactly-once source support, so that the
// worker reads its offsets topic read_committed; false when it does not
// or when no worker config is given (then both views are compared).
func (g *globals) workerReadsCommitted() (known, committed bool) {
	if g.workerConfig == "" {
		return false, false
	}
	f, err := os.Open(g.workerConfig)
	if err != nil {
		return false, false
	}
	defer f.Close()
	props, err := kafkaconf.ParseProperties(f)
	if err != nil {
		return false, false
	}
	return true, strings.EqualFold(strings.TrimSpace(props["exactly.once.source.support"]), "enabled")
}

// viewNotes compares, for each offsets topic, what workers with and
// without exactly-once source support read, and returns a note per topic
// where they differ: the live state depends on the worker then.
func viewNotes(ctx context.Context, cl *kgo.Client, topics, scope []string) []string {
	var notes []string
	for _, t := range topics {
		if t == "" {
			t = snapshot.DefaultOffsetsTopic
		}
		diffs, err := restore.CompareViews(ctx, cl, t, inScope(scope))
		if err != nil {
			notes = append(notes, fmt.Sprintf("could not compare how workers with and without exactly-once source support read topic %s: %v", t, err))
			continue
		}
		if len(diffs) == 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("workers read %s of topic %s differently: with exactly.once.source.support=enabled (read_committed, as this diff) "+
			"and without it (read_uncommitted, the default), whose view holds an aborted transaction's records; first: %s",
			plural(len(diffs), "key", "keys"), t, diffs[0]))
	}
	return notes
}

// offsetsTopicsOf names the offsets topics snap read.
func offsetsTopicsOf(snap *snapshot.Snapshot) []string {
	var out []string
	for _, t := range snap.Topics {
		if t.Role == snapshot.RoleOffsets {
			out = append(out, t.Name)
		}
	}
	return out
}

// restores is verify's look at the restores that did not finish, read
// from the store: none, and verify asks Kafka nothing; some, and with Kafka
// settings given (--brokers, --worker-config or their env twins) it checks
// and repairs their topics as every command does, while without them it
// names them. It returns how many are not settled: a transaction still
// open, or a check that failed.
func (c *verifyCmd) restores(ctx context.Context, st *store.Store) (int, error) {
	w := c.stdout
	if c.output == "json" {
		w = c.stderr
	}
	intents, err := st.Restores().List(ctx)
	if err != nil || len(intents) == 0 {
		return 0, err
	}
	if c.g.explicit("brokers") || c.g.workerConfig != "" {
		cl, _, err := c.g.kafkaClient(ctx)
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		left := recoverInterrupted(ctx, cl, st, w, c.log)
		// As the workers read the topics those restores wrote (workerview.go).
		for _, n := range workerViewNotes(ctx, cl, c.g.workerRead(ctx, nil), intentTopics(intents), nil) {
			fmt.Fprintln(w, wrapNote("note: "+n))
		}
		return len(left), nil
	}
	for _, in := range intents {
		// The command on lines of its own: wrapped at a space and pasted a
		// line at a time, its first line would run alone.
		again := againOf(in)
		fmt.Fprintln(w, english.Advice(fmt.Sprintf("FAIL restore %s of snapshot %s (started %s) did not finish (%s); give --brokers to check what it wrote, or run it again: %s",
			in.ID, in.Snapshot, in.Started.Format("2006-01-02T15:04:05Z07:00"), in.Stage, again), lineWidth, []string{again}))
	}
	return len(intents), nil
}

// againOf is the command that runs the restore of in again.
func againOf(in store.RestoreIntent) string {
	if in.Again != "" {
		return in.Again
	}
	return "offsetkeeper restore " + in.Snapshot
}

// intentTopics names the offsets topics the restores of intents write.
func intentTopics(intents []store.RestoreIntent) []string {
	var out []string
	for _, in := range intents {
		for _, t := range in.Topics {
			if !slices.Contains(out, t.Topic) {
				out = append(out, t.Topic)
			}
		}
	}
	return out
}
