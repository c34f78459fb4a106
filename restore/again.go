package restore

import (
	"fmt"

	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// withAgain ends the error of a restore that left offsets not restored
// here (their topics do not exist yet) with the command that runs the
// same restore again once they do, whole, as the printing command was
// given it: "run the same restore again" alone left the operator to
// retype it, --stop-connectors --resume and all, or to run it without the
// flags that resume the connectors it left STOPPED. A dry run's error,
// and a request with no command to print, stay as they are.
func (r *run) withAgain(notRestored error) error {
	if notRestored == nil || r.req.DryRun {
		return notRestored
	}
	again := r.req.Again.Run
	if again == "" && r.req.Snapshot.Reason == journal.ReasonAt {
		again = r.req.Commands.At(r.req.Snapshot.CreatedAt, r.req.Connectors...).Run
	}
	if again == "" {
		return notRestored
	}
	return advise(fmt.Errorf("%w: %s", notRestored, again), again)
}
