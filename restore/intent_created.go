package restore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// recordCreating adds to the run's record, before it creates them, the
// connectors --create-connectors creates STOPPED that the snapshot has
// STARTED or PAUSED: a restore killed after creating them leaves them
// STOPPED with no offsets, and the next run of it resumes them as it
// resumes the connectors a restore that did not finish stopped.
func (r *run) recordCreating(ctx context.Context, cs []Creation) error {
	if r.intent == nil || r.Store == nil {
		return nil
	}
	added := false
	for _, c := range cs {
		if c.Action != CreateCreate || (c.Resume != snapshot.StateStarted && c.Resume != snapshot.StatePaused) ||
			slices.ContainsFunc(r.intent.Stopped, func(s store.IntentStopped) bool { return s.Name == c.Connector }) {
			continue
		}
		r.intent.Stopped = append(r.intent.Stopped, store.IntentStopped{Name: c.Connector, Target: c.Resume, Before: "created STOPPED", Created: true})
		added = true
	}
	if !added {
		return nil
	}
	return r.Store.Restores().Put(ctx, *r.intent)
}

// sayAgain ends the report of a restore that did not finish with the
// command that finishes it: what it left stopped (stopped, or created
// STOPPED), which that command resumes; or, when it left none, that its
// offsets may not all be written (killed before or while it wrote them:
// the command then finds nothing to do if they are).
func (rec Recovery) sayAgain(in store.RestoreIntent) {
	again := in.Again
	if again == "" {
		again = "offsetkeeper restore " + in.Snapshot
	}
	var stopped, created []string
	for _, s := range in.Stopped {
		if s.Created {
			created = append(created, s.Name)
		} else {
			stopped = append(stopped, s.Name)
		}
	}
	var what []string
	if len(stopped) > 0 {
		what = append(what, fmt.Sprintf("stopped %s (%s)", plural(len(stopped), "connector", "connectors"), strings.Join(stopped, ", ")))
	}
	if len(created) > 0 {
		what = append(what, fmt.Sprintf("created %s STOPPED (%s)", plural(len(created), "connector", "connectors"), strings.Join(created, ", ")))
	}
	if len(what) == 0 {
		rec.sayWith([]string{again}, "  its offsets may not all be written: run it again to finish it (it finds nothing to do if they are): %s", again)
		return
	}
	rec.sayWith([]string{again}, "  it %s: run it again to finish it, which resumes %s: %s",
		strings.Join(what, " and "), pick(len(in.Stopped) == 1, "it", "them"), again)
}
