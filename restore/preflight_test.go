package restore_test

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestCreateConnectorsPreflight: --create-connectors into a Connect that
// lacks the sink's plugin and whose override policy (None) refuses the
// source's producer.override.compression.type. The dry run and the run
// both refuse before anything is written, naming every problem at once:
// the connector, the key and the worker setting that would allow it; a
// plugin at another version than the snapshot's is said.
// Regression: such a target was found out only when the POST failed, after
// the offsets were written.
func TestCreateConnectorsPreflight(t *testing.T) {
	ctx := t.Context()
	_, snap := oldCluster(t)
	moved := *snap
	moved.Connectors = nil
	for _, c := range snap.Connectors {
		if c.Name == "src" {
			c.Config = maps.Clone(c.Config)
			c.Config["producer.override.compression.type"] = "zstd"
			c.PluginVersion = "3.8.0"
		}
		moved.Connectors = append(moved.Connectors, c)
	}
	dst := newConnectClusterWith(t, "new-cluster", connectsim.Options{
		Version:        "4.1.0",
		Plugins:        []connectsim.Plugin{{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: "source", Version: "4.1.0"}},
		OverridePolicy: connectsim.PolicyNone,
	})
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
	req := restore.Request{Snapshot: &moved, Options: restore.Options{AllowOtherCluster: true}, CreateConnectors: true, StopTimeout: 30 * time.Second}
	for _, dry := range []bool{true, false} {
		r := req
		r.DryRun = dry
		rep, err := restore.Run(ctx, env, r)
		if !errors.Is(err, restore.ErrRefused) {
			t.Fatalf("dry run %v: %v, want a refusal\n%s", dry, err, out.String())
		}
		for _, want := range []string{
			"the target Connect would refuse 2 things",
			`connector "snk": plugin FileStreamSink is not installed on the target workers`,
			`connector "src": key producer.override.compression.type refused: The 'None' policy does not allow 'compression.type' to be overridden`,
			"connector.client.config.override.policy=All",
			"compression.type in connector.client.config.override.allowlist",
			"nothing was written",
		} {
			if !strings.Contains(strings.Join(strings.Fields(err.Error()), " "), want) {
				t.Errorf("dry run %v: the refusal lacks %q:\n%v", dry, want, err)
			}
		}
		if want := "connector src: plugin org.apache.kafka.connect.file.FileStreamSourceConnector is version 4.1.0 on the target, 3.8.0 in the snapshot"; !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
			t.Errorf("dry run %v: the plan does not say the plugin version differs (%q):\n%s", dry, want, out.String())
		}
		out.Reset()
		if rep.Undo != "" {
			t.Errorf("dry run %v: an undo snapshot %s was taken", dry, rep.Undo)
		}
		checkConnectors(t, dst)
		ends, err := kadm.NewClient(dst.cl).ListEndOffsets(ctx, snapshot.DefaultOffsetsTopic, snapshot.DefaultConfigTopic)
		if err != nil {
			t.Fatal(err)
		}
		ends.Each(func(o kadm.ListedOffset) {
			if o.Offset != 0 {
				t.Errorf("dry run %v: %s/%d has %d records: something was written", dry, o.Topic, o.Partition, o.Offset)
			}
		})
		if got, err := kadm.NewClient(dst.cl).FetchOffsets(ctx, "connect-snk"); err == nil && len(got) > 0 {
			t.Errorf("dry run %v: sink offsets written: %v", dry, got)
		}
	}
}
