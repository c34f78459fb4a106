package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestCreateTopicsDryRunEmptyCluster: restore --create-topics --dry-run
// into a cluster that has nothing yet failed on the offsets topic it
// would create ("dry run: nothing written; --create-topics creates ...
// first") and showed no plan. Now it plans as if the topics it would
// create existed empty: it names each topic with its partitions and
// cleanup.policy=compact, shows every write and the sink topics still
// missing (with the commands that create them), creates and writes
// nothing. Once the sink topics exist, the printed dry run shows every
// write, and the same command without --dry-run, as printed, restores.
func TestCreateTopicsDryRunEmptyCluster(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	a.stopAll()
	id := a.snapshot()

	b := newCluster(t, nil, kfake.ClusterID("empty-dr"))
	b.store = a.store
	ctx := context.Background()
	_, stderr := b.mustRun(1, "restore", id, "--allow-other-cluster")
	m := regexp.MustCompile(`(offsetkeeper restore .*? --create-topics) check first: (offsetkeeper restore .*? --create-topics --dry-run)`).FindStringSubmatch(flat(stderr))
	if m == nil {
		t.Fatalf("no --create-topics command in:\n%s", stderr)
	}
	real, dry := m[1], m[2]
	if dry != real+" --dry-run" {
		t.Fatalf("the dry run %q is not the real run %q with --dry-run", dry, real)
	}
	code, out, errs := b.runPrinted(dry)
	t.Logf("dry run into an empty cluster:\n%s\n%s", out, errs)
	text := flat(out + errs)
	for _, want := range []string{
		"dry run: --create-topics would create topic connect-offsets (Connect offsets topic, 25 partitions as in the snapshot, cleanup.policy=compact",
		"dry run: --create-topics would create topic connect-configs (Connect config topic, 1 partition",
		"connector mongodb-connector (source, no config) source connect-offsets/",
		"dry run: nothing written",
		"the real run (the same restore without --dry-run) creates connect-offsets,",
		"kafka-topics.sh --bootstrap-server " + strings.Join(b.kc.ListenAddrs(), ",") + " --create --topic orders --partitions 6",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the dry run lacks %q", want)
		}
	}
	if code != 1 || !strings.Contains(text, "skipped") || strings.Contains(text, "cannot describe the config of offsets topic") ||
		strings.Contains(text, "cannot check for open transactions") {
		t.Errorf("the dry run: exit %d, want 1 (the sink topics are missing, as the real run would end) with no warning about the topics it creates", code)
	}
	if m := regexp.MustCompile(`plan: (\d+) source writes`).FindStringSubmatch(text); m == nil || m[1] == "0" {
		t.Errorf("the dry run shows no source writes")
	}
	if listed, err := b.adm.ListTopics(ctx); err != nil || len(listed.Names()) != 0 {
		t.Fatalf("the dry run created topics: %v %v", listed.Names(), err)
	}

	// The sink topics as the printed kafka-topics.sh commands create them
	// (no Kafka tools here: the same topics through the admin API).
	for _, c := range regexp.MustCompile(`--create --topic (\S+) --partitions (\d+)`).FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(c[2])
		if _, err := b.adm.CreateTopic(ctx, int32(n), -1, nil, c[1]); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = b.runPrinted(dry)
	t.Logf("dry run once the sink topics exist:\n%s\n%s", out, errs)
	text = flat(out + errs)
	if code != 0 || !regexp.MustCompile(`plan: \d+ source writes, 0 tombstones, [1-9]\d* sink commits`).MatchString(text) || strings.Contains(text, "skipped") {
		t.Fatalf("the printed dry run once the sink topics exist: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = b.runPrinted(real)
	if code != 0 || !strings.Contains(out, "verified: ") || !strings.Contains(out, "created topic connect-offsets (") {
		t.Fatalf("the printed %s: exit %d\n%s\n%s", real, code, out, errs)
	}
	b.mustRun(0, "diff", id, "--live", "--exit-code")
}
