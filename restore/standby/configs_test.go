package standby_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
)

// TestSyncConfigs: with the standby's Connect (the REST stand-in over the
// standby cluster), the primary's connectors are created there STOPPED
// with the primary's configs, and their offsets written; a config the
// primary changes follows; one an operator changed on the standby is left
// alone and reported; a connector the operator starts there stops every
// write, reported as running.
func TestSyncConfigs(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	srv, err := connectsim.Start(p.bcl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	scope := []string{connectdemo.ConnFile, connectdemo.ConnJDBC}
	s, err := standby.New(standby.Config{Client: p.bcl, Connect: rc})
	if err != nil {
		t.Fatal(err)
	}
	state := capt(t, p.acl)
	rep, err := s.Sync(ctx, state, time.Now())
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	actions := map[string]string{}
	for _, a := range rep.Configs {
		actions[a.Connector] = a.Action
	}
	for _, n := range scope {
		if actions[n] != standby.ConfigCreated {
			t.Errorf("%s: config action %q, want created (all: %v)", n, actions[n], rep.Configs)
		}
		st, err := rc.Status(ctx, n)
		if err != nil || !st.Stopped() {
			t.Errorf("%s on the standby: %+v, %v; want STOPPED", n, st, err)
		}
		want, _ := state.Connector(n)
		got, err := rc.Config(ctx, n)
		if err != nil || !maps.Equal(got, want.Config) {
			t.Errorf("%s config on the standby %v (%v), want the primary's %v", n, got, err, want.Config)
		}
	}
	if rep.Applied == nil || rep.Applied.SourceWrites == 0 {
		t.Fatalf("no offsets written with the connectors created: %+v", rep)
	}

	// The primary changes the file connector's config; an operator changes
	// the jdbc one's on the standby.
	for i, c := range state.Connectors {
		if c.Name == connectdemo.ConnFile {
			state.Connectors[i].Config = maps.Clone(c.Config)
			state.Connectors[i].Config["file"] = "/var/log/new.log"
		}
	}
	jdbc, _ := rc.Config(ctx, connectdemo.ConnJDBC)
	jdbc["poll.interval.ms"] = "12345"
	if err := rc.PutConfig(ctx, connectdemo.ConnJDBC, jdbc); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Sync(ctx, state, time.Now())
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	for _, a := range rep.Configs {
		actions[a.Connector] = a.Action
	}
	if actions[connectdemo.ConnFile] != standby.ConfigUpdated || actions[connectdemo.ConnJDBC] != standby.ConfigDiffers {
		t.Fatalf("config actions %+v: want %s updated, %s differs", rep.Configs, connectdemo.ConnFile, connectdemo.ConnJDBC)
	}
	if got, _ := rc.Config(ctx, connectdemo.ConnFile); got["file"] != "/var/log/new.log" {
		t.Errorf("%s config on the standby %v: not updated", connectdemo.ConnFile, got)
	}
	if got, _ := rc.Config(ctx, connectdemo.ConnJDBC); got["poll.interval.ms"] != "12345" {
		t.Errorf("the operator's config of %s was overwritten: %v", connectdemo.ConnJDBC, got)
	}
	if st, err := rc.Status(ctx, connectdemo.ConnFile); err != nil || !st.Stopped() {
		t.Errorf("%s after its config update: %+v, %v; want still STOPPED", connectdemo.ConnFile, st, err)
	}

	// The operator starts jdbc on the standby: nothing is written.
	if err := rc.Resume(ctx, connectdemo.ConnJDBC); err != nil {
		t.Fatal(err)
	}
	before := endOffsets(t, p.bcl, connectdemo.DefaultOffsetsTopic)
	rep, err = s.Sync(ctx, state, time.Now())
	if !errors.Is(err, standby.ErrRunning) {
		t.Fatalf("Sync with %s resumed on the standby: %v, want ErrRunning", connectdemo.ConnJDBC, err)
	}
	found := false
	for _, f := range rep.Running {
		found = found || f.Connector == connectdemo.ConnJDBC
	}
	if !found {
		t.Fatalf("running %+v: %s not named", rep.Running, connectdemo.ConnJDBC)
	}
	if after := endOffsets(t, p.bcl, connectdemo.DefaultOffsetsTopic); !maps.Equal(before, after) {
		t.Fatalf("a refused sync wrote: %v -> %v", before, after)
	}
}
