package capture

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// The status topic as a worker leaves it: the last write of a key wins, a
// tombstone and DESTROYED remove it, task keys of connector names holding
// '-' parse after the last '-', and a value that does not decode is left
// out with a warning.
func TestReadStatuses(t *testing.T) {
	kc := testkit.Kfake(t, kfake.NumBrokers(3), kfake.SeedTopics(5, DefaultStatusTopic))
	cl := testkit.Client(t, kc, kgo.DefaultProduceTopic(DefaultStatusTopic))
	ctx := context.Background()
	st := func(state, trace string) string {
		if trace == "" {
			return `{"state":"` + state + `","trace":null,"worker_id":"w1:8083","generation":5}`
		}
		return `{"state":"` + state + `","trace":"` + trace + `","worker_id":"w1:8083","generation":5}`
	}
	var recs []*kgo.Record
	put := func(k, v string) {
		r := &kgo.Record{Key: []byte(k)}
		if v != "" {
			r.Value = []byte(v)
		}
		recs = append(recs, r)
	}
	put("status-connector-my-sink-1", st("UNASSIGNED", ""))
	put("status-connector-my-sink-1", st("RUNNING", ""))
	put("status-task-my-sink-1-0", st("RUNNING", ""))
	put("status-task-my-sink-1-1", st("RUNNING", ""))
	put("status-task-my-sink-1-1", st("FAILED", `java.lang.RuntimeException: boom\n\tat X.y(X.java:1)`))
	put("status-connector-gone", st("RUNNING", ""))
	put("status-connector-gone", "")
	put("status-connector-deleted", st("DESTROYED", ""))
	put("status-task-deleted-0", "")
	put("status-connector-bad", `{"state":`)
	put("status-topic-orders:connector-my-sink-1", `{"topic":{"name":"orders","connector":"my-sink-1","task":0,"discoverTimestamp":1}}`)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadStatuses(ctx, cl, DefaultStatusTopic)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Connectors) != 1 {
		t.Fatalf("connectors %v; want my-sink-1 only", got.Connectors)
	}
	c := got.Connectors["my-sink-1"]
	if c == nil || c.Connector == nil || c.Connector.State != WorkerRunning || c.Connector.WorkerID != "w1:8083" || c.Connector.Generation != 5 {
		t.Fatalf("my-sink-1: %+v", c)
	}
	if len(c.Tasks) != 2 || c.Tasks[0].ID != 0 || c.Tasks[0].State != WorkerRunning || c.Tasks[1].ID != 1 ||
		c.Tasks[1].State != WorkerFailed || !strings.HasPrefix(c.Tasks[1].Trace, "java.lang.RuntimeException: boom\n") {
		t.Errorf("my-sink-1 tasks: %+v", c.Tasks)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], `"status-connector-bad"`) {
		t.Errorf("warnings %q; want one naming status-connector-bad", got.Warnings)
	}
	if _, err := ReadStatuses(ctx, cl, "no-such-status"); !errors.Is(err, ErrTopicMissing) {
		t.Errorf("missing topic: %v; want ErrTopicMissing", err)
	}
}

func TestStatusKey(t *testing.T) {
	for key, want := range map[string]struct {
		name string
		task int
		ok   bool
	}{
		"status-connector-a-b":       {"a-b", -1, true},
		"status-task-a-b-12":         {"a-b", 12, true},
		"status-task-a-b-x":          {"", 0, false},
		"status-task-7":              {"", 0, false},
		"status-topic-t:connector-a": {"", 0, false},
		"status-connector-":          {"", 0, false},
	} {
		name, task, ok := statusKey(key)
		if name != want.name || task != want.task || ok != want.ok {
			t.Errorf("statusKey(%q) = %q, %d, %v; want %+v", key, name, task, ok, want)
		}
	}
}
