package web

import (
	"context"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// LastDrill is the board's line on the newest restore drill in the store
// (docs/drills.md).
type LastDrill struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Result string    `json:"result"`
	// Failed names the checks that failed; Failures counts their failures.
	Failed   []string `json:"failed,omitempty"`
	Failures int      `json:"failures"`
	State    string   `json:"state"`
	RTO      string   `json:"rto"`
	Drills   int      `json:"drills"`
}

// lastDrill reads the newest drill report of the store; nil when it holds
// none or it does not read (the page then says nothing of drills).
func (s *Server) lastDrill(ctx context.Context) *LastDrill {
	rep, n, err := drill.Last(ctx, s.src.Store)
	if err != nil {
		s.log().Warn("read the last drill report", "error", err)
		return nil
	}
	if rep == nil {
		return nil
	}
	state := rep.State.SnapshotID
	if state == "" {
		state = rep.State.Kind + " at " + rep.State.At.UTC().Format(time.RFC3339)
	}
	return &LastDrill{ID: rep.ID, At: rep.StartedAt, Result: strings.ToUpper(rep.Result), Failed: rep.Failed(), Failures: rep.FailedChecks(),
		State: state, RTO: time.Duration(rep.RTO.Restore).Round(time.Millisecond).String(), Drills: n}
}
