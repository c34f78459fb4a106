package restore

// This file is the plan's header about resets: a restore that is about to
// write back the state after a reset the journal saw says so, with the
// restore that goes back to just before it.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// resetLookback is how far before the state restored the journal's resets
// are looked for: as far as events lists them by default.
const resetLookback = 24 * time.Hour

// AfterReset is a reset the journal saw of a connector the restore covers,
// when the state the restore chose for it was captured after that reset:
// the restore writes back (or keeps) the state after the damage.
type AfterReset struct {
	Connector string `json:"connector"`
	Group     string `json:"group,omitempty"`
	// Kind, Count and Time are the event's (snapshot.Event); Before the
	// moment just before it, the last instant before its first record.
	Kind   string    `json:"kind"`
	Count  int       `json:"count"`
	Time   time.Time `json:"time"`
	Before time.Time `json:"before"`
	// State is the snapshot or moment restored, which holds the state
	// after the reset; StateTime when it was captured.
	State     string    `json:"state"`
	StateTime time.Time `json:"state_time"`
	// Undo is the restore that goes back to just before the reset.
	Undo Commands `json:"undo"`
	// RestoredSince is the undo snapshot of a restore of the connector
	// that ran between the reset and the state restored, when there is
	// one: that restore may have undone the reset.
	RestoredSince string `json:"restored_since,omitempty"`
}

// afterResets returns the resets the journal of Env.Store saw, of the
// connectors of plan, before the state the request restores was captured
// (at most resetLookback before). A journal that cannot be read is warned
// of on Env.Out: it does not stop the restore.
func (r *run) afterResets(ctx context.Context, plan *Plan) []AfterReset {
	snap := r.req.Snapshot
	if !r.req.Resets || r.Store == nil || plan.OtherCluster {
		return nil
	}
	state := snap.CreatedAt
	evs, err := r.Store.Journal().Events(ctx, state.Add(-resetLookback))
	if err != nil {
		fmt.Fprintf(r.Out, "warning: read the journal's resets (to tell whether this restores the state after one): %v\n", err)
		return nil
	}
	inPlan := map[string]bool{}
	for _, cp := range plan.Connectors {
		inPlan[cp.Name] = true
	}
	var out []AfterReset
	var infos []snapshot.Info
	for _, ev := range evs {
		if !inPlan[ev.Connector] || !state.After(ev.Before) || ev.Kind == snapshot.EventRestored {
			continue
		}
		if infos == nil {
			infos, _ = r.Store.Snapshots().List(ctx) // for restoredSince; none when it fails
			if infos == nil {
				infos = []snapshot.Info{}
			}
		}
		if otherClusters(infos, ev.Epoch, snap.ClusterID) {
			continue
		}
		out = append(out, AfterReset{Connector: ev.Connector, Group: ev.Group, Kind: ev.Kind, Count: ev.Count, Time: ev.Time, Before: ev.Before,
			State: snap.ID, StateTime: state.UTC(), Undo: r.req.Commands.Undo(ev.Kind, ev.Before, ev.Connector),
			RestoredSince: restoredSince(infos, ev.Connector, ev.Time, state)})
	}
	return out
}

// restoredSince returns the newest undo snapshot holding connector taken
// after from and before to: a restore of it ran then.
func restoredSince(infos []snapshot.Info, connector string, from, to time.Time) string {
	id := ""
	for _, i := range infos {
		if i.Kind == snapshot.KindUndo && i.CreatedAt.After(from) && i.CreatedAt.Before(to) && slices.Contains(i.Scope, connector) {
			id = i.ID
		}
	}
	return id
}

// printAfterResets opens the plan with the resets whose damage the state
// restored holds.
func printAfterResets(w io.Writer, resets []AfterReset) {
	// A reset a restore ran after (perhaps undoing it) is one line per
	// connector, however many: the full block is for one not undone.
	undone := map[string][]AfterReset{}
	var order []string
	for _, x := range resets {
		if x.RestoredSince == "" {
			continue
		}
		if undone[x.Connector] == nil {
			order = append(order, x.Connector)
		}
		undone[x.Connector] = append(undone[x.Connector], x)
	}
	for _, c := range order {
		xs := undone[c]
		last := xs[len(xs)-1]
		what := fmt.Sprintf("reset at %s (%s)", FormatMoment(last.Time), last.Kind)
		if len(xs) > 1 {
			what = fmt.Sprintf("%d resets, the last at %s (%s)", len(xs), FormatMoment(last.Time), last.Kind)
		}
		fmt.Fprintln(w, english.Wrap(fmt.Sprintf("note: connector %s: %s, then restored (undo snapshot %s)", c, what, last.RestoredSince), 120, "  "))
	}
	for _, x := range resets {
		if x.RestoredSince != "" {
			continue
		}
		group := ""
		if x.Group != "" && x.Group != x.Connector {
			group = " (group " + x.Group + ")"
		}
		// Each sentence starts a line, wrapped to the plan's 120 columns;
		// the check and undo commands stay whole, to paste.
		fmt.Fprintln(w, english.Wrap(fmt.Sprintf("WARNING: connector %s%s was reset at %s (%s, %s), and %s was captured after it (%s):",
			x.Connector, group, FormatMoment(x.Time), x.Kind, plural(x.Count, "offset", "offsets"), stateName(x.State), FormatMoment(x.StateTime.Truncate(time.Millisecond))), 120, "  "))
		fmt.Fprintln(w, "  this restores the state AFTER the reset.")
		fmt.Fprintf(w, "  to go back to just before the reset (%s) instead:\n    check: %s\n    undo:  %s\n", FormatMoment(x.Before), x.Undo.DryRun, x.Undo.Run)
	}
}

// stateName names a snapshot, or the state at a moment (whose ID starts
// with "at ").
func stateName(id string) string {
	if strings.HasPrefix(id, "at ") {
		return "the state " + id
	}
	return "snapshot " + id
}

// otherClusters reports whether journal epoch is of a cluster other than
// cluster (its base snapshot's ID in infos): in a store the daemons of two
// clusters share, a reset one cluster's journal saw is not the other's,
// and its undo (restore --at) would read the other's journal.
func otherClusters(infos []snapshot.Info, epoch, cluster string) bool {
	for _, i := range infos {
		if i.ID == epoch {
			return i.ClusterID != "" && cluster != "" && i.ClusterID != cluster
		}
	}
	return false
}
