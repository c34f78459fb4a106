package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFromCredentials: a systemd credential named after a file flag is
// used as that flag, unless the flag or its environment twin was given;
// a missing credential is no error (the unit's credentials are optional).
func TestFromCredentials(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"tls-ca", "worker-config", "sasl-password-file"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	parse := func(env map[string]string, args ...string) *globals {
		g := &globals{}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		g.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if _, err := applyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
			t.Fatal(err)
		}
		return g
	}

	g := parse(nil)
	set, err := g.fromCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(set, []string{"worker-config", "tls-ca", "sasl-password-file"}) {
		t.Errorf("set %v", set)
	}
	if g.tlsCA != filepath.Join(dir, "tls-ca") || g.workerConfig != filepath.Join(dir, "worker-config") ||
		g.saslPasswordFile != filepath.Join(dir, "sasl-password-file") || g.tlsCert != "" {
		t.Errorf("tls-ca %q worker-config %q sasl-password-file %q tls-cert %q", g.tlsCA, g.workerConfig, g.saslPasswordFile, g.tlsCert)
	}

	g = parse(map[string]string{"OFFSETKEEPER_SASL_PASSWORD": "from-env"}, "--tls-ca", "/etc/ca.pem")
	if set, err = g.fromCredentials(dir); err != nil {
		t.Fatal(err)
	}
	if g.tlsCA != "/etc/ca.pem" || g.saslPasswordFile != "" || !slices.Equal(set, []string{"worker-config"}) {
		t.Errorf("explicit settings lost: tls-ca %q sasl-password-file %q, set %v", g.tlsCA, g.saslPasswordFile, set)
	}

	if set, err = parse(nil).fromCredentials(""); err != nil || set != nil {
		t.Errorf("no credentials directory: %v %v", set, err)
	}
}
