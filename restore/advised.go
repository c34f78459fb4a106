package restore

import (
	"fmt"
	"slices"
	"strings"
)

// AdvisedError is an error whose message advises commands to run: its
// message is Err's, one line, each command in it whole; Commands are
// all the commands it holds, as they run, so that a text printer can put each on
// lines of its own (english.Advice) instead of breaking it at a space,
// and --output json can carry them as they are.
type AdvisedError struct {
	Err      error
	Commands []string
}

func (e *AdvisedError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *AdvisedError) Unwrap() error { return e.Err }

// advise returns err carrying cmds (the empty ones left out): every
// command its message holds, so that a printer may wrap the rest of it at
// spaces (with none, it holds no command).
func advise(err error, cmds ...string) error {
	cmds = slices.DeleteFunc(slices.Clone(cmds), func(c string) bool { return c == "" })
	if err == nil {
		return nil
	}
	return &AdvisedError{Err: err, Commands: cmds}
}

// AdvisedCommands returns the commands the errors in err's tree carry
// (an *AdvisedError's, a *MissingTopicsError's), once each, in the order
// met; ok tells that some error there carries its commands, so that the
// text of err may be laid out with english.Advice.
func AdvisedCommands(err error) (cmds []string, ok bool) {
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if a, is := err.(interface{ advisedCommands() []string }); is {
			ok = true
			for _, c := range a.advisedCommands() {
				if !slices.Contains(cmds, c) {
					cmds = append(cmds, c)
				}
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return cmds, ok
}

func (e *AdvisedError) advisedCommands() []string { return e.Commands }

func (e *MissingTopicsError) advisedCommands() []string {
	cmds := make([]string, len(e.Topics))
	for i, m := range e.Topics {
		cmds[i] = m.Command()
	}
	return cmds
}

// rolledBack is err, after a restore that wrote and then failed, with the
// advice of rollBack and the commands it names.
func (r *run) rolledBack(err error, written []string) error {
	err = fmt.Errorf("%w; %s", err, r.rollBack(written))
	if r.carry != nil {
		return err // no command: the carry's advice is to delete a topic
	}
	undo := r.req.Commands.Snapshot(r.report.Undo)
	return advise(err, r.req.Again.Run, r.req.Again.DryRun, undo.Run, undo.DryRun)
}

// startIn is the curl command a leftStopped line ends with ("start it
// with: curl ..."), or "" when it names a REST request instead.
func startIn(line string) string {
	_, cmd, ok := strings.Cut(line, "start it with: ")
	if !ok || !strings.HasPrefix(cmd, "curl ") {
		return ""
	}
	return cmd
}
