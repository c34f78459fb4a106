package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestFailoverPrimaryKafkaDownConnectUp: the primary's Kafka is down, its
// Connect still answers, from memory, with its connectors RUNNING as it
// last knew them (AbstractHerder.connectors reads the config snapshot it
// holds, never Kafka). Failover refused with the switchover's advice:
// stop them on the primary, which a worker cannot do without its Kafka
// (a stop is written to its config topic), and only "--force fails over
// anyway" at the end. Now, with --brokers of the primary, the refusal
// says the primary's Kafka does not answer, why the stops cannot be done,
// the risk of --force, and prints the failover with --force, which run as
// printed fails over: the fence stored, the connectors resumed on the
// standby.
func TestFailoverPrimaryKafkaDownConnectUp(t *testing.T) {
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	mustCLI(t, 0, "snapshot", "--brokers", w.primary, "--store", st)
	prim, err := connectsimtest.Start(w.acl, connectsim.Options{KafkaWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prim.Close)
	prc, err := connectrest.New(connectrest.Config{URLs: []string{prim.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prc.Connectors(ctx); err != nil { // the worker's memory
		t.Fatal(err)
	}
	w.primaryCluster.Close()
	live, err := prc.Connectors(ctx)
	if err != nil {
		t.Fatalf("the primary's Connect does not answer from memory with its Kafka down: %v", err)
	}
	running := 0
	for _, e := range live {
		if e.Status != nil && e.Status.Connector.State == connectrest.StateRunning {
			running++
		}
	}
	if running == 0 {
		t.Fatal("the primary's Connect reports no connector RUNNING: the test needs one")
	}

	args := append([]string{"failover", "--store", st, "--connect-url", prim.URL, "--brokers", w.primary, "--kafka-timeout", "2s"}, w.flags()...)
	_, errs := mustCLI(t, exitRefused, append(args, "--dry-run")...)
	fits(t, "refusal", errs)
	cmd := pasted(errs, "offsetkeeper failover ")
	if !strings.Contains(flat(errs), "the primary's Kafka does not answer (connect to Kafka brokers "+w.primary) ||
		!strings.Contains(flat(errs), "cannot stop them") || !strings.Contains(flat(errs), "its risk:") ||
		!strings.Contains(cmd, " --force") || strings.Contains(cmd, "--dry-run") || strings.Contains(errs, "/stop\n") {
		t.Fatalf("the refusal does not say the primary's Kafka is down, the risk, and the failover with --force on a line "+
			"of its own (without curl stops that cannot run):\n%s", errs)
	}
	out, _ := mustCLI(t, 0, shellArgs(t, cmd)...)
	if !strings.Contains(out, "WARNING: --force: the primary's Connect still runs") || !strings.Contains(out, "failover done") {
		t.Errorf("the printed failover --force:\n%s", out)
	}
	s, err := store.OpenStore(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if f, err := standby.FenceOf(ctx, s, "primary"); err != nil || f == nil {
		t.Errorf("no fence of the primary after the printed failover: %v %v", f, err)
	}
	states, err := w.rc.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resumed := 0
	for _, s := range states {
		if s.Connector.State == connectrest.StateRunning {
			resumed++
		}
	}
	if resumed == 0 {
		t.Errorf("no connector runs on the standby after the printed failover: %v", states)
	}
}
