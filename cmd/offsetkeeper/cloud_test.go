package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
)

// cloudFlags parses args (and env, the environment) as the connect flags
// of a command and returns the client they make.
func cloudFlags(t *testing.T, env map[string]string, args ...string) (*connectrest.Client, error) {
	t.Helper()
	var f connectFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if _, err := applyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	return f.client()
}

func TestCloudFlags(t *testing.T) {
	base := "https://api.confluent.cloud/connect/v1/environments/env-1/clusters/lkc-1"
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		usage string // the usage error, or "" for a cloud client of base
	}{
		{name: "flags", args: []string{"--platform", "confluent-cloud", "--environment", "env-1", "--cluster", "lkc-1", "--connect-user", "KEY", "--connect-password", "SECRET"}},
		{name: "URL alone", args: []string{"--connect-url", base}},
		{name: "env twins", env: map[string]string{"OFFSETKEEPER_PLATFORM": "confluent-cloud", "OFFSETKEEPER_ENVIRONMENT": "env-1", "OFFSETKEEPER_CLUSTER": "lkc-1", "OFFSETKEEPER_CONNECT_USER": "KEY", "OFFSETKEEPER_CONNECT_PASSWORD": "SECRET"}},
		{name: "flag wins over env", env: map[string]string{"OFFSETKEEPER_CLUSTER": "lkc-9"}, args: []string{"--platform", "confluent-cloud", "--environment", "env-1", "--cluster", "lkc-1"}},
		{name: "no cluster", args: []string{"--platform", "confluent-cloud", "--environment", "env-1"}, usage: "needs --environment (env-...) and --cluster (lkc-...)"},
		{name: "no environment", env: map[string]string{"OFFSETKEEPER_PLATFORM": "confluent-cloud"}, args: []string{"--cluster", "lkc-1"}, usage: "needs --environment"},
		{name: "not a cloud base", args: []string{"--platform", "confluent-cloud", "--connect-url", "http://connect:8083/x", "--environment", "env-1", "--cluster", "lkc-1"}, usage: "is not a Confluent Cloud base"},
		{name: "cluster without platform", args: []string{"--cluster", "lkc-1"}, usage: "need --platform confluent-cloud"},
		{name: "cluster with a Connect URL", args: []string{"--connect-url", "http://connect:8083", "--cluster", "lkc-1"}, usage: "need --platform confluent-cloud"},
		{name: "unknown platform", args: []string{"--platform", "msk", "--connect-url", "http://connect:8083"}, usage: `platform "msk"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, err := cloudFlags(t, tc.env, tc.args...)
			if tc.usage != "" {
				var u usageError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("err = %v, want a usage error saying %q", err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !rc.Cloud() || len(rc.URLs()) != 1 || rc.URLs()[0] != base {
				t.Fatalf("cloud %v, URLs %v; want %s", rc.Cloud(), rc.URLs(), base)
			}
		})
	}
	// Without any of them, no client, as before.
	if rc, err := cloudFlags(t, nil); rc != nil || err != nil {
		t.Fatalf("no flags: %v, %v", rc, err)
	}
	// A Connect cluster stays one.
	if rc, err := cloudFlags(t, nil, "--connect-url", "http://connect:8083"); err != nil || rc.Cloud() {
		t.Fatalf("Connect URL: %v", err)
	}
}

// The Cloud settings are settings, not per-run choices: they have
// environment twins, and a command without the connect flags accepts and
// ignores them.
func TestCloudFlagsAreSettings(t *testing.T) {
	for _, name := range []string{"platform", "environment", "cluster"} {
		if perRun[name] {
			t.Errorf("--%s is per-run: it must have an environment twin", name)
		}
		if !connectFlag(name) {
			t.Errorf("--%s is not a connect flag", name)
		}
	}
	code, out, errs := runCLI(t, "list", "--store", t.TempDir(), "--platform", "confluent-cloud", "--cluster", "lkc-1")
	if code != exitOK {
		t.Fatalf("list with the Cloud flags: exit %d %s%s", code, out, errs)
	}
}
