package realconnect

import (
	"path/filepath"
	"strings"
	"testing"
)

// The harness itself: a worker starts over kfake, runs a FileStreamSource
// to RUNNING with its task, reports its offsets, stops and is stopped.
func TestWorkerRunsFileSource(t *testing.T) {
	Dir(t)
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
