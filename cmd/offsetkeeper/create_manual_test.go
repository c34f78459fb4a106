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
// restore without --create-connectors, then, for each connector, the POST
// /connectors that creates it: its body inline when its config holds no
// secret, else show --output connect-create piped into curl (secrets stay
// off the screen). Run as printed, each connector is created with the
// snapshot's config. (It printed '{"name":...,"config":{...}}' before: a
// placeholder.)
func TestCreateConnectorsByHandRunsAsPrinted(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("the printed commands are curl commands: no curl here")
	}
	spec := connectdemo.DefaultSpec()
	src := newCluster(t, &spec)
	src.stopAll()
	id := src.snapshot()
	plain, secret := connectdemo.ConnFile, connectdemo.ConnMySQL

	dst := newCluster(t, nil)
	dst.store = src.store
	if err := connectdemo.CreateTopics(context.Background(), dst.cl, connectdemo.DefaultTopics()); err != nil {
		t.Fatal(err)
	}
	plugins := append(connectsim.DefaultPlugins("3.6.1"), connectsim.Plugin{Class: "io.debezium.connector.mysql.MySqlConnector", Type: "source", Version: "2.7.0"})
	srv, err := connectsimtest.Start(dst.cl, connectsim.Options{Version: "3.6.1", Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	scope := []string{"restore", id, "--allow-other-cluster", "--connector", plain, "--connector", secret}
	_, stderr := dst.mustRun(exitRefused, append(scope, "--create-connectors", "--connect-url", srv.URL)...)
	inline, piped := pasted(stderr, "curl -sS --fail-with-body -X POST "), pasted(stderr, "offsetkeeper show ")
	if !strings.Contains(inline, `"name":"`+plain+`"`) || !strings.Contains(piped, "--connector "+secret) || strings.Contains(stderr, "{...}") ||
		strings.Contains(stderr, "dbz") {
		t.Fatalf("the commands to create %s (inline) and %s (through show, its password not shown) by hand:\n%s", plain, secret, stderr)
	}

	dst.mustRun(0, scope...) // step 1, as the refusal says
	self, _ := os.Executable()
	for _, cmd := range []string{inline, strings.Replace(piped, "offsetkeeper ", self+" ", 1)} {
		sh := exec.Command("sh", "-c", strings.Replace(cmd, "curl ", curl+" ", 1))
		sh.Env = append(os.Environ(), "OFFSETKEEPER_TEST_AS_MAIN=1")
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}

	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	conns, err := rc.Connectors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{plain, secret} {
		got, ok := conns[name]
		want, _ := dst.snapshotConnector(id, name)
		if !ok || !maps.Equal(got.Info.Config, want) {
			t.Errorf("connector %s on Connect: %v, config %v; want the snapshot's %v", name, ok, got.Info.Config, want)
		}
	}
}

// snapshotConnector is the config of connector name in snapshot id.
func (c *cluster) snapshotConnector(id, name string) (map[string]string, bool) {
	c.t.Helper()
	out, _ := c.mustRun(0, "show", id, "--connector", name, "--output", "connect-create", "--show-secrets")
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
