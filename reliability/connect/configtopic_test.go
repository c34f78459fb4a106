package connect

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestRealWorkerConfigTopicRecreated: the config topic deleted and created
// again under a running Connect 3.8 worker. The worker keeps running both
// connectors from memory (its REST API still reports them RUNNING), so a
// restore said "nothing to do", exit 0, and --create-connectors created
// nothing: the configs were gone from the topic, and the worker's next
// restart dropped the connectors. Now every plan warns, naming the
// connectors, and prints what to run once the workers restart; a restore
// with --create-connectors before the restart is refused (exit 3) with the
// same advice. After the restart (the connectors gone), the printed
// command, run as printed, creates both with the snapshot's configs,
// writes their offsets, starts them, and the pipeline carries on exactly
// once.
func TestRealWorkerConfigTopicRecreated(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	p := newPipeline(t, realconnect.Options{}, t.TempDir()+"/store")
	p.feed(3)
	p.createSource("")
	p.createSink()
	p.settle()
	id := p.snapshot()
	ctx := context.Background()
	if _, err := p.adm.DeleteTopic(ctx, "connect-configs"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "connect-configs"); err != nil {
		t.Fatal(err)
	}
	p.rest.WaitState(srcName, "RUNNING", 1) // from memory

	dry := p.bin(0, "restore", id, "--dry-run")
	// A command wider than 120 columns is printed with " \\" continuations:
	// joined back, it is the command as the shell runs it.
	flat := strings.Join(strings.Fields(strings.ReplaceAll(dry.stdout, " \\\n", " ")), " ")
	if !strings.Contains(flat, "WARNING: Connect runs 2 connectors file-sink, file-src from memory, but the config topic connect-configs holds no config for them") {
		t.Fatalf("no warning in the plan:\n%s", dry)
	}
	m := regexp.MustCompile(`their offsets written before they start: (\S*offsetkeeper restore \S+ .*?--create-connectors)`).FindStringSubmatch(flat)
	if m == nil || strings.Contains(m[1], "<") || strings.Contains(m[1], " URL") {
		t.Fatalf("no command to run after the restart (or a placeholder):\n%s", dry)
	}
	printed := strings.Fields(m[1])[1:]
	before := p.bin(3, printed...)
	if !strings.Contains(before.stderr, "Restart the workers") || strings.Contains(before.stdout, "created:") {
		t.Fatalf("--create-connectors before the restart:\n%s", before)
	}

	p.w.Stop()
	p.w = realconnect.Start(t, p.c, realconnect.Options{})
	p.rest = p.w.REST(t)
	if got := p.rest.Must(200, "GET", "/connectors", nil).Body; strings.TrimSpace(string(got)) != "[]" {
		t.Fatalf("after the restart the worker still has %s", got)
	}
	r := p.bin(0, printed...)
	for _, want := range []string{"created: 2 connectors STOPPED", "resumed: connector " + srcName, "resumed: connector " + sinkName} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the printed restore lacks %q:\n%s", want, r)
		}
	}
	p.feed(2)
	p.settle() // every record exactly once, in order
}
