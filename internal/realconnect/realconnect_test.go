package realconnect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The harness itself, through its path for a Kafka download: a directory
// whose bin/connect-distributed.sh takes the generated worker.properties
// (here a script that hands them to the shared build, the only worker on
// this machine) starts, is found ready through its REST API, runs a
// FileStreamSource to RUNNING with its task, reports its offsets and stops.
// The other tests run the shared build's own path.
func TestDistributionLayout(t *testing.T) {
	shared, kind := Dir(t)
	if kind != Shared {
		t.Skip("a Kafka download is tested by every other test of the suite")
	}
	dist := t.TempDir()
	if err := os.Mkdir(filepath.Join(dist, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/usr/bin/env bash
props=$1
bootstrap=$(sed -n 's/^bootstrap.servers=//p' "$props")
port=$(sed -n 's/^listeners=http:\/\/127.0.0.1://p' "$props")
exec %q --bootstrap "$bootstrap" --rest-port "$port" --worker-props "$props"
`, filepath.Join(shared, "bin", "connect-worker"))
	if err := os.WriteFile(filepath.Join(dist, "bin", "connect-distributed.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, dist)
	if _, kind := Dir(t); kind != Distribution {
		t.Fatalf("%s is not taken for a Kafka download", dist)
	}

	c := NewCluster(t)
	c.CreateTopic(t, "lines", 1, false)
	w := Start(t, c, Options{})
	rest := w.REST(t)
	in := filepath.Join(t.TempDir(), "in.txt")
	AppendLines(t, in, "one", "two")
	rest.Create("src", FileSource(in, "lines"), "")
	rest.WaitState("src", "RUNNING", 1)
	Eventually(t, "source offset at end of file", func() (bool, string) {
		body := rest.Offsets("src")
		return SourcePosition(t, body, in) == int64(len("one\ntwo\n")), string(body)
	})
	rest.Stop("src")
	if r := rest.PatchOffsets("nope", []byte(`{"offsets":[{"partition":{"filename":"x"},"offset":{"position":0}}]}`)); r.Code != 404 || !strings.Contains(r.Message(), "nope") {
		t.Fatalf("PATCH offsets of an unknown connector: %s", r)
	}
}
