package restore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// NotInSnapshotError is the error of a restore that names connectors
// (--connector, or OLD of --rename-connector OLD=NEW) the snapshot does
// not have. It prints the show command that lists the snapshot's
// connectors, with the settings of the printing command (ShowWith): as
// "offsetkeeper show ID" alone it read the default store, not the one the
// restore was given, and failed.
type NotInSnapshotError struct {
	Snapshot string
	// Missing are the connectors named that it lacks.
	Missing []string
	// Rename tells they were named by --rename-connector.
	Rename bool
	// Show is the command that lists its connectors.
	Show string
}

func (e *NotInSnapshotError) Error() string {
	q := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		q[i] = fmt.Sprintf("%q", m)
	}
	what := "connector"
	if e.Rename {
		what = "--rename-connector: connector"
	}
	return fmt.Sprintf("%v %s: %s %s not found; its connectors are listed by: %s", ErrNotInSnapshot, e.Snapshot, what, strings.Join(q, ", "), e.show())
}

func (e *NotInSnapshotError) show() string {
	if e.Show == "" {
		return "offsetkeeper show " + ShellQuote(e.Snapshot)
	}
	return e.Show
}

// Unwrap matches ErrNotInSnapshot.
func (e *NotInSnapshotError) Unwrap() error { return ErrNotInSnapshot }

func (e *NotInSnapshotError) advisedCommands() []string { return []string{e.show()} }

// ShowOf is the show command of snap with the settings s carries (show
// takes restore's settings, and ignores those it does not use: the
// brokers, the Connect URL): show ID, or show --at TIME for the state at
// a moment (restore --at), whose ID is a description, not a snapshot's.
func (s CommandSettings) ShowOf(snap *snapshot.Snapshot) string {
	program := s.Program
	if program == "" {
		program = "offsetkeeper"
	}
	what := []string{"show", snap.ID}
	if snap.Reason == journal.ReasonAt {
		what = []string{"show", "--at", FormatMoment(snap.CreatedAt)}
	}
	return program + " " + quoteArgs(append(what, s.Flags...))
}

// withShow fills in the show command of a NotInSnapshotError with the
// run's settings, before the error is wrapped (the text is made then).
func (r *run) withShow(err error) {
	var nis *NotInSnapshotError
	if errors.As(err, &nis) {
		nis.Show = r.req.Commands.ShowOf(r.req.Snapshot)
	}
}
