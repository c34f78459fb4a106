package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// flat is text as one line of its words, its shell continuations joined:
// what a test compares once the text wraps at 120 columns.
func flat(s string) string { return strings.Join(strings.Fields(joinContinued(s)), " ") }

// printedCommands are the commands text prints on lines of their own
// (english.Advice's layout), each whole with its continuations joined, in
// order: lines starting with one of progs and a space. It fails the test
// when a command starts inside a line of prose, where wrapping could have
// broken it at a space.
func printedCommands(t *testing.T, text string, progs ...string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(joinContinued(text), "\n") {
		s := strings.TrimSpace(l)
		if f := strings.Fields(s); len(f) > 1 && strings.HasSuffix(f[1], ":") {
			continue // "offsetkeeper restore: ...", an error's first line
		}
		for _, p := range progs {
			switch {
			case strings.HasPrefix(s, p+" "):
				out = append(out, s)
			case strings.Contains(s, " "+p+" "):
				t.Errorf("a command inside prose: %s", l)
			}
		}
	}
	return out
}

// checkAdvice fails the test for a line of stderr wider than 120 columns
// or a command in it that is not on lines of its own, and returns the
// offsetkeeper and kafka-topics.sh commands it prints.
func checkAdvice(t *testing.T, what, stderr string) []string {
	t.Helper()
	fits(t, what, stderr)
	cmds := printedCommands(t, stderr, "offsetkeeper", "kafka-topics.sh")
	if t.Failed() {
		t.Logf("%s:\n%s", what, stderr)
	}
	return cmds
}

// withSuffix is the one command of cmds ending in suffix.
func withSuffix(t *testing.T, cmds []string, suffix string) string {
	t.Helper()
	var found []string
	for _, c := range cmds {
		if strings.HasSuffix(c, suffix) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d commands end in %q: %q", len(found), suffix, cmds)
	}
	return found[0]
}

// TestAdviceRunsAsPrinted (issues 40 and 42): the errors of a restore
// into a cluster without its Connect topics, of a restore refused by the
// restore lock and of one refused by the safety checks stay within 120
// columns on stderr, each command they advise on lines of its own (a
// command wrapped at a space and pasted a line at a time would run its
// first line alone); joined back, the commands run as printed and do what
// they say: the --create-topics dry run writes nothing, the real one
// restores, the restore advised after the lock is released restores. The
// kafka-topics.sh commands name the brokers and keep every flag; --output
// json carries the commands whole.
func TestAdviceRunsAsPrinted(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	a := newCluster(t, &spec)
	id := a.snapshot()
	a.badReset() // connectors running: its restore here is refused

	// Refused by the safety checks: nothing to paste, all of it fits.
	_, stderr := a.mustRun(exitRefused, "restore", id)
	if cmds := checkAdvice(t, "refused restore", stderr); len(cmds) != 0 || !strings.Contains(flat(stderr), " first") {
		t.Errorf("refused restore: commands %q, or no way ahead:\n%s", cmds, stderr)
	}

	// Missing topics.
	b := newCluster(t, nil, kfake.ClusterID("dr-advice"))
	b.store = a.store
	ctx := context.Background()
	for topic, parts := range map[string]int32{"orders": 6, "clicks": 3, "invoices": 2, "legacy.customers": 1} {
		if _, err := b.adm.CreateTopic(ctx, parts, -1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr = b.mustRun(exitError, "restore", id, "--allow-other-cluster")
	cmds := checkAdvice(t, "missing topics", stderr)
	topics := 0
	for _, c := range cmds {
		if strings.HasPrefix(c, "kafka-topics.sh ") {
			topics++
			if !strings.HasPrefix(c, "kafka-topics.sh --bootstrap-server "+b.brokers+" --create --topic ") ||
				!strings.Contains(c, " --partitions ") || !strings.Contains(c, " --replication-factor ") {
				t.Errorf("a kafka-topics.sh command lost a part: %s", c)
			}
		}
	}
	if topics == 0 {
		t.Errorf("no kafka-topics.sh command:\n%s", stderr)
	}
	dry := withSuffix(t, cmds, " --create-topics --dry-run")
	real := withSuffix(t, cmds, " --create-topics")

	// --output json: the restore's report carries the commands whole.
	code, out, _ := b.run("restore", id, "--allow-other-cluster", "-o", "json")
	var doc restore.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitError {
		t.Fatalf("-o json: exit %d, %v:\n%s", code, err, out)
	}
	if !sameSet(doc.Commands, cmds) {
		t.Errorf("the JSON report's commands %q, want the printed ones %q", doc.Commands, cmds)
	}

	code, out, errs := b.runPrinted(dry)
	if code != exitOK || !strings.Contains(flat(out), "dry run: nothing written the real run (the same restore without --dry-run) creates ") {
		t.Fatalf("printed dry run: exit %d\n%s\n%s", code, out, errs)
	}
	if listed, err := b.adm.ListTopics(ctx); err != nil || listed.Has(connectdemo.DefaultOffsetsTopic) {
		t.Fatalf("the printed dry run created a topic: %v %v", listed.Names(), err)
	}

	// The restore lock held by another restore of cluster b.
	st, err := store.OpenStore(ctx, b.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held, err := st.Restores().Lock(ctx, store.RestoreLock{ID: "other-restore", Snapshot: id, Cluster: "dr-advice"}, false)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = b.runPrinted(real)
	if code != exitRefused {
		t.Fatalf("printed restore under another's lock: exit %d\n%s\n%s", code, out, errs)
	}
	again := checkAdvice(t, "lock refusal", errs)
	if len(again) != 1 || !strings.Contains(flat(errs), "one restore at a time per cluster") {
		t.Fatalf("lock refusal: commands %q:\n%s", again, errs)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errs = b.runPrinted(again[0])
	if code != exitOK || !strings.Contains(out, "verified: ") {
		t.Fatalf("the restore the lock refusal printed: exit %d\n%s\n%s", code, out, errs)
	}
	// A fresh client: kadm's answers come from metadata cached a while.
	fresh, err := kgo.NewClient(kgo.SeedBrokers(b.kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if listed, err := kadm.NewClient(fresh).ListTopics(ctx); err != nil || !listed.Has(connectdemo.DefaultOffsetsTopic) {
		t.Fatalf("the printed restore created no offsets topic: %v %v\n%s\n%s", listed.Names(), err, out, errs)
	}
}

// sameSet tells whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
