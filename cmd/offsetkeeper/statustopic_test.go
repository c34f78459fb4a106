package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The status topic is --status-topic (or OFFSETKEEPER_STATUS_TOPIC), else
// status.storage.topic of --worker-config, else connect-status.
func TestStatusTopicSetting(t *testing.T) {
	worker := filepath.Join(t.TempDir(), "worker.properties")
	if err := os.WriteFile(worker, []byte("bootstrap.servers=k:9092\nstatus.storage.topic=prod-status\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, nil, "connect-status"},
		{nil, []string{"--worker-config", worker}, "prod-status"},
		{nil, []string{"--worker-config", worker, "--status-topic", "mine"}, "mine"},
		{map[string]string{"OFFSETKEEPER_STATUS_TOPIC": "from-env"}, []string{"--worker-config", worker}, "from-env"},
	} {
		g := &globals{}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		g.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if _, err := applyEnv(fs, func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }); err != nil {
			t.Fatal(err)
		}
		_, opts, err := g.kafkaSettings()
		if err != nil {
			t.Fatal(err)
		}
		if opts.StatusTopic != c.want {
			t.Errorf("env %v args %v: status topic %q, want %q", c.env, c.args, opts.StatusTopic, c.want)
		}
	}
}
