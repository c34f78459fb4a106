package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// termBuffer is a stderr that says it is a terminal.
type termBuffer struct{ bytes.Buffer }

func (*termBuffer) IsTerminal() bool { return true }

// withProgressAfter sets when the progress line first shows, for one test.
// 0 makes it show for any run (its final line at least), so the output can
// be checked without timing anything.
func withProgressAfter(t *testing.T, after time.Duration) {
	t.Helper()
	saved := progressTiming
	progressTiming.after, progressTiming.every = after, time.Millisecond
	t.Cleanup(func() { progressTiming = saved })
}

// runStderr runs the CLI against this cluster with stderr as given.
func (c *cluster) runStderr(stderr interface {
	Write([]byte) (int, error)
	String() string
}, args ...string) (int, string, string) {
	c.t.Helper()
	var out bytes.Buffer
	args = append(args, "--store", c.store, "--brokers", c.brokers, "--kafka-timeout", "10s")
	code := run(context.Background(), args, &out, stderr)
	return code, out.String(), stderr.String()
}

var finalSnapshotLine = regexp.MustCompile(`\r\x1b\[Ksnapshot: done: ([0-9,]+) records read \([0-9.]+ (B|KiB|MiB)\), [0-9.]+m?s\n`)

func TestProgressSnapshotOnTerminal(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	withProgressAfter(t, 0)

	code, stdout, stderr := c.runStderr(new(termBuffer), "snapshot")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := finalSnapshotLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr lacks the final progress line:\n%q", stderr)
	}
	// The data records of the config and offsets topics were counted: some
	// and at most their end offsets (which count transaction markers too).
	var ends int64
	for _, topic := range append(offsetsTopics(), snapshot.DefaultConfigTopic) {
		for _, end := range c.ends(topic)[topic] {
			ends += end
		}
	}
	got, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil || got == 0 || got > ends {
		t.Errorf("progress counted %s records read, the topics end at %d in all", m[1], ends)
	}
	// The same count on a second run: what was fetched, not a timing.
	_, _, again := c.runStderr(new(termBuffer), "snapshot")
	if m2 := finalSnapshotLine.FindStringSubmatch(again); m2 == nil || m2[1] != m[1] {
		t.Errorf("second run: %q, first counted %s", again, m[1])
	}
	if strings.Contains(stdout, "records read") {
		t.Errorf("progress went to stdout:\n%s", stdout)
	}
}

// Nothing is shown before the threshold, when stderr is a pipe (auto), or
// with --progress never; --progress always shows it on a pipe, a line at
// a time.
func TestProgressShownOnlyWhenAsked(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	for _, tc := range []struct {
		name  string
		after time.Duration
		term  bool
		args  []string
		want  string
	}{
		{"threshold not reached", time.Hour, true, nil, ""},
		{"pipe", 0, false, nil, ""},
		{"never", 0, true, []string{"--progress", "never"}, ""},
		{"always on a pipe", 0, false, []string{"--progress", "always"}, "snapshot: done: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withProgressAfter(t, tc.after)
			var stderr interface {
				Write([]byte) (int, error)
				String() string
			} = new(bytes.Buffer)
			if tc.term {
				stderr = new(termBuffer)
			}
			code, stdout, got := c.runStderr(stderr, append([]string{"snapshot"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, got)
			}
			switch {
			case tc.want == "" && strings.Contains(got, "records read"):
				t.Errorf("progress shown:\n%q", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("stderr lacks %q:\n%q", tc.want, got)
			case tc.want != "" && strings.Contains(got, "\r"):
				t.Errorf("a pipe got terminal control characters:\n%q", got)
			}
		})
	}
	code, _, stderr := c.runStderr(new(bytes.Buffer), "snapshot", "--progress", "sometimes")
	if code != exitUsage || !strings.Contains(stderr, "want auto, always or never") {
		t.Errorf("--progress sometimes: exit %d\n%s", code, stderr)
	}
}

func TestProgressRestoreOnTerminal(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	c.badReset()
	withProgressAfter(t, 0)

	code, stdout, stderr := c.runStderr(new(termBuffer), "restore", id)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// badReset is undone with 6 source writes and 1 tombstone (7 records),
	// and commits into 2 groups.
	re := regexp.MustCompile(`\r\x1b\[Krestore: done: [0-9,]+ records read \([^)]*\), 7 written, 2 groups committed, [0-9.]+m?s\n`)
	if !re.MatchString(stderr) {
		t.Errorf("stderr lacks the final progress line:\n%q", stderr)
	}
}

// The line names the stage and the capture phase within it.
func TestProgressLine(t *testing.T) {
	var p capture.Progress
	p.SetStage(capture.PhasePlan)
	p.SetPhase(capture.PhaseOffsets)
	st := p.State()
	st.Elapsed = 2500 * time.Millisecond
	if got, want := progressLine(st, false), "plan: read offsets topics: 0 records read (0 B), 2.5s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	p.Written(1234567)
	p.GroupCommitted()
	st = p.State()
	st.Elapsed = time.Minute
	if got, want := progressLine(st, true), "done: 0 records read (0 B), 1,234,567 written, 1 group committed, 1m0s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Text written to the terminal while a progress line is drawn clears the
// line first: it never runs on after it.
func TestProgressWrapClearsLine(t *testing.T) {
	screen := new(termBuffer)
	v := &progressView{w: screen, term: true, stop: func() {}}
	out := v.Wrap(screen)
	v.draw("restore: plan: 5 records read (1 B), 2s", false)
	out.Write([]byte("connector a (source, STOPPED)\n"))
	out.Write([]byte("plan: 1 source write\n"))
	v.draw("restore: done: 5 records read (1 B), 3s", true)
	want := "\r\x1b[Krestore: plan: 5 records read (1 B), 2s\r\x1b[Kconnector a (source, STOPPED)\nplan: 1 source write\n\r\x1b[Krestore: done: 5 records read (1 B), 3s\n"
	if got := screen.String(); got != want {
		t.Errorf("screen:\n%q\nwant\n%q", got, want)
	}
	// Not a terminal: the writer is left as is.
	var pipe bytes.Buffer
	if w := (&progressView{w: &pipe}).Wrap(&pipe); w != &pipe {
		t.Errorf("a pipe's writer was wrapped")
	}
}
