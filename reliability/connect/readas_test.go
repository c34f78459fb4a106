package connect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestRealWorkerDiffReadsAsTheWorker: another producer's aborted
// transaction over a source offset. A worker without exactly-once source
// support (the default) reports the aborted value in GET offsets; one with
// exactly.once.source.support=enabled reports the committed one. Given the
// worker's config (--worker-config), diff --live shows the live offset as
// that worker reports it: a change to the aborted value, or no change.
// Without it, and with a worker that cannot be asked (this build of the
// worker answers no validate, so the REST API does not tell), diff --live
// reads read_committed and says that the two views differ, naming the value
// the default worker reports.
func TestRealWorkerDiffReadsAsTheWorker(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	for _, tc := range []struct {
		name    string
		set     []string
		enabled bool
		want    string // position the worker reports
	}{
		{"default", nil, false, "666"},
		{"exactly-once", []string{"exactly.once.source.support=enabled"}, true, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPipeline(t, realconnect.Options{Set: tc.set}, filepath.Join(t.TempDir(), "store"))
			p.rest.Create(bulkName, realconnect.FileSource(filepath.Join(t.TempDir(), "bulk.txt"), linesT), "STOPPED")
			p.rest.WaitState(bulkName, "STOPPED", 0)
			binary(t) // built before the clock starts
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rec := func(v string) *kgo.Record {
				return &kgo.Record{Topic: p.c.Topics.Offsets, Key: []byte(bulkKey(0)), Value: []byte(`{"position":` + v + `}`)}
			}
			if err := p.c.Client.ProduceSync(ctx, rec("1")).FirstErr(); err != nil {
				t.Fatal(err)
			}
			id := p.snapshot()
			other, err := kgo.NewClient(kgo.SeedBrokers(p.c.KC.ListenAddrs()...), kgo.TransactionalID("another-app"))
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if err := other.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := other.ProduceSync(ctx, rec("666")).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := other.EndTransaction(ctx, kgo.TryAbort); err != nil {
				t.Fatal(err)
			}
			realconnect.Eventually(t, "the worker reports position "+tc.want, func() (bool, string) {
				body := string(p.rest.Offsets(bulkName))
				return strings.Contains(body, `"position":`+tc.want+`}`), body
			})

			props := "bootstrap.servers=" + p.c.Brokers + "\ngroup.id=" + p.w.GroupID + "\noffset.storage.topic=" + p.c.Topics.Offsets +
				"\nconfig.storage.topic=" + p.c.Topics.Configs + "\nstatus.storage.topic=" + p.c.Topics.Status + "\n" + strings.Join(tc.set, "\n") + "\n"
			worker := filepath.Join(t.TempDir(), "worker.properties")
			if err := os.WriteFile(worker, []byte(props), 0o600); err != nil {
				t.Fatal(err)
			}
			changes, r := diffLive(t, p, id, "--worker-config", worker)
			said := strings.Join(strings.Fields(r.stderr), " ")
			if tc.enabled {
				if len(changes) != 0 || strings.Contains(said, "aborted") {
					t.Errorf("diff --live against a worker that reads read_committed: %d changes, want none\n%s", len(changes), r)
				}
				return
			}
			if len(changes) != 1 || !strings.Contains(string(changes[0]), "666") {
				t.Errorf("diff --live against a worker that reads read_uncommitted: want the one change to position 666 it reports\n%s", r)
			}
			for _, want := range []string{"1 key of topic connect-offsets read as the workers read them", "read_uncommitted"} {
				if !strings.Contains(said, want) {
					t.Errorf("diff --live --worker-config does not say %q:\n%s", want, r.stderr)
				}
			}

			// Unknown: both views, the difference said.
			changes, r = diffLive(t, p, id)
			said = strings.Join(strings.Fields(r.stderr), " ")
			if len(changes) != 0 {
				t.Errorf("diff --live, the worker's setting unknown: %d changes, want none (read_committed)\n%s", len(changes), r)
			}
			for _, want := range []string{"workers read 1 key of topic connect-offsets differently", `read_uncommitted {"position":666}`, "unknown whether the workers have exactly-once source support"} {
				if !strings.Contains(said, want) {
					t.Errorf("diff --live, the worker's setting unknown, does not say %q:\n%s", want, r.stderr)
				}
			}
		})
	}
}

// diffLive runs `diff id --live --connector bulk-src --output json` with
// args and returns its changes.
func diffLive(t *testing.T, p *pipeline, id string, args ...string) ([]json.RawMessage, result) {
	t.Helper()
	r := p.bin(0, append([]string{"diff", id, "--live", "--connector", bulkName, "--output", "json"}, args...)...)
	var changes []json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &changes); err != nil {
		t.Fatalf("diff --output json: %v\n%s", err, r)
	}
	return changes, r
}
