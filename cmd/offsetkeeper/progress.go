package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
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
	fs.Func("progress", "show the phase and the records read and written on stderr once the work takes over 2s: `auto|always|never` (auto, the default: when stderr is a terminal)", func(s string) error {
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

// progressView is a progress line being shown; see progressFlag.start.
type progressView struct {
	w    io.Writer
	term bool
	stop func()

	mu sync.Mutex
	// drawn is set while a line without its newline sits on a terminal.
	drawn bool
}

// start shows the progress of p on w, as what ("snapshot", "restore"),
// once the work has taken progressTiming.after: on a terminal one line
// redrawn in place, otherwise (--progress always) a line each time. Stop
// ends it with the final line; nothing is printed when the work ended
// sooner, with --progress never, or in auto mode when w is not a terminal.
func (f progressFlag) start(w io.Writer, what string, p *capture.Progress) *progressView {
	v := &progressView{w: w, term: stderrTerminal(w), stop: func() {}}
	if f == progressNever || (f == progressAuto && !v.term) {
		return v
	}
	tick := time.NewTicker(progressTiming.every)
	stopWatch := p.Watch(progressTiming.after, tick.C, time.Now, func(st capture.ProgressState, done bool) {
		v.draw(what+": "+progressLine(st, done), done)
	})
	v.stop = func() {
		tick.Stop()
		stopWatch()
	}
	return v
}

// Stop ends the progress line; it may be called more than once.
func (v *progressView) Stop() { v.stop() }

func (v *progressView) draw(line string, done bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.term && done:
		fmt.Fprintf(v.w, "\r\x1b[K%s\n", line)
		v.drawn = false
	case v.term:
		fmt.Fprintf(v.w, "\r\x1b[K%s", line)
		v.drawn = true
	default:
		fmt.Fprintln(v.w, line)
	}
}

// Wrap returns out, which clears the progress line on the terminal before
// each write (the next tick draws it again below), so that text written
// to the same screen never runs on after it.
func (v *progressView) Wrap(out io.Writer) io.Writer {
	if !v.term {
		return out
	}
	return clearingWriter{v: v, out: out}
}

// Logger returns log, or on a terminal a logger like it that writes
// through Wrap: a log line clears the progress line instead of running on
// after it (and is not written while the line is drawn).
func (v *progressView) Logger(g *globals, log *slog.Logger) *slog.Logger {
	if !v.term {
		return log
	}
	l, err := g.logger(v.Wrap(v.w))
	if err != nil {
		return log
	}
	return l
}

type clearingWriter struct {
	v   *progressView
	out io.Writer
}

func (c clearingWriter) Write(b []byte) (int, error) {
	c.v.mu.Lock()
	defer c.v.mu.Unlock()
	if c.v.drawn {
		fmt.Fprint(c.v.w, "\r\x1b[K")
		c.v.drawn = false
	}
	return c.out.Write(b)
}

// progressLine describes st in one line: "read offsets topics: 120,000
// records read (11.4 MiB), 3s".
func progressLine(st capture.ProgressState, done bool) string {
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
