package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestRestoreCreateTopics: disaster recovery onto an empty cluster is one
// command. Without --create-topics the restore names the missing topics
// and prints the exact command with --create-topics (and its dry run);
// run as printed, the dry run says what it would create, shows the plan
// of what it would write (exit 0) and creates
// nothing, and the real run creates the Connect topics (the offsets
// topics with the snapshot's partition counts, the config topic with 1,
// the status topic with Connect's 5), each cleanup.policy=compact,
// restores every offset and verifies; diff --live then finds no
// difference.
func TestRestoreCreateTopics(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	a.stopAll()
	id := a.snapshot()
	snap := a.capture()

	b := newCluster(t, nil, kfake.ClusterID("dr-cluster"))
	b.store = a.store
	ctx := context.Background()
	for topic, parts := range map[string]int32{"orders": 6, "clicks": 3, "invoices": 2, "legacy.customers": 1} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr := b.mustRun(1, "restore", id, "--allow-other-cluster")
	// Each command is on lines of its own, continued with " \" where wide.
	m := regexp.MustCompile(`as the snapshot had them \(compacted, its partition counts\): (offsetkeeper restore .*? --create-topics) check first: (offsetkeeper restore .*? --create-topics --dry-run)`).FindStringSubmatch(flat(stderr))
	if m == nil || strings.Contains(stderr, "<") {
		t.Fatalf("no --create-topics command (or a placeholder) in:\n%s", stderr)
	}
	code, out, errs := b.runPrinted(m[2])
	flat := strings.Join(strings.Fields(out+errs), " ") // wrapped at 120 columns
	// The plan, as if the topics existed empty (it failed on the missing
	// offsets topic before, exit 1, with no plan).
	if code != 0 || !strings.Contains(flat, "dry run: --create-topics would create topic connect-offsets (Connect offsets topic, 25 partitions as in the snapshot, cleanup.policy=compact, replication factor the broker's default)") ||
		!strings.Contains(flat, "dry run: nothing written the real run (the same restore without --dry-run) creates connect-offsets,") {
		t.Fatalf("printed dry run: exit %d\n%s\n%s", code, out, errs)
	}
	if listed, err := b.adm.ListTopics(ctx); err != nil || listed.Has(connectdemo.DefaultOffsetsTopic) {
		t.Fatalf("the dry run created a topic: %v %v", listed.Names(), err)
	}
	code, out, errs = b.runPrinted(m[1])
	if code != 0 || !strings.Contains(out, "verified: ") {
		t.Fatalf("printed restore: exit %d\n%s\n%s", code, out, errs)
	}
	want := map[string]int32{connectdemo.DefaultConfigsTopic: 1, "connect-status": 5}
	for _, tp := range snap.Topics {
		want[tp.Name] = int32(len(tp.Partitions))
	}
	// A fresh client: kadm's answers come from metadata cached a while.
	fresh, err := kgo.NewClient(kgo.SeedBrokers(b.kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	adm := kadm.NewClient(fresh)
	details, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, details.Names()...)
	if err != nil {
		t.Fatal(err)
	}
	for topic, parts := range want {
		if got := int32(len(details[topic].Partitions)); got != parts {
			t.Errorf("topic %s created with %d partitions, want %d", topic, got, parts)
		}
		rc, err := configs.On(topic, nil)
		if err != nil {
			t.Fatalf("config of %s: %v", topic, err)
		}
		policy := ""
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil {
				policy = *c.Value
			}
		}
		if policy != "compact" {
			t.Errorf("topic %s cleanup.policy=%q, want compact", topic, policy)
		}
		if !strings.Contains(out, "created topic "+topic+" (") {
			t.Errorf("output does not name topic %s created:\n%s", topic, out)
		}
	}
	if len(want) < 4 || want[snapshot.DefaultOffsetsTopic] == 0 {
		t.Fatalf("the snapshot records too few topics to prove anything: %v", want)
	}
	b.mustRun(0, "diff", id, "--live", "--exit-code")
	// Again: nothing to create, nothing to do.
	if out, _ = b.mustRun(0, "restore", id, "--allow-other-cluster", "--create-topics"); strings.Contains(out, "created topic") || !strings.Contains(out, "nothing to do") {
		t.Errorf("again:\n%s", out)
	}
}
