package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// End-to-end tests of issue 13, "Trust in an incident": each drives run()
// as a user runs the binary.

// mixed is a store of full, scoped and undo snapshots over several days.
type mixed struct {
	store string
	// full are the full snapshots, oldest first; scoped is the snapshot
	// --connector of orders, newer than every full one; undo are three
	// undo snapshots, newer still.
	full   []string
	scoped string
	undo   []string
}

// mixedStore writes a mixed store: full snapshots (connectors orders and
// billing) daily from 5 days ago, then a scoped snapshot of orders, then
// three undo snapshots of billing, all within the last day.
func mixedStore(t *testing.T) mixed {
	t.Helper()
	m := mixed{store: filepath.Join(t.TempDir(), "store")}
	st, err := store.OpenStore(context.Background(), m.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	put := func(reason string, age time.Duration, scope ...string) string {
		t.Helper()
		snap := &snapshot.Snapshot{ClusterID: "c1", Reason: reason, Scope: scope, CreatedAt: now.Add(-age)}
		names := scope
		if len(names) == 0 {
			names = []string{"billing", "orders"}
		}
		for _, n := range names {
			snap.Connectors = append(snap.Connectors, snapshot.Connector{Name: n, Type: snapshot.TypeSink, Tasks: -1})
		}
		info, err := st.Snapshots().Put(context.Background(), snap)
		if err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	for d := 5; d >= 2; d-- {
		m.full = append(m.full, put(snapshot.ReasonScheduled, time.Duration(d)*24*time.Hour))
	}
	m.scoped = put(snapshot.ReasonManual, 20*time.Hour, "orders")
	for _, h := range []int{10, 5, 1} {
		m.undo = append(m.undo, put(snapshot.ReasonUndo, time.Duration(h)*time.Hour, "billing"))
	}
	return m
}

// listed returns the store's snapshots as list --output json prints them.
func listed(t *testing.T, sto string) []snapshot.Info {
	t.Helper()
	code, out, errs := runCLI(t, "list", "--store", sto, "--output", "json")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s", code, errs)
	}
	var infos []snapshot.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil {
		t.Fatalf("list --output json: %v\n%s", err, out)
	}
	return infos
}

// What broke: with full snapshots, one snapshot --connector and three undo
// snapshots in the store, prune --keep-daily 1 (and --keep-last 2) kept the
// scoped and an undo snapshot and removed the last full one.
func TestPruneAlwaysKeepsAFullSnapshot(t *testing.T) {
	for _, rule := range [][]string{
		{"--keep-last", "1"}, {"--keep-last", "2"}, {"--keep-hourly", "1"}, {"--keep-daily", "1"},
		{"--keep-weekly", "1"}, {"--keep-monthly", "1"}, {"--keep-within", "1h"},
		{"--keep-within", "1h", "--keep-undo-within", "0"}, {"--keep-undo-within", "1m"},
	} {
		t.Run(strings.Join(rule, " "), func(t *testing.T) {
			m := mixedStore(t)
			dry, _ := mustCLI(t, 0, append([]string{"prune", "--store", m.store, "--dry-run"}, rule...)...)
			out, _ := mustCLI(t, 0, append([]string{"prune", "--store", m.store}, rule...)...)
			left := listed(t, m.store)
			var ids []string
			for _, i := range left {
				ids = append(ids, i.ID)
			}
			if !slices.Contains(ids, m.full[len(m.full)-1]) {
				t.Fatalf("the newest full snapshot %s was removed; left %v\n%s", m.full[len(m.full)-1], ids, out)
			}
			// prune says, per snapshot, its kind and why.
			for _, line := range strings.Split(dry, "\n") {
				switch {
				case strings.Contains(line, m.full[len(m.full)-1]):
					if !strings.HasPrefix(line, "keep ") || !strings.Contains(line, " full ") || !strings.Contains(line, "newest full snapshot") {
						t.Errorf("newest full snapshot's line: %q", line)
					}
				case strings.Contains(line, m.scoped):
					if !strings.Contains(line, " scoped ") || !strings.Contains(line, " orders ") {
						t.Errorf("scoped snapshot's line: %q", line)
					}
				case strings.Contains(line, m.undo[0]):
					if !strings.Contains(line, " undo ") || !strings.Contains(line, "billing") {
						t.Errorf("undo snapshot's line: %q", line)
					}
				}
			}
		})
	}

	// The default keep-undo-within (30d) keeps the young scoped and undo
	// snapshots, which take no --keep-last slot.
	m := mixedStore(t)
	mustCLI(t, 0, "prune", "--store", m.store, "--keep-last", "2")
	var ids []string
	for _, i := range listed(t, m.store) {
		ids = append(ids, i.ID)
	}
	want := append(slices.Clone(m.full[2:]), m.scoped)
	want = append(want, m.undo...)
	if !slices.Equal(ids, want) {
		t.Errorf("--keep-last 2 left %v, want %v", ids, want)
	}

	// --keep-undo-within is a retention setting: it has an env twin.
	m = mixedStore(t)
	t.Setenv("OFFSETKEEPER_KEEP_UNDO_WITHIN", "2h")
	mustCLI(t, 0, "prune", "--store", m.store, "--keep-last", "2")
	ids = nil
	for _, i := range listed(t, m.store) {
		ids = append(ids, i.ID)
	}
	if want := append(slices.Clone(m.full[2:]), m.undo[2]); !slices.Equal(ids, want) {
		t.Errorf("OFFSETKEEPER_KEEP_UNDO_WITHIN=2h --keep-last 2 left %v, want %v", ids, want)
	}

	// --output json: kept and removed, with kind and why.
	m = mixedStore(t)
	out, _ := mustCLI(t, 0, "prune", "--store", m.store, "--keep-daily", "1", "--keep-undo-within", "6h", "--output", "json")
	var res pruneResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("prune --output json: %v\n%s", err, out)
	}
	if res.Kept != 3 || res.Removed != 5 || len(res.Snapshots) != 8 || res.DryRun {
		t.Fatalf("prune --output json: %+v", res)
	}
	for _, d := range res.Snapshots {
		if len(d.Why) == 0 || d.Kind == "" {
			t.Errorf("decision without kind or why: %+v", d)
		}
		if d.ID == m.undo[0] && (d.Action != "remove" || d.Kind != snapshot.KindUndo) {
			t.Errorf("the 10-hour-old undo snapshot: %+v", d)
		}
	}
}

// mustCLI runs the CLI and fails the test unless it exits with want.
func mustCLI(t *testing.T, want int, args ...string) (stdout, stderr string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != want {
		t.Fatalf("offsetkeeper %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout, stderr
}

// What broke: after snapshot --connector mongodb-connector, latest was
// that scoped snapshot: diff latest --live saw 15 connectors "appear", and
// restore latest --connector inventory-connector found no such connector.
func TestLatestIsTheNewestFullSnapshot(t *testing.T) {
	m := mixedStore(t)
	newestFull := m.full[len(m.full)-1]
	out, _ := mustCLI(t, 0, "show", "latest", "--store", m.store)
	if !strings.HasPrefix(out, "snapshot "+newestFull+"\n") {
		t.Errorf("show latest is not the newest full snapshot %s:\n%s", newestFull, out)
	}
	if !strings.Contains(out, "no task commit") || strings.Contains(out, "tasks -1") {
		t.Errorf("show prints a missing task commit as tasks -1:\n%s", out)
	}
	// With --connector, the newest snapshot that holds it: the scoped one
	// for orders, the full one for billing (the undo ones never).
	out, _ = mustCLI(t, 0, "show", "latest", "--connector", "orders", "--store", m.store)
	if !strings.HasPrefix(out, "snapshot "+m.scoped+"\n") {
		t.Errorf("show latest --connector orders is not the scoped snapshot %s:\n%s", m.scoped, out)
	}
	out, _ = mustCLI(t, 0, "show", "latest", "--connector", "billing", "--store", m.store)
	if !strings.HasPrefix(out, "snapshot "+newestFull+"\n") {
		t.Errorf("show latest --connector billing is not %s:\n%s", newestFull, out)
	}

	// list shows kind and scope, in text and JSON.
	infos := listed(t, m.store)
	kinds := map[string]string{}
	for _, i := range infos {
		kinds[i.ID] = i.Kind + " " + strings.Join(i.Scope, ",")
	}
	if kinds[newestFull] != "full " || kinds[m.scoped] != "scoped orders" || kinds[m.undo[2]] != "undo billing" {
		t.Errorf("list --output json kinds: %v", kinds)
	}
	out, _ = mustCLI(t, 0, "list", "--store", m.store)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, m.scoped) && !strings.Contains(l, "scoped  orders") {
			t.Errorf("list line of the scoped snapshot: %q", l)
		}
		if strings.HasPrefix(l, newestFull) && !strings.Contains(l, "full    all") {
			t.Errorf("list line of a full snapshot: %q", l)
		}
	}

	// diff compares what both sides hold and says what it left out.
	out, _ = mustCLI(t, 0, "diff", newestFull, m.scoped, "--store", m.store)
	if !strings.Contains(out, "left out 1 connector that only one side holds") || !strings.Contains(out, ": billing") {
		t.Errorf("diff of a full and a scoped snapshot does not name what it left out:\n%s", out)
	}
	out, errs := mustCLI(t, 0, "diff", newestFull, m.scoped, "--store", m.store, "--output", "json")
	if strings.TrimSpace(out) != "[]" || !strings.Contains(errs, "billing") {
		t.Errorf("diff --output json: stdout %q, stderr %q", out, errs)
	}
	out, _ = mustCLI(t, 0, "diff", m.full[0], newestFull, "--store", m.store)
	if strings.Contains(out, "left out") {
		t.Errorf("diff of two full snapshots left something out:\n%s", out)
	}
}

// What broke: OFFSETKEEPER_FORCE=true skipped every safety check and
// printed "--force", which the user never typed.
func TestPerRunFlagsIgnoreTheEnvironment(t *testing.T) {
	c := newCluster(t, ptr(connectdemo.DefaultSpec()))
	id := c.snapshot()
	c.rewrite(connectdemo.ConnMySQL, `{"pos":0}`) // running: the restore would write it
	t.Setenv("OFFSETKEEPER_FORCE", "true")
	t.Setenv("OFFSETKEEPER_ALLOW_OTHER_CLUSTER", "true")
	t.Setenv("OFFSETKEEPER_CONNECTOR", connectdemo.ConnMongo)
	before := c.storeIDs()
	_, stderr := c.mustRun(exitRefused, "restore", id)
	for _, v := range []string{"OFFSETKEEPER_FORCE", "OFFSETKEEPER_ALLOW_OTHER_CLUSTER", "OFFSETKEEPER_CONNECTOR"} {
		if !strings.Contains(stderr, "warning: "+v+" is ignored") {
			t.Errorf("no warning that %s is ignored:\n%s", v, stderr)
		}
	}
	// The refusal covers connectors OFFSETKEEPER_CONNECTOR would have
	// left out: the run was not scoped.
	if !strings.Contains(stderr, connectdemo.ConnMySQL) {
		t.Errorf("the refusal does not name %s: the run was scoped by the environment?\n%s", connectdemo.ConnMySQL, stderr)
	}
	if got := c.storeIDs(); !slices.Equal(got, before) {
		t.Errorf("a refused restore stored a snapshot: %v", got)
	}

	// --help shows no environment twin for them.
	out, _ := mustCLI(t, 0, "restore", "--help")
	for _, f := range []string{"FORCE", "ALLOW_OTHER_CLUSTER", "CONNECTOR", "FROM_FILE", "DRY_RUN", "OUTPUT", "SOURCE_ONLY", "SINK_ONLY", "VIA", "STOP_CONNECTORS", "RESUME"} {
		if strings.Contains(out, "env OFFSETKEEPER_"+f+"\n") || strings.Contains(out, "env OFFSETKEEPER_"+f+",") {
			t.Errorf("restore --help shows env OFFSETKEEPER_%s", f)
		}
	}
	if !strings.Contains(out, "env OFFSETKEEPER_STORE") || !strings.Contains(out, "command line only") {
		t.Errorf("restore --help lost the settings' twins or the per-run note:\n%s", out)
	}
}

func ptr[T any](v T) *T { return &v }

// What broke: list --store /nonexistent/dir printed an empty table, exited
// 0 and created the directory.
func TestReadOnlyCommandsNeverCreateAStore(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "store")
	for _, args := range [][]string{
		{"list"}, {"list", "--output", "json"}, {"show", "latest"}, {"verify"}, {"verify", "latest"},
		{"diff", "latest", "latest"}, {"prune", "--keep-last", "1"}, {"prune", "--keep-last", "1", "--dry-run"},
		{"restore", "latest", "--brokers", "127.0.0.1:1", "--kafka-timeout", "1s"},
	} {
		for _, sto := range []string{missing, "file://" + missing} {
			code, out, errs := runCLI(t, append(args, "--store", sto)...)
			if code != exitError {
				t.Errorf("%v --store %s: exit %d, want 1\n%s%s", args, sto, code, out, errs)
			}
			if args[0] != "restore" && !strings.Contains(errs, missing) {
				t.Errorf("%v: the error does not name %s:\n%s", args, missing, errs)
			}
			if _, err := os.Stat(filepath.Dir(filepath.Dir(missing))); err == nil {
				t.Fatalf("%v --store %s created a directory", args, sto)
			}
		}
	}
}

// What broke: verify of an ID that does not exist said "failed, do not
// restore" as if the snapshot were damaged.
func TestVerifyNotFoundAndAmbiguous(t *testing.T) {
	m := mixedStore(t)
	_, errs := mustCLI(t, exitError, "verify", "20200101T000000.000000Z-abcdef", "--store", m.store)
	if !strings.Contains(errs, "not found") || strings.Contains(errs, "do not restore") {
		t.Errorf("verify of a missing ID: %s", errs)
	}
	_, errs = mustCLI(t, exitError, "verify", "1999", "--store", m.store)
	if !strings.Contains(errs, "not found") {
		t.Errorf("verify of a prefix that matches nothing: %s", errs)
	}
	_, errs = mustCLI(t, exitUsage, "verify", m.full[0][:2], "--store", m.store)
	if !strings.Contains(errs, "matches 8 snapshots") || !strings.Contains(errs, m.full[0]) {
		t.Errorf("verify of an ambiguous prefix does not list the matches: %s", errs)
	}
	out, _ := mustCLI(t, 0, "verify", "--store", m.store, "--output", "json")
	var res verifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Checked != 8 || res.Failed != 0 || !res.Snapshots[0].OK || !res.Snapshots[0].ContentsChecked {
		t.Errorf("verify --output json: %v %+v\n%s", err, res, out)
	}
}

// Swapping two encrypted snapshots' objects makes verify fail for both:
// each body is bound to its ID.
func TestVerifyCatchesSwappedEncryptedBodies(t *testing.T) {
	c := newCluster(t, ptr(connectdemo.DefaultSpec()))
	keyURL, _ := encryptionKey("swap")
	a := c.snapshot("--encrypt-key", keyURL)
	b := c.snapshot("--encrypt-key", keyURL, "--connector", connectdemo.ConnMongo)
	c.mustRun(0, "verify", "--encrypt-key", keyURL)
	pa := filepath.Join(c.store, "snapshots", a+".snap")
	pb := filepath.Join(c.store, "snapshots", b+".snap")
	da, err := os.ReadFile(pa)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pa, db, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, da, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs := c.mustRun(exitError, "verify", "--encrypt-key", keyURL)
	for _, id := range []string{a, b} {
		if !strings.Contains(out, "FAIL "+id+": ") {
			t.Errorf("verify does not fail %s:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "does not authenticate") || !strings.Contains(errs, "2 of 2 snapshots failed") {
		t.Errorf("verify output:\n%s\n%s", out, errs)
	}
	out, _ = c.mustRun(exitError, "verify", "--encrypt-key", keyURL, "--output", "json")
	var res verifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Failed != 2 || res.Snapshots[0].OK || res.Snapshots[0].Error == "" {
		t.Errorf("verify --output json: %v %+v", err, res)
	}
}

// What broke: offsetkeeper list --brokers X and offsetkeeper --store URL
// list were usage errors.
func TestSharedFlagsOnEveryCommand(t *testing.T) {
	m := mixedStore(t)
	for _, args := range [][]string{
		{"--store", m.store, "list"},
		{"--store=" + m.store, "--log-level", "debug", "list", "--output", "json"},
		{"list", "--brokers", "b:9092", "--store", m.store},
		{"--brokers", "b:9092", "--tls", "--sasl-username", "u", "list", "--store", m.store, "--connect-url", "http://c:8083"},
		{"--store", m.store, "verify", "latest", "--worker-config", "/nonexistent.properties"},
		{"--store", m.store, "prune", "--dry-run", "--keep-last", "1", "--brokers", "b:9092"},
		{"--store", m.store, "show", "latest", "--offsets-topic", "x", "--kafka-timeout", "1s"},
	} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, m.full[len(m.full)-1]) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	// Only shared flags go before the command name.
	_, errs := mustCLI(t, exitUsage, "--force", "list", "--store", m.store)
	if !strings.Contains(errs, "--force before the command name") {
		t.Errorf("--force before the command: %s", errs)
	}
	mustCLI(t, exitUsage, "--store", m.store)
	// list --help names the Kafka flags it ignores instead of listing them.
	out, _ := mustCLI(t, 0, "list", "--help")
	if strings.Contains(out, "  --brokers") || !strings.Contains(out, "ignored by list: --brokers") {
		t.Errorf("list --help:\n%s", out)
	}
}

// What broke: a mistyped flag printed the whole help (up to 180 lines)
// before the error.
func TestMistypedFlagIsOneLine(t *testing.T) {
	code, out, errs := runCLI(t, "restore", "latest", "--dry-rn")
	if code != exitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	want := "offsetkeeper restore: unknown flag --dry-rn (did you mean --dry-run?)\nRun 'offsetkeeper restore --help' for usage.\n"
	if errs != want {
		t.Errorf("stderr = %q, want %q", errs, want)
	}
	code, _, errs = runCLI(t, "lsit")
	if code != exitUsage || strings.Count(errs, "\n") != 2 {
		t.Errorf("unknown command: exit %d\n%s", code, errs)
	}
}

// snapshot --output json prints the ID, kind, counts and warnings.
func TestSnapshotOutputJSON(t *testing.T) {
	c := newCluster(t, ptr(connectdemo.DefaultSpec()))
	for _, tc := range []struct {
		args  []string
		kind  string
		scope []string
	}{
		{nil, snapshot.KindFull, nil},
		{[]string{"--connector", connectdemo.ConnMongo}, snapshot.KindScoped, []string{connectdemo.ConnMongo}},
	} {
		out, _ := c.mustRun(0, append([]string{"snapshot", "--output", "json"}, tc.args...)...)
		var res snapshotResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("snapshot --output json: %v\n%s", err, out)
		}
		if res.Kind != tc.kind || !slices.Equal(res.Scope, tc.scope) || res.Connectors == 0 || res.SourceKeys == 0 || res.Warnings == nil {
			t.Errorf("snapshot --output json %v: %+v", tc.args, res)
		}
		if _, err := snapshot.ParseID(res.ID); err != nil {
			t.Errorf("snapshot --output json ID: %v", err)
		}
	}
}
