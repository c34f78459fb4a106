package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// runKafkaTopicsPrinted runs a kafka-topics.sh --create or --alter
// command as printed, with kadm in place of the Java tool: against the
// brokers its --bootstrap-server names, with its own partition count,
// replication factor and configs. A placeholder such as <brokers> fails
// the test: pasted into a shell it is a redirection from a file.
func runKafkaTopicsPrinted(t *testing.T, cmd string) {
	t.Helper()
	args := strings.Fields(cmd)
	if len(args) == 0 || args[0] != "kafka-topics.sh" {
		t.Fatalf("not a kafka-topics.sh command: %q", cmd)
	}
	var bootstrap, topic, action string
	parts, rf := int32(-1), int16(-1)
	configs := map[string]*string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if strings.ContainsAny(a, "<>") {
			t.Fatalf("a placeholder in a printed command: %q in %s", a, cmd)
		}
		value := func() string {
			i++
			if i >= len(args) {
				t.Fatalf("%s without a value: %s", a, cmd)
			}
			return args[i]
		}
		switch a {
		case "--create", "--alter":
			action = a
		case "--bootstrap-server":
			bootstrap = value()
		case "--topic":
			topic = value()
		case "--partitions":
			n, err := strconv.Atoi(value())
			if err != nil {
				t.Fatalf("--partitions: %v in %s", err, cmd)
			}
			parts = int32(n)
		case "--replication-factor":
			n, err := strconv.Atoi(value())
			if err != nil {
				t.Fatalf("--replication-factor: %v in %s", err, cmd)
			}
			rf = int16(n)
		case "--config":
			k, v, ok := strings.Cut(value(), "=")
			if !ok {
				t.Fatalf("--config without =: %s", cmd)
			}
			configs[k] = &v
		default:
			t.Fatalf("an argument kafka-topics.sh does not take: %q in %s", a, cmd)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm, ctx := kadm.NewClient(cl), context.Background()
	switch action {
	case "--create":
		r, err := adm.CreateTopic(ctx, parts, rf, configs, topic)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	case "--alter":
		rs, err := adm.UpdatePartitions(ctx, int(parts), topic)
		if err == nil {
			err = rs[topic].Err
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	default:
		t.Fatalf("neither --create nor --alter: %s", cmd)
	}
}

// TestNotRestoredTopicCommandRunsAsPrinted: disaster recovery into an
// empty cluster with --create-topics where one sink topic does not exist
// there. The restore writes the rest and ends "not restored here" (exit
// 1), its dry run then too, each with the kafka-topics.sh command that creates
// the missing sink topic. That command named "--bootstrap-server
// <brokers>" (a redirection from a file, pasted into a shell) where the
// missing-offsets-topic message names the brokers; run as printed now, it
// creates the topic in the cluster restored into. The real run does not
// call the offsets topics it created and wrote "empty" (it did); it
// prints the same restore, whole (it said only "run the same restore
// again"); run as printed, it restores the rest (exit 0).
func TestNotRestoredTopicCommandRunsAsPrinted(t *testing.T) {
	b, args := drMissingSinkTopic(t)
	ctx := context.Background()
	// The real run first: it creates the Connect topics the dry run of an
	// empty cluster cannot plan without.
	var again []string // the real run's: the same restore, to run once the topic exists
	for _, dry := range []bool{false, true} {
		run := args
		what := "restore"
		if dry {
			run, what = append(append([]string{}, args...), "--dry-run"), "dry run"
		}
		_, stderr := b.mustRun(exitError, run...)
		if strings.Contains(flat(stderr), "stay, empty") {
			// The offsets topics it created hold what it wrote.
			t.Errorf("%s calls the topics it created and wrote to empty:\n%s", what, stderr)
		}
		cmds := checkAdvice(t, what, stderr)
		var topics []string
		for _, c := range cmds {
			if strings.HasPrefix(c, "kafka-topics.sh ") {
				topics = append(topics, c)
			} else if !dry {
				again = append(again, c)
			}
		}
		want := "kafka-topics.sh --bootstrap-server " + b.brokers + " --create --topic legacy.customers "
		if len(topics) != 1 || !strings.HasPrefix(topics[0], want) {
			t.Fatalf("%s: kafka-topics.sh commands %q, want one starting %q:\n%s", what, topics, want, stderr)
		}
		if dry {
			runKafkaTopicsPrinted(t, topics[0])
		}
	}
	// A fresh client: kadm's answers come from metadata cached a while.
	fresh, err := kgo.NewClient(kgo.SeedBrokers(b.kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if listed, err := kadm.NewClient(fresh).ListTopics(ctx); err != nil || !listed.Has("legacy.customers") {
		t.Fatalf("the printed command created no topic legacy.customers: %v %v", listed.Names(), err)
	}
	if len(again) != 1 || !strings.HasPrefix(again[0], "offsetkeeper restore ") || strings.HasSuffix(again[0], " --dry-run") {
		t.Fatalf("the real run prints %q, want the same restore to run again", again)
	}
	code, out, errs := b.runPrinted(again[0])
	if code != exitOK || !strings.Contains(out, "verified: ") || strings.Contains(out, "skipped") {
		t.Errorf("the same restore run again, as printed: exit %d\n%s\n%s", code, out, errs)
	}
	if got := b.groupOffsets("connect-legacy-jdbc-sink"); len(got) != 1 {
		t.Errorf("group connect-legacy-jdbc-sink after the restore ran again: %q", got)
	}
	// What Connect would read there (the demo's step 3), within 120
	// columns: its note of the other cluster was 135 wide.
	diff, _ := b.mustRun(exitOK, "diff", args[1], "--live", "--exit-code")
	fits(t, "diff --live", diff)
	if !strings.Contains(diff, "no differences") {
		t.Errorf("diff --live after the restore:\n%s", diff)
	}
}

// drMissingSinkTopic is a snapshot of the demo's cluster and an empty
// cluster to restore it into (the same store) that has every sink topic
// but legacy.customers, and the restore that does it.
func drMissingSinkTopic(t *testing.T) (*cluster, []string) {
	t.Helper()
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	id := a.snapshot()
	b := newCluster(t, nil, kfake.ClusterID("dr-not-restored"))
	b.store = a.store
	for topic, parts := range map[string]int32{"orders": 6, "clicks": 3, "invoices": 2} {
		if _, err := b.adm.CreateTopic(context.Background(), parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	return b, []string{"restore", id, "--allow-other-cluster", "--create-topics"}
}

// TestVerifyUnfinishedRestoreCommandRunsAsPrinted: a restore that ends
// "not restored here" keeps its record until it is run again; verify
// without brokers names it with the command that runs it again. That
// command was printed inside a line of prose some 400 columns wide; now
// every line fits in 120 columns, the command on lines of its own, and run
// as printed (once the topic exists) it finishes the restore: verify then
// passes.
func TestVerifyUnfinishedRestoreCommandRunsAsPrinted(t *testing.T) {
	b, args := drMissingSinkTopic(t)
	b.mustRun(exitError, args...)
	code, out, errs := runCLI(t, "verify", "--store", b.store)
	if code != exitError || !strings.Contains(out, "FAIL restore ") {
		t.Fatalf("verify after a restore not finished: exit %d\n%s\n%s", code, out, errs)
	}
	fits(t, "verify", out)
	cmds := printedCommands(t, out, "offsetkeeper")
	if len(cmds) != 1 || !strings.Contains(cmds[0], " --store "+b.store) {
		t.Fatalf("verify prints commands %q, want the restore run again with its store:\n%s", cmds, out)
	}
	if _, err := b.adm.CreateTopic(context.Background(), 1, -1, nil, "legacy.customers"); err != nil {
		t.Fatal(err)
	}
	code, out, errs = b.runPrinted(cmds[0])
	if code != exitOK || !strings.Contains(out, "verified: ") {
		t.Fatalf("the restore verify printed: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, "verify", "--store", b.store); code != exitOK || strings.Contains(out, "FAIL") {
		t.Errorf("verify once the restore ran again: exit %d\n%s\n%s", code, out, errs)
	}
}
