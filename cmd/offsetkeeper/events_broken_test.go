package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestEventsBrokenEpochSaysSo is an incident nobody rehearsed: the store
// lost the journal segment that recorded a reset (and the merged levels
// that held it). events used to answer "no resets since ..." and exit 0,
// the reset gone without a word. Now it warns that the epoch is broken,
// from when, and prints the diff across the hole and the verify; both run
// as printed, the diff showing the reset's damage.
func TestEventsBrokenEpochSaysSo(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	c.waitJournal(time.Now(), logs)
	c.badReset()
	c.waitJournal(moment(), logs)

	var evs []eventJSON
	out, _ := c.mustRun(0, "events", "--output", "json", "--connector", connectdemo.ConnMongo)
	if err := json.Unmarshal([]byte(out), &evs); err != nil || len(evs) == 0 {
		t.Fatalf("events of %s: %v\n%s", connectdemo.ConnMongo, err, out)
	}
	// A change after the reset puts a segment after the one lost: a lost
	// newest segment leaves no hole (the daemon writes it again).
	c.stopConnectors(connectdemo.ConnMongo)
	c.waitJournal(moment(), logs)
	epoch := filepath.Join(c.store, "journal", evs[0].Epoch)
	raw, _ := filepath.Glob(filepath.Join(epoch, "0", fmt.Sprintf("%016x-*.seg", evs[0].Segment)))
	merged, _ := filepath.Glob(filepath.Join(epoch, "[12]", "*.seg"))
	if len(raw) != 1 {
		t.Fatalf("no raw segment %d in %s", evs[0].Segment, epoch)
	}
	for _, f := range append(raw, merged...) {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}

	// The brokers given, as the demo's events line gives them: the diff
	// across the newest epoch's hole reads the live cluster.
	text, _ := c.mustRun(0, "events", "--connector", connectdemo.ConnMongo, "--brokers", c.brokers)
	if !strings.Contains(text, "warning: journal epoch "+evs[0].Epoch+" is broken") {
		t.Fatalf("events says nothing of the broken epoch:\n%s", text)
	}
	var diff, verify string
	for _, l := range strings.Split(joinContinued(text), "\n") {
		switch l = strings.TrimSpace(l); {
		case strings.HasPrefix(l, "offsetkeeper diff "):
			diff = l
		case strings.HasPrefix(l, "offsetkeeper verify "):
			verify = l
		}
	}
	if diff == "" || verify == "" {
		t.Fatalf("the warning lacks its commands:\n%s", text)
	}
	code, dout, derr := c.runPrinted(diff)
	if code != 0 || !strings.Contains(dout, "connector "+connectdemo.ConnMongo) || !strings.Contains(dout, "vanished") {
		t.Errorf("%s: exit %d, the reset's damage not shown:\n%s%s", diff, code, dout, derr)
	}
	code, vout, verr := c.runPrinted(verify)
	// Every snapshot is whole: verify says what still restores, not "do
	// not restore them".
	if code != 1 || !strings.Contains(vout+verr, "segment "+fmt.Sprint(evs[0].Segment)+" is missing") ||
		!strings.Contains(verr, "every snapshot is whole: restore --at still restores") {
		t.Errorf("%s: exit %d, want 1 naming segment %d:\n%s%s", verify, code, evs[0].Segment, vout, verr)
	}
	// list names the broken epoch within 120 columns, its cause under the
	// table.
	lout, _ := c.mustRun(0, "list")
	for _, l := range strings.Split(lout, "\n") {
		if n := len([]rune(l)); n > 120 {
			t.Errorf("list: a line of %d columns: %s", n, l)
		}
	}
	if !strings.Contains(joinWrapped(lout), "epoch "+evs[0].Epoch+": broken after ") {
		t.Errorf("list does not say why the epoch is broken:\n%s", lout)
	}
	// Its commands carry the store: run as printed they read this one.
	for _, l := range strings.Split(joinContinued(lout), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "offsetkeeper ") {
			continue
		}
		code, out, errOut := c.runPrinted(l)
		switch {
		case strings.HasPrefix(l, "offsetkeeper verify "):
			if code != 1 || !strings.Contains(out+errOut, "is missing") {
				t.Errorf("%s: exit %d, want 1 naming the segment missing:\n%s%s", l, code, out, errOut)
			}
		case strings.HasPrefix(l, "offsetkeeper drill --list"):
			if code != 0 || !strings.Contains(out, "passed") && !strings.Contains(out, "failed") {
				t.Errorf("%s: exit %d, no drill of this store listed:\n%s%s", l, code, out, errOut)
			}
		default:
			t.Errorf("list prints a command this test does not know: %s", l)
		}
	}
	// JSON stays the list; the warning goes to stderr.
	jout, jerr := c.mustRun(0, "events", "--output", "json")
	if !json.Valid([]byte(jout)) || !strings.Contains(jerr, "is broken") {
		t.Errorf("events --output json: stdout valid %v, stderr:\n%s", json.Valid([]byte(jout)), jerr)
	}
}
