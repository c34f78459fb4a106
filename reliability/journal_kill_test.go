package reliability

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// startDaemonBin starts the daemon binary journaling every second; kill
// ends it with SIGKILL.
func (c *cluster) startDaemonBin(t *testing.T) (logs *testkit.SyncBuffer, kill func()) {
	t.Helper()
	logs, signal := c.startDaemonBinArgs(t)
	return logs, func() { signal(syscall.SIGKILL) }
}

// startDaemonBinArgs is startDaemonBin with more flags (a later flag wins);
// signal sends sig and waits for the daemon to exit (but for SIGSTOP).
func (c *cluster) startDaemonBinArgs(t *testing.T, args ...string) (logs *testkit.SyncBuffer, signal func(os.Signal) error) {
	t.Helper()
	args = append([]string{"daemon", "--journal-interval", "1s", "--schedule", "@every 1h",
		"--leader-election=false", "--listen", "", "--log-format", "json"}, args...)
	cmd := exec.Command(binary(t), args...)
	cmd.Env = cleanEnv(c.env()...)
	errb := &testkit.SyncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var exit error
	go func() { exit = cmd.Wait(); close(done) }()
	signal = func(sig os.Signal) error {
		if sig == syscall.SIGSTOP { // freezes it: nothing to wait for
			return cmd.Process.Signal(sig)
		}
		_ = cmd.Process.Signal(sig)
		select {
		case <-done:
			return exit
		case <-time.After(time.Minute):
			t.Fatalf("daemon did not exit within a minute of %v", sig)
			return nil
		}
	}
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = signal(syscall.SIGKILL)
		}
	})
	return errb, signal
}

// segments counts the journal segments in the store and checks that
// every epoch's chain is whole.
func segments(t *testing.T, s *store.Store) int {
	t.Helper()
	l, err := s.Journal().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range l.Epochs {
		chain, hole := e.Chain()
		if hole != nil {
			t.Fatalf("epoch %s: %v", e.ID, hole)
		}
		n += len(chain)
	}
	return n
}

// TestKillDaemonJournal: a change committed just before the daemon is
// killed with SIGKILL is restorable afterwards: the restarted daemon
// continues the journal from the store, without a gap, reading the
// records the topic still holds; the store's segments verify.
func TestKillDaemonJournal(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	st := c.openStore()
	_, signal := c.startDaemonBinArgs(t)
	eventually(t, 30*time.Second, "a first segment", func() bool { return segments(t, st) > 0 })

	// Frozen first, so that it can neither read the change nor write it
	// to the journal before it dies: the change is only in the topic.
	if err := signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	change := &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: []byte(`{"incrementing":4242}`)}
	c.produce(change)
	// The moment the producer stamped the change (Kafka keeps its
	// millisecond, at or before it): the state at it holds the change.
	committed := change.Timestamp
	_ = signal(syscall.SIGKILL)
	killed := segments(t, st)
	if cov, err := st.Journal().Coverage(context.Background()); err != nil || len(cov) == 0 || !cov[len(cov)-1].To.Before(committed) {
		t.Fatalf("the dead daemon's journal already covers the change (%v, %v): the restart would not be tested", cov, err)
	}

	// A second daemon continues the journal where the store ends.
	logs, _ := c.startDaemonBin(t)
	eventually(t, 30*time.Second, "the journal continued after the restart", func() bool {
		return strings.Contains(logs.String(), "journal continues from the store") && segments(t, st) > killed
	})
	if strings.Contains(logs.String(), `"reason":"gap"`) || strings.Contains(logs.String(), "could not continue") {
		t.Fatalf("the restart broke the journal:\n%s", logs.String())
	}
	// Damage the connector after the restart, then put it back as it was
	// at the moment of the kill.
	c.produce(&kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc})
	after := time.Now()
	eventually(t, 30*time.Second, "the journal observed the damage", func() bool {
		cov, err := st.Journal().Coverage(context.Background())
		return err == nil && len(cov) > 0 && cov[len(cov)-1].To.After(after)
	})
	at := committed.UTC().Format(time.RFC3339Nano)
	r := c.mustBin(0, "show", "--at", at, "--output", "connect-rest", "--connector", connectdemo.ConnJDBC)
	if !strings.Contains(r.stdout, `"incrementing":4242`) {
		t.Fatalf("the state at %s lacks the change committed before the kill:\n%s\n%s", at, r.stdout, r.stderr)
	}
	c.mustBin(0, "restore", "--at", at, "--connector", connectdemo.ConnJDBC)
	got := topicState(c.capture(), connectdemo.DefaultOffsetsTopic)
	found := false
	for k, v := range got {
		if strings.Contains(k, string(jdbc)) {
			found = v == `{"incrementing":4242}`
		}
	}
	if !found {
		t.Fatalf("after restore --at %s the connector's offset is not the one committed before the kill", at)
	}
	c.mustBin(0, "verify")
}

// TestTermDaemonFlushesJournal: SIGTERM makes the daemon write what its
// journal tail holds before it exits (a clean stop loses nothing, however
// long the interval), and it logs no error while stopping.
func TestTermDaemonFlushesJournal(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	st := c.openStore()
	logs, signal := c.startDaemonBinArgs(t, "--journal-interval", "1h")
	eventually(t, 30*time.Second, "the journal's epoch started", func() bool {
		return strings.Contains(logs.String(), "journal epoch started")
	})
	before := segments(t, st)

	jdbc := key(connectdemo.ConnJDBC, `{"protocol":"1","table":"shop.orders"}`)
	change := &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: jdbc, Value: []byte(`{"incrementing":5151}`)}
	c.produce(change)
	committed := change.Timestamp // as in TestKillDaemonJournal
	if err := signal(syscall.SIGTERM); err != nil {
		t.Fatalf("daemon exit after SIGTERM: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "journal flushed before stopping") || segments(t, st) != before+1 {
		t.Fatalf("no last segment written on SIGTERM (%d segments before, %d after):\n%s", before, segments(t, st), logs.String())
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("the daemon logged an error while stopping:\n%s", logs.String())
	}
	at := committed.UTC().Format(time.RFC3339Nano)
	r := c.mustBin(0, "show", "--at", at, "--output", "connect-rest", "--connector", connectdemo.ConnJDBC)
	if !strings.Contains(r.stdout, `"incrementing":5151`) {
		t.Fatalf("the state at %s lacks the change committed before SIGTERM:\n%s\n%s", at, r.stdout, r.stderr)
	}
}
