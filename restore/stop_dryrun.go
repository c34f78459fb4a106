package restore

import (
	"fmt"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// wouldFinish is finish in a dry run: a dry run stops nothing, so what it
// holds are the connectors restores that did not finish stopped (inherit).
// It says what the real run would do with them and touches none: a dry run
// that resumed them would start connectors whose offsets are still the
// damage the restore was to undo.
func (s *stopper) wouldFinish() {
	var back, held []string
	for _, sc := range s.stopped {
		switch {
		case s.hold[sc.name]:
			held = append(held, sc.name)
		case sc.target == snapshot.StatePaused:
			back = append(back, sc.name+" (pause again)")
		default:
			back = append(back, sc.name+" (resume)")
		}
	}
	var b strings.Builder
	switch {
	case !s.resume:
		fmt.Fprintf(&b, "dry run: the real run would leave %s STOPPED (no --resume): %s", plural(len(s.stopped), "connector", "connectors"), strings.Join(s.names(), ", "))
	case len(back) > 0:
		fmt.Fprintf(&b, "dry run: --resume would put back %s: %s", plural(len(back), "connector", "connectors"), strings.Join(back, ", "))
		if len(held) > 0 {
			fmt.Fprintf(&b, "; and leave STOPPED (offsets not restored here): %s", strings.Join(held, ", "))
		}
	default:
		fmt.Fprintf(&b, "dry run: the real run would leave STOPPED (offsets not restored here): %s", strings.Join(held, ", "))
	}
	b.WriteString("; nothing was resumed")
	fmt.Fprintln(s.out, english.Wrap(b.String(), lineWidth, "  "))
}

// wouldStop is stop in a dry run: it names the connectors the real run
// would stop, wrapped within the line width as the real run's "stopping"
// line is.
func (s *stopper) wouldStop(todo []ConnectorPlan) {
	fmt.Fprintln(s.out, english.Wrap(fmt.Sprintf("dry run: --stop-connectors would stop %s first: %s", plural(len(todo), "connector", "connectors"), strings.Join(planNames(todo), ", ")), lineWidth, "  "))
}
