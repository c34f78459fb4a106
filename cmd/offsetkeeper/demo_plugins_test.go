package main

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// The demo's Connect lists the plugins of the connectors it runs: the undo
// of a deleted demo connector (restore --create-connectors, as the daemon
// and events print it) creates it instead of being refused for a plugin
// "not installed" on the workers that ran it.
func TestDemoPluginsCreateDeleted(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	srv, err := connectsim.Start(c.cl, connectsim.Options{Version: demoConnectVersion, Plugins: demoPlugins(c.exp)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	id := c.snapshot()
	cfg := connectdemo.DefaultConfigsTopic
	for _, conn := range []string{connectdemo.ConnSinkES, connectdemo.ConnMySQL} {
		c.produce(&kgo.Record{Topic: cfg, Key: []byte("connector-" + conn)}, &kgo.Record{Topic: cfg, Key: []byte("target-state-" + conn)})
		out, _ := c.mustRun(0, "restore", id, "--connector", conn, "--connect-url", srv.URL, "--create-connectors", "--dry-run")
		if !strings.Contains(out, "would create 1 connector STOPPED") {
			t.Errorf("restore --create-connectors of %s in the demo's Connect:\n%s", conn, out)
		}
	}
}
