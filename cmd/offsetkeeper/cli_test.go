package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/s3test"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// runCLI runs the command as a user would and returns its exit code and
// output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// flipByte flips one byte near the end of snapshot id's object in the
// local store dir: a snapshot damaged at rest.
func flipByte(t *testing.T, dir, id string) {
	t.Helper()
	path := filepath.Join(dir, "snapshots", id+".snap")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-10] ^= 0x01
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// demoCluster starts a seeded 3-broker cluster and returns its brokers.
func demoCluster(t *testing.T, spec connectdemo.Spec) (string, *kgo.Client, *connectdemo.Expected) {
	t.Helper()
	c, cl, exp := testkit.Seeded(t, spec)
	return strings.Join(c.ListenAddrs(), ","), cl, exp
}

func TestSnapshotListShowVerify(t *testing.T) {
	brokers, _, exp := demoCluster(t, connectdemo.DefaultSpec())
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) string
	}{
		{"file", func(t *testing.T) string { return "file://" + t.TempDir() }},
		{"dir", func(t *testing.T) string { return t.TempDir() }},
		{"mem", func(t *testing.T) string { return "mem://" }},
		{"s3", func(t *testing.T) string { return s3test.Start(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := tc.store(t)
			if tc.name == "mem" {
				// A mem:// store lives in one process: only snapshot works.
				code, out, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", store)
				if code != 0 || !strings.Contains(lastLine(out), "Z-") {
					t.Fatalf("snapshot to mem://: exit %d\n%s\n%s", code, out, errs)
				}
				return
			}
			// Flags after the command, env twin for the store.
			t.Setenv("OFFSETKEEPER_STORE", store)
			code, out, errs := runCLI(t, "snapshot", "--brokers", brokers)
			if code != 0 {
				t.Fatalf("snapshot: exit %d\n%s\n%s", code, out, errs)
			}
			id := lastLine(out)

			code, out, errs = runCLI(t, "list", "--output", "json")
			if code != 0 {
				t.Fatalf("list: exit %d: %s", code, errs)
			}
			var infos []snapshot.Info
			if err := json.Unmarshal([]byte(out), &infos); err != nil {
				t.Fatalf("list --output json is not JSON: %v\n%s", err, out)
			}
			if len(infos) != 1 || infos[0].ID != id {
				t.Fatalf("list: %+v, want one snapshot %s", infos, id)
			}

			// The whole document: byte-exact keys, no foreign group.
			code, out, errs = runCLI(t, "show", id, "--output", "json")
			if code != 0 {
				t.Fatalf("show: exit %d: %s", code, errs)
			}
			snap, err := snapshot.Decode([]byte(out))
			if err != nil {
				t.Fatal(err)
			}
			live := exp.LiveKeys(snapshot.DefaultOffsetsTopic)
			for _, o := range snap.SourceTable().Collect() {
				if o.Topic != snapshot.DefaultOffsetsTopic {
					continue
				}
				if want, ok := live[o.Partition][string(o.Key)]; !ok || !bytes.Equal(want, o.Value) {
					t.Errorf("show: %s/%d key %q value %q is not live in the cluster", o.Topic, o.Partition, o.Key, o.Value)
				}
			}
			for _, g := range snap.SinkGroups {
				for _, foreign := range exp.NotCaptured {
					if g.Group == foreign {
						t.Errorf("foreign group %q in the snapshot", g.Group)
					}
				}
			}

			// connect-rest: valid JSON of Connect's shape for every connector.
			for _, c := range snap.Connectors {
				code, out, errs = runCLI(t, "show", "latest", "--connector", c.Name, "--output", "connect-rest")
				if code != 0 {
					t.Fatalf("show connect-rest %s: exit %d: %s", c.Name, code, errs)
				}
				var body struct {
					Offsets []struct {
						Partition map[string]any  `json:"partition"`
						Offset    json.RawMessage `json:"offset"`
					} `json:"offsets"`
				}
				if err := json.Unmarshal([]byte(out), &body); err != nil || body.Offsets == nil {
					t.Fatalf("show connect-rest %s: not a REST offsets body (%v): %s", c.Name, err, out)
				}
			}

			code, out, errs = runCLI(t, "verify")
			if code != 0 || !strings.Contains(out, "ok") {
				t.Fatalf("verify: exit %d\n%s\n%s", code, out, errs)
			}
		})
	}
}

func TestVerifyCatchesFlippedByte(t *testing.T) {
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	dir := t.TempDir()
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", dir)
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errs)
	}
	id := lastLine(out)
	flipByte(t, dir, id)
	code, out, _ = runCLI(t, "verify", "--store", dir, id)
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Fatalf("verify of a flipped byte: exit %d, output %q", code, out)
	}
	if code, _, _ := runCLI(t, "show", "--store", dir, id); code != 1 {
		t.Fatalf("show of a corrupted snapshot: exit %d, want 1", code)
	}
}

func TestSnapshotUnreachableBroker(t *testing.T) {
	dir := t.TempDir()
	began := time.Now()
	code, out, errs := runCLI(t, "snapshot", "--brokers", "127.0.0.1:1", "--kafka-timeout", "3s", "--store", dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("error does not name the broker: %s", errs)
	}
	t.Logf("failed after %s: %s", time.Since(began).Round(time.Millisecond), strings.TrimSpace(errs))
	if code, out, _ := runCLI(t, "list", "--store", dir, "--output", "json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("a failed snapshot left something listed: %s", out)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"nope"}, exitUsage},
		{[]string{}, exitUsage},
		{[]string{"snapshot", "extra"}, exitUsage},
		{[]string{"list", "--output", "yaml"}, exitUsage},
		{[]string{"list", "--bogus"}, exitUsage},
		{[]string{"show"}, exitUsage},
		{[]string{"show", "a", "b"}, exitUsage},
		{[]string{"show", "latest", "--output", "connect-rest"}, exitUsage},
		{[]string{"--help"}, exitOK},
		{[]string{"snapshot", "--help"}, exitOK},
		{[]string{"version"}, exitOK},
		{[]string{"--version"}, exitOK},
	} {
		code, out, errs := runCLI(t, tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errs)
		}
	}
	_, out, _ := runCLI(t, "--help")
	if !strings.Contains(out, "Exit codes") || !strings.Contains(out, "refused by a safety check") {
		t.Errorf("--help does not document exit codes:\n%s", out)
	}
}

func TestEnvTwinAndFlagsAfterPositional(t *testing.T) {
	dir := t.TempDir()
	// A setting has an environment twin; the explicit flag wins.
	t.Setenv("OFFSETKEEPER_STORE", filepath.Join(dir, "missing"))
	code, out, errs := runCLI(t, "list")
	if code != exitError || !strings.Contains(errs, filepath.Join(dir, "missing")) {
		t.Fatalf("env twin for --store: exit %d %q %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "list", "--store", dir)
	if code != 0 || !strings.HasPrefix(out, "ID") {
		t.Fatalf("explicit flag should win over env: %q", out)
	}
	// A per-run choice has none (issue 13): OFFSETKEEPER_OUTPUT is
	// ignored, with a warning.
	t.Setenv("OFFSETKEEPER_OUTPUT", "json")
	code, out, errs = runCLI(t, "list", "--store", dir)
	if code != 0 || !strings.HasPrefix(out, "ID") || !strings.Contains(errs, "OFFSETKEEPER_OUTPUT is ignored") {
		t.Fatalf("OFFSETKEEPER_OUTPUT: exit %d %q %s", code, out, errs)
	}
	code, out, _ = runCLI(t, "list", "--store", dir, "--output", "json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("flags after the command: %q", out)
	}
}
