package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// progressTiming is when the progress line of snapshot and restore first
// shows and how often it is redrawn. Tests shorten it.
var progressTiming = struct{ after, every time.Duration }{2 * time.Second, 500 * time.Millisecond}

// Values of --progress.
const (
	progressAuto   = "auto"
	progressAlways = "always"
	progressNever  = "never"
)

// progressFlag is --progress of snapshot and restore (a per-run choice).
type progressFlag string

func (f *progressFlag) register(fs *flag.FlagSet) {
	*f = progressAuto
	fs.Func("progress", "show records read and written and the phase on stderr once the work takes over 2s: auto (when stderr is a terminal), always, or never (default auto)", func(s string) error {
		switch s {
		case progressAuto, progressAlways, progressNever:
			*f = progressFlag(s)
			return nil
		}
		return fmt.Errorf("want auto, always or never")
	})
}

// stderrTerminal reports whether w is a terminal (isTerminal), or a
// writer that says so (tests).
func stderrTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	return isTerminal(w)
}

// start shows the progress of p on w, as what ("snapshot", "restore"),
// once the work has taken progressTiming.after: on a terminal one line
// redrawn in place, otherwise (--progress always) a line each time. The
// returned stop ends it with the final line; nothing is printed when the
// work ended sooner, with --progress never, or in auto mode when w is not
// a terminal.
func (f progressFlag) start(w io.Writer, what string, p *snapshot.Progress) (stop func()) {
	term := stderrTerminal(w)
	if f == progressNever || (f == progressAuto && !term) {
		return func() {}
	}
	tick := time.NewTicker(progressTiming.every)
	stopWatch := p.Watch(progressTiming.after, tick.C, time.Now, func(st snapshot.ProgressState, done bool) {
		line := what + ": " + progressLine(st, done)
		switch {
		case term && done:
			fmt.Fprintf(w, "\r\x1b[K%s\n", line)
		case term:
			fmt.Fprintf(w, "\r\x1b[K%s", line)
		default:
			fmt.Fprintln(w, line)
		}
	})
	return func() {
		tick.Stop()
		stopWatch()
	}
}

// progressLine describes st in one line: "read offsets topics: 120,000
// records read (11.4 MiB), 3s".
func progressLine(st snapshot.ProgressState, done bool) string {
	var b strings.Builder
	if done {
		b.WriteString("done")
	} else {
		b.WriteString(st.Phase)
	}
	fmt.Fprintf(&b, ": %s records read (%s)", thousands(st.Read), byteSize(st.Bytes))
	if st.Written > 0 || st.Groups > 0 {
		fmt.Fprintf(&b, ", %s written, %s committed", thousands(st.Written), plural(int(st.Groups), "group", "groups"))
	}
	fmt.Fprintf(&b, ", %s", st.Elapsed.Round(100*time.Millisecond))
	return b.String()
}

// thousands prints n with commas: 1,234,567.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// byteSize prints n bytes as B, KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
