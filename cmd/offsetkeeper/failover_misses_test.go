package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestFailoverNamesTranslationMisses: a failback after a MirrorMaker 2
// failover, where the old primary has no copies under the new primary's
// topic names (primary.orders is orders there), leaves every sink
// partition untranslated. The dry run said nothing of them (it printed
// "0 sink commits" and would resume the sinks from the offsets the
// standby held), and the real run only counted them. Now both name them,
// by group and topic with the partitions and why, and --output json
// carries them in untranslated. Failover takes restore's --map-topic and
// --topic-prefix since (standby_maptopic.go): the flag that translates
// them is printed in the failover command that runs with it.
func TestFailoverNamesTranslationMisses(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	// By timestamp, the standby's copies are looked up under the same
	// names: it has only a.orders, a.clicks, ...
	args := []string{"failover", "--store", st, "--standby-brokers", w.standby, "--standby-translate", "timestamp",
		"--standby-connect-url", w.connect.URL}
	want := "connect-es-sink-orders (connector " + connectdemo.ConnSinkES + `) orders partitions 0,1,2,3,4,5: topic "orders" does not exist`
	for _, run := range []struct {
		extra []string
		left  string
	}{{[]string{"--dry-run"}, "would be left"}, {nil, "were left"}} {
		code, out, errs := runCLI(t, append(args, run.extra...)...)
		if code != 0 {
			t.Fatalf("failover %v: exit %d\n%s\n%s", run.extra, code, out, errs)
		}
		fits(t, "failover", out)
		if !strings.Contains(flat(out), "could not be translated and "+run.left+" as the standby has them") ||
			!strings.Contains(flat(out), want) || !strings.Contains(pasted(out, "offsetkeeper failover "), " --topic-prefix a.") {
			t.Errorf("failover %v does not name the misses (%q), or prints no failover with --topic-prefix a.:\n%s", run.extra, want, out)
		}
	}
	code, out, errs := runCLI(t, append(args, "--dry-run", "--output", "json")...)
	var doc failoverDocument
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Misses == 0 {
		t.Fatalf("failover --dry-run --output json: exit %d\n%s\n%s", code, out, errs)
	}
	n := 0
	for _, m := range doc.Untranslated {
		n += len(m.Partitions)
	}
	if n != doc.Misses {
		t.Errorf("untranslated holds %d partitions, translation_misses is %d: %+v", n, doc.Misses, doc.Untranslated)
	}
}
