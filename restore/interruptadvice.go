package restore

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// againAfterInterrupt adds to the error of a restore interrupted before it
// wrote anything the command that runs it again: Ctrl-C while it stopped
// the connectors ended with no word of what to run.
func (r *run) againAfterInterrupt(err error) error {
	if err == nil || !errors.Is(err, context.Canceled) || !r.nothingWritten() || r.req.DryRun || r.req.Again.Run == "" ||
		strings.Contains(err.Error(), r.req.Again.Run) {
		return err
	}
	return advise(fmt.Errorf("%w\nnothing was written; to restore, run it again: %s (check first: %s)", err, r.req.Again.Run, r.req.Again.DryRun),
		r.req.Again.Run, r.req.Again.DryRun)
}
