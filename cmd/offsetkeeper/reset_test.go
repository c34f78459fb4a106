package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// shellArgs splits a printed command the way a POSIX shell would, for the
// quoting restore.ShellQuote writes (single quotes only).
func shellArgs(t *testing.T, cmd string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, has := false, false
	for _, r := range cmd {
		switch {
		case r == '\'':
			in, has = !in, true
		case r == ' ' && !in:
			if has {
				out = append(out, cur.String())
			}
			cur.Reset()
			has = false
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	if len(out) < 2 || out[0] != "offsetkeeper" {
		t.Fatalf("not an offsetkeeper command: %q", cmd)
	}
	return out[1:]
}

// runPrinted runs a command as printed, as pasted into the shell the
// printing command ran in: nothing added.
func (c *cluster) runPrinted(cmd string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errOut strings.Builder
	code = run(c.t.Context(), shellArgs(c.t, cmd), &out, &errOut)
	return code, out.String(), errOut.String()
}

// A bad reset, then a snapshot taken after it: restore latest names the
// reset and prints the commands that go back to just before it, the same
// commands events prints; those commands, run exactly as printed, bring
// back the offsets from just before the reset, source and sink, and diff
// --at that moment --live shows no difference.
func TestRestoreLatestAfterReset(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1h")
	c.waitJournal(time.Now(), logs)
	source, sink := connectdemo.ConnMongo, connectdemo.ConnSinkS3
	before := c.capture()

	c.badReset()
	c.waitJournal(moment(), logs)
	c.snapshot() // holds the damage
	// diff latest --live finds no differences (latest holds the damage):
	// it says so is no all-clear, and the events command it prints runs.
	hint, _ := c.mustRun(0, "diff", "latest", "--live", "--connector", source)
	if !strings.Contains(hint, "no differences") || !strings.Contains(hint, "no all-clear") || !strings.Contains(hint, " events --since ") {
		t.Errorf("diff latest --live after the reset gives no hint:\n%s", hint)
	} else {
		// A wide command is continued with " \": joined, it is as pasted.
		_, cmd, _ := strings.Cut(joinContinued(hint), "the restore to just before each reset: ")
		if code, out, errOut := c.runPrinted(strings.TrimSpace(cmd)); code != 0 || !strings.Contains(out, "undo:  ") {
			t.Errorf("%s: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}

	for _, conn := range []string{source, sink} {
		out, _ := c.mustRun(0, "restore", "latest", "--connector", conn, "--dry-run")
		for _, w := range []string{"WARNING: connector " + conn + " ", "this restores the state AFTER the reset", "to go back to just before the reset", "check: offsetkeeper restore --at ", "--dry-run", "undo:  offsetkeeper restore --at "} {
			if !strings.Contains(out, w) {
				t.Errorf("restore latest --connector %s --dry-run lacks %q:\n%s", conn, w, out)
			}
		}
		if !strings.HasPrefix(out, "WARNING: connector "+conn) {
			t.Errorf("the plan does not open with the reset:\n%s", out)
		}
		out, _ = c.mustRun(0, "restore", "latest", "--connector", conn, "--dry-run", "--output", "json")
		var doc restore.Document
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("restore --output json: %v\n%s", err, out)
		}
		if len(doc.AfterResets) == 0 {
			t.Fatalf("restore --output json: no after_resets:\n%s", out)
		}
		ar := doc.AfterResets[len(doc.AfterResets)-1]
		if ar.Connector != conn || ar.State != doc.Snapshot || ar.Count == 0 || !ar.Before.Before(ar.Time) && !ar.Before.Equal(ar.Time.Add(-time.Millisecond)) {
			t.Errorf("after_resets: %+v", ar)
		}

		// events prints the very same commands, given the same settings
		// (events itself does not use the brokers: it takes them to
		// repeat them).
		kafka := []string{"--brokers", c.brokers, "--kafka-timeout", "10s"}
		out, _ = c.mustRun(0, append([]string{"events", "--output", "json", "--connector", conn}, kafka...)...)
		var evs []eventJSON
		if err := json.Unmarshal([]byte(out), &evs); err != nil || len(evs) == 0 {
			t.Fatalf("events --output json: %v\n%s", err, out)
		}
		ev := evs[len(evs)-1]
		if ev.Undo != ar.Undo.Run || ev.UndoDryRun != ar.Undo.DryRun {
			t.Errorf("events and restore print different commands:\n%q %q\n%q %q", ev.UndoDryRun, ev.Undo, ar.Undo.DryRun, ar.Undo.Run)
		}
		for _, w := range []string{"--store " + c.store, "--connector " + conn} {
			if !strings.Contains(ev.Undo, w) || !strings.Contains(ev.UndoDryRun, w+" ") {
				t.Errorf("events' commands lack %q: %q, %q", w, ev.UndoDryRun, ev.Undo)
			}
		}
		text, _ := c.mustRun(0, append([]string{"events", "--connector", conn}, kafka...)...)
		if !strings.Contains(text, "check: "+ev.UndoDryRun+"\n") || !strings.Contains(text, "undo:  "+ev.Undo+"\n") {
			t.Errorf("events text lacks the commands:\n%s", text)
		}

		// Run as printed: the dry run writes nothing, the undo restores.
		if code, out, errOut := c.runPrinted(ev.UndoDryRun); code != 0 || !strings.Contains(out, "dry run: nothing written") {
			t.Fatalf("%s: exit %d\n%s%s", ev.UndoDryRun, code, out, errOut)
		}
		code, out, errOut := c.runPrinted(ev.Undo)
		if code != 0 || !strings.Contains(out, "verified: ") || strings.Contains(out, "AFTER the reset") {
			t.Fatalf("%s: exit %d\n%s%s", ev.Undo, code, out, errOut)
		}
		// The "after:" line, run as printed, shows no difference now.
		var after string
		for _, line := range strings.Split(text, "\n") {
			if a, ok := strings.CutPrefix(line, "  after: "); ok {
				after = a
			}
		}
		if code, out, errOut := c.runPrinted(after); code != 0 || !strings.Contains(out, "no differences") {
			t.Errorf("%s: exit %d\n%s%s", after, code, out, errOut)
		}
		at := restore.FormatMoment(ev.Before)
		out, _ = c.mustRun(0, "diff", "--at", at, "--live", "--connector", conn, "--exit-code")
		t.Logf("diff --at %s --live --connector %s:\n%s", at, conn, out)
	}
	// A snapshot taken after the undo is not called the damage: it says a
	// restore ran since.
	c.snapshot()
	out, _ := c.mustRun(0, "restore", "latest", "--connector", source, "--dry-run")
	// One note line per connector (wrapped at 120 columns), not the block.
	if !strings.HasPrefix(out, "note: connector "+source+": reset at ") || !strings.Contains(strings.ReplaceAll(out, "\n  ", " "), "then restored (undo snapshot ") ||
		strings.Contains(out, "WARNING: connector") || strings.Contains(out, "to go back to just before") {
		t.Errorf("restore latest after the undo:\n%s", out)
	}
	ownRestoresNoResets(t, c, logs, source, sink)
	now := c.capture()
	diffMaps(t, "source after the undo", sourceState(now.Filter([]string{source})), sourceState(before.Filter([]string{source})))
	sinkOffsets := func(s *snapshot.Snapshot) []string {
		g, _ := s.SinkGroupOf(sink)
		var out []string
		for _, o := range g.Offsets {
			out = append(out, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
		}
		slices.Sort(out)
		return out
	}
	if got, want := sinkOffsets(now), sinkOffsets(before); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("sink after the undo: %v, want %v", got, want)
	}
}

// The commands printed repeat the settings given on the command line, not
// those of the environment; a Connect URL known to the settings makes the
// real form stop and resume the connector.
func TestPrintedCommandsRepeatSettings(t *testing.T) {
	ev := snapshot.Event{Connector: "my conn", Before: time.Date(2026, 12, 2, 3, 10, 53, 122e6, time.UTC)}
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		run, dry string
	}{
		{name: "flags", args: []string{"--store", "file:///tmp/s", "--brokers", "k:9092", "--worker-config", "/etc/w.properties", "--tls", "--sasl-password", "secret"},
			dry: "offsetkeeper restore --at 2026-12-02T03:10:53.122Z --connector 'my conn' --brokers k:9092 --store file:///tmp/s --tls=true --worker-config /etc/w.properties --dry-run",
			run: "offsetkeeper restore --at 2026-12-02T03:10:53.122Z --connector 'my conn' --brokers k:9092 --store file:///tmp/s --tls=true --worker-config /etc/w.properties"},
		{name: "env", env: map[string]string{"OFFSETKEEPER_STORE": "file:///tmp/s", "OFFSETKEEPER_CONNECT_URL": "http://c:8083"},
			dry: "offsetkeeper restore --at 2026-12-02T03:10:53.122Z --connector 'my conn' --stop-connectors --resume --dry-run",
			run: "offsetkeeper restore --at 2026-12-02T03:10:53.122Z --connector 'my conn' --stop-connectors --resume"},
		{name: "connect-url", args: []string{"--connect-url", "http://c:8083", "--since", "-1h"},
			dry: "offsetkeeper restore --at 2026-12-02T03:10:53.122Z --connector 'my conn' --connect-url http://c:8083 --stop-connectors --resume --dry-run",
			run: "offsetkeeper restore --at 2026-12-02T03:10:53.122Z --connector 'my conn' --connect-url http://c:8083 --stop-connectors --resume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			e := &env{stdout: os.Stdout, stderr: os.Stderr, g: &globals{}}
			fs, _ := newFlagSet(eventsCommand, e)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			e.g.noteCmdLine(fs)
			if _, err := applyEnv(fs, os.LookupEnv); err != nil {
				t.Fatal(err)
			}
			got := undoCommands(e.g.commandSettings(), ev)
			if got.DryRun != tc.dry || got.Run != tc.run {
				t.Errorf("got\n%s\n%s\nwant\n%s\n%s", got.DryRun, got.Run, tc.dry, tc.run)
			}
		})
	}
}

// events on a store without a journal does not reassure: it says how
// resets are caught and exits 1.
func TestEventsNoJournal(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := run(t.Context(), []string{"events", "--store", store}, &out, &errOut)
	if code != exitError || !strings.Contains(errOut.String(), "resets are caught only while 'offsetkeeper daemon' runs with --journal-interval above 0") ||
		strings.Contains(out.String(), "no resets") {
		t.Errorf("events on a store without a journal: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
	}
}

// A refusal to translate offers the flag that fixes it, --connector to
// narrow, and --force only when no flag fixes it, saying what it turns off.
func TestUntranslatedAdvice(t *testing.T) {
	tr := &translate.Translation{Offsets: []translate.TranslatedOffset{
		{Connector: "a", Topic: "t", Untranslated: true, Fix: "--topic-prefix x."},
		{Connector: "b", Topic: "u"},
		{Connector: "c", Topic: "v", Untranslated: true},
	}}
	got := untranslatedAdvice(tr, tr.Untranslated()[:1])
	if want := " (to translate them, restore with --topic-prefix x.; to restore only the connectors that translate: --connector b --connector c)"; got != want {
		t.Errorf("with a fix:\n%s\nwant\n%s", got, want)
	}
	got = untranslatedAdvice(tr, tr.Untranslated())
	if !strings.Contains(got, "--connector b)") && !strings.Contains(got, "--connector b;") || !strings.Contains(got, "--force restores the others and leaves these as they are on the target, but it also turns off every safety check") {
		t.Errorf("without a fix: %s", got)
	}
}

// The daemon's snapshot run line and metrics count the source offsets the
// journal saw tombstoned or rewound since the previous run, as well as the
// sink offsets that moved back.
func TestDaemonRunCountsSourceResets(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	addr := freeAddr(t)
	logs := c.startDaemon("--journal-interval", "1s", "--schedule", "@every 1s", "--listen", addr)
	c.waitJournal(time.Now(), logs)
	c.badReset()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var found map[string]any
		for _, line := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "snapshot run" {
				if n, _ := m["source_tombstoned"].(float64); n > 0 {
					found = m
				}
			}
		}
		if found != nil {
			// badReset tombstones 2 keys of one connector and rewinds 3 (of
			// three connectors, the eos one in its own offsets topic).
			if found["source_tombstoned"] != 2.0 || found["source_rewound"].(float64) < 1 ||
				found["moved_backwards"].(float64) < found["sink_moved_backwards"].(float64)+2 {
				t.Errorf("snapshot run line: %v", found)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot run line counts the source reset:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, metrics, err := httpGet("http://" + addr + "/metrics")
	if err != nil || !strings.Contains(metrics, `offsetkeeper_source_offsets_moved_backwards{connector="`+connectdemo.ConnMongo+`",kind="source-tombstoned"}`) {
		t.Errorf("/metrics lacks the source gauge: %v\n%s", err, metrics)
	}
}

// ownRestoresNoResets checks, once the journal has read what the undos
// wrote, that offsetkeeper's own restores of connectors are no resets
// (issue 40: 28 of 33 resets were the tool's own, and the alert fired on
// every rollback): events lists each as "restored (undo ID)" after the one
// reset, and the daemon logged no "reset seen" for them.
func ownRestoresNoResets(t *testing.T, c *cluster, logs interface{ String() string }, connectors ...string) {
	t.Helper()
	// A config record that changes nothing (the connector is STOPPED
	// already) makes the journal write a segment after the undos' writes.
	c.stopConnectors(connectors[0])
	c.waitJournal(moment(), logs.(*testkit.SyncBuffer))
	for _, conn := range connectors {
		out, _ := c.mustRun(0, "events", "--output", "json", "--connector", conn)
		var evs []eventJSON
		if err := json.Unmarshal([]byte(out), &evs); err != nil {
			t.Fatal(err)
		}
		var resets, restored []string
		for _, e := range evs {
			if e.Kind == snapshot.EventRestored {
				restored = append(restored, e.RestoreID)
				if !strings.Contains(e.Undo, "restore "+e.RestoreID+" --connector "+conn) {
					t.Errorf("the roll back of restore %s: %q", e.RestoreID, e.Undo)
				}
			} else {
				resets = append(resets, e.Kind)
			}
		}
		if len(restored) == 0 || len(resets) == 0 {
			t.Errorf("events of %s: resets %v, restores %v:\n%s", conn, resets, restored, out)
		}
		// The reset is counted once per kind; the undo added none.
		seen := map[string]bool{}
		for _, k := range resets {
			if seen[k] {
				t.Errorf("events of %s lists %s twice (the tool's own restore taken for a reset):\n%s", conn, k, out)
			}
			seen[k] = true
		}
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"reset seen"`) && strings.Contains(line, `"connector":"`+conn+`"`) {
				n++
			}
		}
		if n != len(resets) {
			t.Errorf("the daemon logged %d resets of %s, the journal holds %d: the alert fired on a restore", n, conn, len(resets))
		}
		text, _ := c.mustRun(0, "events", "--connector", conn)
		if !strings.Contains(text, "  restored (undo "+restored[0]+")") {
			t.Errorf("events text lacks the restore:\n%s", text)
		}
	}
}
