package restore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestWaitStoppedAndStates: waitStopped waits out a lagging status and a
// sink member that leaves late, and says what it is still waiting for
// when it gives up; waitStates sees a resumed connector run again.
func TestWaitStoppedAndStates(t *testing.T) {
	_, cl := testkit.Cluster(t)
	exp, err := connectdemo.Seed(t.Context(), cl, connectdemo.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Stop()
	srv, err := connectsimtest.Start(cl, connectsim.Options{StopLag: 3, SinkMembers: true, MemberLeaveDelay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	topic := connectdemo.DefaultConfigsTopic
	names := []string{connectdemo.ConnMySQL, connectdemo.ConnSinkES, connectdemo.ConnDeleted}

	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	err = waitStopped(short, rc, cl, topic, names, []string{connectdemo.GroupSinkES})
	cancel()
	if !errors.Is(err, ErrNotStopped) || !strings.Contains(err.Error(), `connector "inventory-connector": REST status RUNNING, 1 task, waiting for STOPPED`) {
		t.Fatalf("wait on running connectors: %v", err)
	}

	for _, n := range names[:2] {
		if err := rc.Stop(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	long, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := waitStopped(long, rc, cl, topic, names, []string{connectdemo.GroupSinkES}); err != nil {
		t.Fatal(err)
	}

	if err := rc.Resume(ctx, connectdemo.ConnMySQL); err != nil {
		t.Fatal(err)
	}
	if err := rc.Pause(ctx, connectdemo.ConnSinkES); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{connectdemo.ConnMySQL: connectrest.StateRunning, connectdemo.ConnSinkES: connectrest.StatePaused}
	if err := waitStates(long, rc, cl, topic, want, map[string]resumeWant{connectdemo.ConnMySQL: {tasks: 1}}); err != nil {
		t.Fatal(err)
	}
}

// TestWaitStatesResumedMeansTasks: a resumed connector RUNNING with fewer
// tasks than it had is not resumed yet, and a task that FAILED ends the
// wait at once with its trace.
func TestWaitStatesResumedMeansTasks(t *testing.T) {
	_, cl := testkit.Cluster(t)
	exp, err := connectdemo.Seed(t.Context(), cl, connectdemo.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Stop()
	srv, err := connectsimtest.Start(cl, connectsim.Options{ResumeLag: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	topic := connectdemo.DefaultConfigsTopic
	name := connectdemo.ConnMySQL
	if err := rc.Stop(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := rc.Resume(ctx, name); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{name: connectrest.StateRunning}
	short, cancel := context.WithTimeout(ctx, time.Second)
	err = waitStates(short, rc, cl, topic, want, map[string]resumeWant{name: {tasks: 1}})
	cancel()
	if !errors.Is(err, ErrNotStopped) || !strings.Contains(err.Error(), `REST status RUNNING, waiting for RUNNING with 1 task`) {
		t.Fatalf("wait for a connector RUNNING without its task: %v", err)
	}

	// A second server over the same cluster, without the lag.
	if err := rc.Stop(ctx, name); err != nil {
		t.Fatal(err)
	}
	srv2, err := connectsimtest.Start(cl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	srv2.FailTasks(name, "org.apache.kafka.connect.errors.ConnectException: boom\n\tat Task.start")
	rc2, err := connectrest.New(connectrest.Config{URLs: []string{srv2.URL}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc2.Resume(ctx, name); err != nil {
		t.Fatal(err)
	}
	long, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = waitStates(long, rc2, cl, topic, want, map[string]resumeWant{name: {tasks: 1}})
	if err == nil || errors.Is(err, ErrNotStopped) || !strings.Contains(err.Error(), `connector "inventory-connector" task 0 FAILED`) || !strings.Contains(err.Error(), "ConnectException: boom") {
		t.Fatalf("wait for a connector whose task failed: %v", err)
	}
}
