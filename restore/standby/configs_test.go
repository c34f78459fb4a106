package standby_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
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
	srv, err := connectsimtest.Start(p.bcl, connectsim.Options{})
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

// TestSyncConfigsRecordKept: with Config.Store, the record of the configs
// written to the standby outlives the Syncer: after a restart (a new
// Syncer on the same store) a config the primary changed still follows,
// while one an operator changed on the standby is still reported and left
// alone; the record holds hashes, not the configs. Without the store a
// restarted Syncer cannot tell and leaves both alone (the limit the store
// lifts).
func TestSyncConfigsRecordKept(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	srv, err := connectsimtest.Start(p.bcl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	newSyncer := func(withStore bool) *standby.Syncer {
		cfg := standby.Config{Client: p.bcl, Connect: rc}
		if withStore {
			cfg.Store = st
		}
		s, err := standby.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	state := capt(t, p.acl)
	if _, err := newSyncer(true).Sync(ctx, state, time.Now()); err != nil {
		t.Fatalf("first Sync: %v", err)
	}
	data, err := st.Fences().GetConfigs(ctx, state.ClusterID)
	if err != nil {
		t.Fatalf("no record stored: %v", err)
	}
	if file, _ := state.Connector(connectdemo.ConnFile); strings.Contains(string(data), file.Config["file"]) {
		t.Errorf("the record holds a config value: %s", data)
	}

	// The primary changes the file connector's config; an operator changes
	// the jdbc one's on the standby; the daemon restarts.
	for i, c := range state.Connectors {
		if c.Name == connectdemo.ConnFile {
			state.Connectors[i].Config = maps.Clone(c.Config)
			state.Connectors[i].Config["file"] = "/var/log/after-restart.log"
		}
	}
	jdbc, _ := rc.Config(ctx, connectdemo.ConnJDBC)
	jdbc["poll.interval.ms"] = "54321"
	if err := rc.PutConfig(ctx, connectdemo.ConnJDBC, jdbc); err != nil {
		t.Fatal(err)
	}
	actions := func(rep *standby.Report) map[string]string {
		out := map[string]string{}
		for _, a := range rep.Configs {
			out[a.Connector] = a.Action
		}
		return out
	}
	// Without the store, a restarted syncer knows nothing: both differ.
	rep, err := newSyncer(false).Sync(ctx, state, time.Now())
	if err != nil {
		t.Fatalf("Sync without the store: %v", err)
	}
	if a := actions(rep); a[connectdemo.ConnFile] != standby.ConfigDiffers || a[connectdemo.ConnJDBC] != standby.ConfigDiffers {
		t.Fatalf("without the record: actions %v, want both differs", a)
	}
	rep, err = newSyncer(true).Sync(ctx, state, time.Now())
	if err != nil {
		t.Fatalf("Sync after the restart: %v", err)
	}
	if a := actions(rep); a[connectdemo.ConnFile] != standby.ConfigUpdated || a[connectdemo.ConnJDBC] != standby.ConfigDiffers {
		t.Fatalf("after the restart: actions %v, want %s updated and %s differs", a, connectdemo.ConnFile, connectdemo.ConnJDBC)
	}
	if got, _ := rc.Config(ctx, connectdemo.ConnFile); got["file"] != "/var/log/after-restart.log" {
		t.Errorf("%s config on the standby %v: not updated", connectdemo.ConnFile, got)
	}
	if got, _ := rc.Config(ctx, connectdemo.ConnJDBC); got["poll.interval.ms"] != "54321" {
		t.Errorf("the operator's config of %s was overwritten: %v", connectdemo.ConnJDBC, got)
	}
	// And again after another restart: the update was recorded.
	rep, err = newSyncer(true).Sync(ctx, state, time.Now())
	if a := actions(rep); err != nil || a[connectdemo.ConnFile] != standby.ConfigInStep || a[connectdemo.ConnJDBC] != standby.ConfigDiffers {
		t.Fatalf("after a second restart: %v, actions %v, want %s in-step and %s differs", err, a, connectdemo.ConnFile, connectdemo.ConnJDBC)
	}
}

// TestSyncConfigsSkipsUnchanged: a sync whose primary configs are the
// last sync's, and whose standby config topic has not moved, does not
// read every connector from the standby's Connect again (the last
// actions stand); an operator's change there moves the config topic, and
// the next sync reads, finds and reports it.
func TestSyncConfigsSkipsUnchanged(t *testing.T) {
	ctx := context.Background()
	p := newPair(t)
	srv, err := connectsimtest.Start(p.bcl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := standby.New(standby.Config{Client: p.bcl, Connect: rc})
	if err != nil {
		t.Fatal(err)
	}
	state := capt(t, p.acl)
	listings := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if strings.HasPrefix(r, "GET /connectors?") || r == "GET /connectors" {
				n++
			}
		}
		return n
	}
	action := func(rep *standby.Report, name string) string {
		for _, a := range rep.Configs {
			if a.Connector == name {
				return a.Action
			}
		}
		return ""
	}
	for i := range 3 {
		if _, err := s.Sync(ctx, state, time.Now()); err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	before := listings()
	rep, err := s.Sync(ctx, state, time.Now())
	if err != nil || action(rep, connectdemo.ConnJDBC) != standby.ConfigInStep {
		t.Fatalf("sync in step: %v, %+v", err, rep.Configs)
	}
	// One listing: the running check's (connector states), not the
	// configs'.
	if n := listings() - before; n != 1 {
		t.Errorf("a sync with nothing changed listed the standby's connectors %d times, want once: %v", n, srv.Requests())
	}
	jdbc, _ := rc.Config(ctx, connectdemo.ConnJDBC)
	jdbc["poll.interval.ms"] = "999"
	if err := rc.PutConfig(ctx, connectdemo.ConnJDBC, jdbc); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Sync(ctx, state, time.Now())
	if err != nil || action(rep, connectdemo.ConnJDBC) != standby.ConfigDiffers {
		t.Fatalf("sync after an operator's change: %v, %+v; want %s differs", err, rep.Configs, connectdemo.ConnJDBC)
	}
	if got, _ := rc.Config(ctx, connectdemo.ConnJDBC); got["poll.interval.ms"] != "999" {
		t.Errorf("the operator's change was overwritten: %v", got)
	}
}
