package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// waitOutput waits until out holds want, failing if the demo ends first.
func waitOutput(t *testing.T, out, errs *testkit.SyncBuffer, done chan int, want string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(out.String(), want); {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("demo ended (exit %d) before printing %q:\n%s\n%s", code, want, out.String(), errs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo never printed %q:\n%s", want, out.String())
		}
	}
}

// TestDemoDisasterRecovery rehearses docs/restore.md's DR on demo --empty
// as a new user would: into the empty cluster the dry run and the real run
// exit 1 alike, naming every missing topic in one message; connect-offsets
// deleted under the running demo pauses its busy connectors (the demo
// lives on) and they continue once it is back; the restore then brings
// every source offset back byte for byte.
func TestDemoDisasterRecovery(t *testing.T) {
	t.Chdir(t.TempDir())
	kport, cport := freePorts(t, 6), freePorts(t, 2)
	for cport+1 >= kport && cport <= kport+5 { // both free now, but not both ours later
		cport = freePorts(t, 2)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var out, errs testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--empty", "--port", strconv.Itoa(kport), "--rest-port", strconv.Itoa(cport), "--churn-every", "100ms"}, &out, &errs)
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("demo: exit %d\n%s", code, errs.String())
		}
	}()
	waitOutput(t, &out, &errs, done, "Ctrl-C stops both clusters.")
	brokers := "127.0.0.1:" + strconv.Itoa(kport)
	emptyBrokers := "127.0.0.1:" + strconv.Itoa(kport+3)
	emptyURL := "http://127.0.0.1:" + strconv.Itoa(cport+1)
	for _, want := range []string{emptyURL, emptyClusterID, "restore latest --allow-other-cluster --brokers " + emptyBrokers} {
		if !strings.Contains(joinContinued(out.String()), want) {
			t.Errorf("the walk-through lacks %q:\n%s", want, out.String())
		}
	}

	// Into the empty cluster: the same error and exit code, dry run or not.
	into := []string{"restore", "latest", "--allow-other-cluster", "--brokers", emptyBrokers, "--kafka-timeout", "10s"}
	var msgs []string
	for _, args := range [][]string{append(into, "--dry-run"), into} {
		code, _, stderr := runCLI(t, args...)
		if code != exitError {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, stderr)
		}
		for _, topic := range []string{"connect-offsets", "payments-cdc-offsets", "orders", "clicks"} {
			if !strings.Contains(stderr, "--create --topic "+topic+" ") {
				t.Errorf("%v does not name topic %s:\n%s", args, topic, stderr)
			}
		}
		msgs = append(msgs, stderr[strings.Index(stderr, "offsetkeeper restore:"):])
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the dry run and the real run disagree:\n%s\n%s", msgs[0], msgs[1])
	}

	// connect-offsets deleted under the running demo, then created again.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.DeleteTopic(ctx, "connect-offsets"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, &errs, done, "demo: topic connect-offsets does not exist (deleted?): connector ")
	if _, err := adm.CreateTopic(ctx, 25, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "connect-offsets"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, &errs, done, "demo: topic connect-offsets is back: ")

	connectURL := "http://127.0.0.1:" + strconv.Itoa(cport)
	code, rout, rerr := runCLI(t, "restore", "latest", "--allow-other-cluster", "--brokers", brokers, "--connect-url", connectURL,
		"--stop-connectors", "--resume", "--kafka-timeout", "10s")
	if code != exitOK {
		t.Fatalf("restore after connect-offsets came back: exit %d\n%s\n%s", code, rout, rerr)
	}
	code, dout, derr := runCLI(t, "diff", "latest", "--live", "--brokers", brokers, "--output", "json")
	var changes []restore.Change
	if code != exitOK || json.Unmarshal([]byte(dout), &changes) != nil {
		t.Fatalf("diff: exit %d\n%s\n%s", code, dout, derr)
	}
	for _, c := range changes {
		if c.Type == "source" {
			t.Errorf("source offset not back byte for byte: %+v", c)
		}
	}
}
