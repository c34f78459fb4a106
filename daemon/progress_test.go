package daemon

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// A run still going logs its progress (phase, records fetched so far) at
// each interval. The Snapshot func captures from Kafka with the daemon's
// Progress, then holds the run until the line is logged: nothing is timed.
func TestDaemonLogsProgressOfLongRun(t *testing.T) {
	t.Parallel()
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())

	progress := new(capture.Progress)
	capt := capture.NewCapturer(cl, capture.Options{Progress: progress})
	logged := make(chan struct{})
	d := &Daemon{
		Config:   Config{Schedule: "@every 1h", ProgressEvery: time.Millisecond},
		Store:    memStore(t),
		Progress: progress,
		Snapshot: func(ctx context.Context) (*snapshot.Snapshot, error) {
			snap, err := capt.Capture(ctx)
			select {
			case <-logged:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return snap, err
		},
	}
	r := start(t, d)
	line := regexp.MustCompile(`msg="snapshot run in progress" phase="read sink groups" records=([1-9][0-9]*) bytes=[1-9][0-9]* elapsed=`)
	waitFor(t, "a progress line with the records read", func() bool { return line.MatchString(r.logs.String()) })
	close(logged)
	waitFor(t, "the run to succeed", func() bool { return runs(t, d, ResultSuccess) >= 1 })
	r.stop(t)
	if got, want := line.FindStringSubmatch(r.logs.String())[1], fmt.Sprint(progress.State().Read); got != want {
		t.Errorf("logged records=%s, the capture read %s", got, want)
	}
}

// A run shorter than the interval logs no progress line.
func TestDaemonNoProgressLineForShortRun(t *testing.T) {
	t.Parallel()
	d := &Daemon{
		Config:   Config{Schedule: "@every 1h", ProgressEvery: time.Hour},
		Store:    memStore(t),
		Progress: new(capture.Progress),
		Snapshot: okSnapshot,
	}
	r := start(t, d)
	waitFor(t, "the run to succeed", func() bool { return runs(t, d, ResultSuccess) >= 1 })
	r.stop(t)
	if strings.Contains(r.logs.String(), "in progress") {
		t.Errorf("progress logged for a short run:\n%s", r.logs)
	}
}
