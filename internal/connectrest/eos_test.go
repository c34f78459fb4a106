package connectrest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
)

// TestWorkerExactlyOnceSource: the worker's exactly.once.source.support is
// learned from its validate answer (the stand-in answers as
// DistributedHerder does: a source config requiring exactly-once support
// is refused unless the setting is "enabled"); a worker before 3.3 has no
// exactly.once.support key, and one without source plugins cannot be
// asked: both unknown.
func TestWorkerExactlyOnceSource(t *testing.T) {
	_, cl := testkit.Cluster(t)
	ctx := context.Background()
	if err := connectdemo.CreateTopics(ctx, cl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	sinkOnly := []connectsim.Plugin{{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: "sink", Version: "3.8.0"}}
	for _, tc := range []struct {
		name           string
		opts           connectsim.Options
		known, enabled bool
		why            string
	}{
		{"default", connectsim.Options{Version: "3.8.0"}, true, false, "does not have exactly-once source support enabled"},
		{"preparing", connectsim.Options{Version: "3.8.0", ExactlyOnceSource: "preparing"}, true, false, "does not have exactly-once source support enabled"},
		{"enabled", connectsim.Options{Version: "3.8.0", ExactlyOnceSource: "enabled"}, true, true, "accepts exactly.once.support=required"},
		{"3.2", connectsim.Options{Version: "3.2.3"}, false, false, "before 3.3"},
		{"no source plugin", connectsim.Options{Version: "3.8.0", Plugins: sinkOnly}, false, false, "no source connector plugin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := connectsimtest.Start(cl, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := rc.WorkerExactlyOnceSource(ctx)
			if err != nil || got.Known != tc.known || got.Enabled != tc.enabled || !strings.Contains(got.Why, tc.why) {
				t.Errorf("WorkerExactlyOnceSource: %+v, %v; want known %v, enabled %v, why with %q", got, err, tc.known, tc.enabled, tc.why)
			}
		})
	}
}
