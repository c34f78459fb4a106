package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
)

// A disaster recovery with --create-connectors onto workers older than
// Kafka 3.7 (no initial_state: a created connector would start before its
// offsets are written) is refused, and says how to do it by hand: the
// restore without --create-connectors, then, for each connector, a show
// --output connect-create piped into Connect's POST /connectors.
// Run as printed, the connector is created with the snapshot's config, and
// its offsets are those restored. (It printed '{"name":...,"config":{...}}'
// before: a placeholder.)
func TestCreateConnectorsByHandRunsAsPrinted(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed commands pipe into curl: no curl here")
	}
	spec := connectdemo.DefaultSpec()
	src := newCluster(t, &spec)
	src.stopAll()
	id := src.snapshot()
	name := connectdemo.ConnFile

	dst := newCluster(t, nil)
	dst.store = src.store
	if err := connectdemo.CreateTopics(context.Background(), dst.cl, connectdemo.DefaultTopics()); err != nil {
		t.Fatal(err)
	}
	srv, err := connectsimtest.Start(dst.cl, connectsim.Options{Version: "3.6.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	_, stderr := dst.mustRun(exitRefused, "restore", id, "--allow-other-cluster", "--connector", name, "--create-connectors", "--connect-url", srv.URL)
	pipeline := pasted(stderr, "offsetkeeper show ")
	if pipeline == "" || strings.Contains(stderr, "{...}") {
		t.Fatalf("no command to create %s by hand:\n%s", name, stderr)
	}

	dst.mustRun(0, "restore", id, "--allow-other-cluster", "--connector", name) // step 1, as the refusal says
	self, _ := os.Executable()
	sh := exec.Command("sh", "-c", strings.Replace(strings.Replace(pipeline, "offsetkeeper ", self+" ", 1), "| curl ", "| "+curl+" --fail ", 1))
	sh.Env = append(os.Environ(), "OFFSETKEEPER_TEST_AS_MAIN=1")
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", pipeline, err, out)
	}

	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	conns, err := rc.Connectors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, ok := conns[name]
	want, _ := dst.snapshotConnector(id, name)
	if !ok || !maps.Equal(got.Info.Config, want) {
		t.Fatalf("connector %s on Connect: %v, config %v; want the snapshot's %v", name, ok, got.Info.Config, want)
	}
}

// snapshotConnector is the config of connector name in snapshot id.
func (c *cluster) snapshotConnector(id, name string) (map[string]string, bool) {
	c.t.Helper()
	out, _ := c.mustRun(0, "show", id, "--connector", name, "--output", "connect-create")
	var body struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &body); err != nil || body.Name != name {
		c.t.Fatalf("show --output connect-create: %v\n%s", err, out)
	}
	return body.Config, len(body.Config) > 0
}

// show --output connect-create refuses a config with secret-looking values
// unless --show-secrets (masked, the body would set the password to
// ********), and wants one --connector.
func TestShowConnectConfigSecrets(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	id := c.snapshot()
	js, _ := c.mustRun(0, "show", id, "--output", "json", "--show-secrets")
	var doc struct {
		Connectors []struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		} `json:"connectors"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	secret := ""
	for _, conn := range doc.Connectors {
		for k, v := range conn.Config {
			if maskValue(k, v) != v && secret == "" {
				secret = conn.Name
			}
		}
	}
	if secret == "" {
		t.Fatal("the demo has no connector with a secret-looking config value")
	}
	_, stderr := c.mustRun(exitUsage, "show", id, "--connector", secret, "--output", "connect-create")
	if !strings.Contains(stderr, "--show-secrets") {
		t.Errorf("refusal without --show-secrets: %s", stderr)
	}
	out, _ := c.mustRun(0, "show", id, "--connector", secret, "--output", "connect-create", "--show-secrets")
	var body map[string]any
	if err := json.Unmarshal([]byte(out), &body); err != nil || body["config"] == nil || strings.Contains(out, masked) {
		t.Errorf("with --show-secrets: %v\n%s", err, out)
	}
	c.mustRun(exitUsage, "show", id, "--output", "connect-create")
}
