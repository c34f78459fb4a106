package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestRestoreDisasterRecovery walks a DR into an empty cluster as an
// operator would: with no topic there, the dry run and the real run both
// exit 1 naming every topic to create (offsets topics compacted, sink
// topics) in one message, and write nothing; with only the offsets topics
// created (10 partitions instead of 25), both exit 1 again: the source
// offsets are restored and verified, the sink offsets are "not restored
// here", with no rollback advice and outcome partial; once the sink topics
// exist the same restore finishes (exit 0), and diff --live --exit-code
// finds no difference although every key moved partition.
func TestRestoreDisasterRecovery(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	a.stopAll()
	id := a.snapshot()

	b := newCluster(t, nil, kfake.ClusterID("dr-cluster"))
	b.store = a.store
	ctx := context.Background()
	sinkTopics := map[string]int32{"orders": 6, "clicks": 3, "invoices": 2, "legacy.customers": 1}

	restoreArgs := []string{"restore", id, "--allow-other-cluster"}
	dry := append(append([]string{}, restoreArgs...), "--dry-run")
	_, dryErr := b.mustRun(1, dry...)
	_, realErr := b.mustRun(1, restoreArgs...)
	for _, stderr := range []string{flat(dryErr), flat(realErr)} { // wrapped to 120 columns
		for _, want := range []string{
			"--create --topic connect-offsets --partitions 25 --replication-factor 3 --config cleanup.policy=compact",
			"--create --topic payments-cdc-offsets --partitions 5 --replication-factor 3 --config cleanup.policy=compact",
			"create them, then run the same restore again",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("missing topics: stderr lacks %q:\n%s", want, stderr)
			}
		}
		for _, topic := range []string{"orders", "clicks", "legacy.customers"} {
			if !strings.Contains(stderr, "--create --topic "+topic+" --partitions ") {
				t.Errorf("missing topics: stderr does not name sink topic %s:\n%s", topic, stderr)
			}
		}
		if strings.Contains(stderr, "roll back") {
			t.Errorf("rollback advice with nothing written:\n%s", stderr)
		}
	}
	if got := b.storeIDs(); len(got) != 1 {
		t.Fatalf("a restore that wrote nothing stored an undo snapshot: %v", got)
	}

	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, parts := range map[string]int32{connectdemo.DefaultOffsetsTopic: 10, connectdemo.EOSOffsetsTopic: 5} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, compact, topic); err != nil {
			t.Fatal(err)
		}
	}
	dryOut, dryErr := b.mustRun(1, dry...)
	out, stderr := b.mustRun(1, restoreArgs...)
	for _, s := range []string{dryErr, stderr} {
		if !strings.Contains(s, "not restored here") || !strings.Contains(s, "then run the same restore again") || strings.Contains(s, "roll back") || strings.Contains(s, "differs from the snapshot") {
			t.Errorf("sink topics missing:\n%s", s)
		}
		if strings.Contains(s, "connect-offsets") {
			t.Errorf("an offsets topic that exists is named missing:\n%s", s)
		}
	}
	if !strings.Contains(dryOut, "dry run: nothing written") || !strings.Contains(out, "verified: ") || strings.Contains(out, "roll back") {
		t.Errorf("partial restore output:\ndry run:\n%s\nreal run:\n%s", dryOut, out)
	}
	code, jsonOut, _ := b.run(append(dry, "--output", "json")...)
	var doc struct {
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &doc); err != nil || code != 1 || doc.Outcome != "partial" {
		t.Errorf("--dry-run --output json: exit %d, outcome %q (%v), want 1 and partial", code, doc.Outcome, err)
	}

	for topic, parts := range sinkTopics {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	b.mustRun(0, dry...)
	out, _ = b.mustRun(0, restoreArgs...)
	if !strings.Contains(out, "verified: ") {
		t.Errorf("restore once the topics exist:\n%s", out)
	}
	out, _ = b.mustRun(0, "diff", id, "--live", "--exit-code")
	if !strings.Contains(out, "no differences") {
		t.Errorf("diff --live after the restore into 10 partitions:\n%s", out)
	}
	// The snapshot's keys are on 25 partitions, the new cluster's on 10.
	if n := b.partitions(connectdemo.DefaultOffsetsTopic); n != 10 {
		t.Fatal(fmt.Sprint("connect-offsets has ", n, " partitions"))
	}
}
