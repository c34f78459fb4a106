package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// TestMigrateCreateConnectorsMapped: restore --translate mm2
// --create-connectors --resume through the CLI creates the sink reading
// MirrorMaker 2's copy (topics=a.orders), where its offsets are written;
// it was created still reading orders, to be started there. The
// translation table and the plan name the rewrite; STOPPED on the old
// cluster, it is left STOPPED.
func TestMigrateCreateConnectorsMapped(t *testing.T) {
	_, b, _, id := migrationClusters(t)
	srv := b.startConnect(connectsim.Options{Plugins: []connectsim.Plugin{
		{Class: "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector", Type: "sink", Version: "14.0.0"}}})
	out, stderr := b.mustRun(0, "restore", id, "--allow-other-cluster", "--translate", "mm2", "--mm2-source-alias", "a",
		"--connector", connectdemo.ConnSinkES, "--create-connectors", "--resume", "--connect-url", srv.URL)
	all := out + stderr
	for _, want := range []string{"config: connector " + connectdemo.ConnSinkES + ": topics=orders -> topics=a.orders",
		"created with topics=a.orders (the snapshot has topics=orders)", "verified:", "left STOPPED, as in the snapshot: " + connectdemo.ConnSinkES} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\n%s", want, all)
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
	if got := conns[connectdemo.ConnSinkES].Info.Config["topics"]; got != "a.orders" {
		t.Errorf("created with topics=%q, want a.orders", got)
	}
}
