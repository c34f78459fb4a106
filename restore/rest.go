package restore

import (
	"context"
	"errors"
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// A snapshot captured through the Connect REST API (snapshot.Snapshot.
// ViaREST) holds Connect's normalised keys and no partitions: it is
// restored through Connect alone. Its plan compares it with a capture of
// the live state through the same API (PlanREST), so no Kafka broker is
// needed: the Connect REST states, the undo snapshot (that live capture)
// and the PATCH requests and their verification are those of any restore
// --via connect.

// CheckVia refuses to restore a snapshot captured through the Connect REST
// API other than through Connect (via ViaConnect): its keys are Connect's
// normalised form and it knows no partitions, so it cannot be written into
// the offsets topics as exact bytes. Run calls it first; the command calls
// it before it opens a Kafka client.
func CheckVia(snap *snapshot.Snapshot, via string) error {
	if snap.ViaREST() && via != ViaConnect {
		return refusal{fmt.Errorf("snapshot %s was captured through the Connect REST API (Connect's normalised keys, no partitions): restore it with --via connect --connect-url URL; nothing was written", snap.ID)}
	}
	return nil
}

// PlanREST is the plan of the restore of snap, captured through the
// Connect REST API, into the state live, captured the same way
// (capture.CaptureREST): PlanStates for such snapshots, whose source keys
// sit on no partition of topic "" (the worker's offsets topic, unnamed
// through REST) or of the connector's own offsets.storage.topic. The
// plan's Check runs only the connector checks; its ConnectRequests are
// what a restore sends.
func PlanREST(snap, live *snapshot.Snapshot, opts Options) (*Plan, error) {
	if live == nil {
		return nil, errors.New("plan restore: no live state")
	}
	if !snap.ViaREST() || !live.ViaREST() {
		return nil, errors.New("plan restore through REST: both states must be captured through the Connect REST API")
	}
	return planStates(snap, live, opts, true)
}

// planREST is run.plan for a snapshot captured through the Connect REST
// API: the live state of the connectors in scope (those named, else the
// snapshot's) is captured through it too, as the undo snapshot; one
// Connect does not have is absent from it.
func (r *run) planREST(ctx context.Context, when string) (*Plan, error) {
	snap := r.req.Snapshot
	names := r.req.Connectors
	if len(names) == 0 {
		for _, c := range snap.Connectors {
			names = append(names, c.Name)
		}
	}
	live, err := capture.CaptureREST(ctx, r.Connect, capture.RESTOptions{
		Connectors:     names,
		SkipMissing:    true,
		ProgramVersion: snap.ProgramVersion,
		Reason:         snapshot.ReasonUndo,
		Warn:           func(msg string) { fmt.Fprintf(r.Warn, "warning: %s\n", msg) },
	})
	if err != nil {
		return nil, fmt.Errorf("plan restore of snapshot %s%s: read the live offsets through the Connect REST API: %w; nothing was written", snap.ID, when, err)
	}
	plan, err := PlanREST(snap, live, r.req.Options)
	if err == nil {
		plan.cloud = r.Connect.Cloud()
	}
	if err != nil {
		if errors.Is(err, ErrOtherCluster) && when == "" {
			return nil, refusal{fmt.Errorf("%w; nothing was written", err)}
		}
		return nil, fmt.Errorf("plan restore of snapshot %s%s: %w; nothing was written", snap.ID, when, err)
	}
	return plan, nil
}
