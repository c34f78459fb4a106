package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// standbyDaemon is a daemon keeping w's standby, on store st.
type standbyDaemon struct {
	t      *testing.T
	addr   string
	stderr testkit.SyncBuffer
	cancel context.CancelFunc
	exit   chan int
}

func startStandbyDaemon(t *testing.T, w *standbyWorld, st string) *standbyDaemon {
	t.Helper()
	d := &standbyDaemon{t: t, addr: freeAddr(t), exit: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	t.Cleanup(cancel)
	go func() {
		d.exit <- run(ctx, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", d.addr, "--log-format", "json"}, w.flags()...),
			&testkit.SyncBuffer{}, &d.stderr)
	}()
	return d
}

// last is the last sync's report on /api/standby.
func (d *standbyDaemon) last() *standby.Report {
	_, body, err := httpGet("http://" + d.addr + "/api/standby")
	if err != nil {
		return nil
	}
	var doc struct {
		Last *standby.Report `json:"last_sync"`
	}
	if json.Unmarshal([]byte(body), &doc) != nil {
		return nil
	}
	return doc.Last
}

func (d *standbyDaemon) wait(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		select {
		case code := <-d.exit:
			d.t.Fatalf("daemon exited with %d while waiting for %s\n%s", code, what, d.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("timed out waiting for %s\n%s", what, d.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *standbyDaemon) stop() {
	d.t.Helper()
	d.cancel()
	if code := <-d.exit; code != 0 {
		d.t.Fatalf("daemon exit %d\n%s", code, d.stderr.String())
	}
}

// configAction is the action of the last sync on connector's config.
func configAction(rep *standby.Report, connector string) string {
	if rep == nil {
		return ""
	}
	for _, a := range rep.Configs {
		if a.Connector == connector {
			return a.Action
		}
	}
	return ""
}

// TestStandbyDaemonRestart: the daemon's syncs after its first read only
// what changed (the store's state and the standby, incrementally); a
// restarted daemon reads both whole again in its first sync (it resumes
// from what the store and the standby hold). The record of the configs it
// wrote outlives it: a config changed on the primary while it was down is
// written to the standby after the restart, while one an operator changed
// on the standby is reported (differs) and left alone.
func TestStandbyDaemonRestart(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := "file://" + t.TempDir()
	ctx := context.Background()
	d := startStandbyDaemon(t, w, st)
	d.wait("incremental syncs", func() bool {
		r := d.last()
		return r != nil && r.StateRead == standby.ReadIncremental && r.LiveRead == standby.ReadIncremental &&
			configAction(r, connectdemo.ConnFile) == standby.ConfigInStep
	})
	if !strings.Contains(d.stderr.String(), `"state_read":"full","state_read_duration"`) || !strings.Contains(d.stderr.String(), `"live_read":"full"`) {
		t.Errorf("the first sync does not say it read the state and the standby whole:\n%s", d.stderr.String())
	}
	d.stop()

	// While the daemon is down: the primary changes the file connector's
	// config, an operator the jdbc connector's on the standby.
	snap, err := capture.Capture(ctx, w.acl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	file, _ := snap.Connector(connectdemo.ConnFile)
	props := map[string]string{}
	for k, v := range file.Config {
		props[k] = v
	}
	props["file"] = "/var/log/moved.log"
	value, _ := json.Marshal(map[string]any{"properties": props})
	testkit.Produce(t, w.acl, &kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-" + connectdemo.ConnFile), Value: value})
	jdbc, err := w.rc.Config(ctx, connectdemo.ConnJDBC)
	if err != nil {
		t.Fatal(err)
	}
	jdbc["poll.interval.ms"] = "4242"
	if err := w.rc.PutConfig(ctx, connectdemo.ConnJDBC, jdbc); err != nil {
		t.Fatal(err)
	}

	d = startStandbyDaemon(t, w, st)
	d.wait("the primary's config change on the standby", func() bool {
		c, err := w.rc.Config(ctx, connectdemo.ConnFile)
		return err == nil && c["file"] == "/var/log/moved.log"
	})
	d.wait("the operator's change reported", func() bool {
		return configAction(d.last(), connectdemo.ConnJDBC) == standby.ConfigDiffers
	})
	if c, _ := w.rc.Config(ctx, connectdemo.ConnJDBC); c["poll.interval.ms"] != "4242" {
		t.Errorf("the operator's config of %s was overwritten: %v", connectdemo.ConnJDBC, c)
	}
	if s, err := w.rc.Status(ctx, connectdemo.ConnFile); err != nil || !s.Stopped() {
		t.Errorf("%s after its config update: %+v, %v; want STOPPED", connectdemo.ConnFile, s, err)
	}
	// Its first sync read the store's state and the standby whole.
	first := ""
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"standby sync"`) {
			first = l
			break
		}
	}
	if !strings.Contains(first, `"state_read":"full"`) || !strings.Contains(first, `"live_read":"full"`) {
		t.Errorf("the restarted daemon's first sync: %s\nwant the state and the standby read whole", first)
	}
	d.wait("incremental syncs again", func() bool {
		r := d.last()
		return r != nil && r.StateRead == standby.ReadIncremental && r.LiveRead == standby.ReadIncremental
	})
	d.stop()
}

// TestStandbyCreateTopicsFlags: --standby-create-topics and
// --standby-replication-factor are standby settings: usage errors without
// --standby-brokers, and the factor without the flag or below 1.
func TestStandbyCreateTopicsFlags(t *testing.T) {
	for _, tc := range []struct {
		f    standbyFlags
		want string
	}{
		{standbyFlags{createTopics: true, translate: standby.TranslateNone}, "need --standby-brokers"},
		{standbyFlags{brokers: "b:9092", translate: standby.TranslateNone, replicationFactor: 3}, "goes with --standby-create-topics"},
		{standbyFlags{brokers: "b:9092", translate: standby.TranslateNone, createTopics: true, replicationFactor: -1}, "wants 1 or more"},
		{standbyFlags{brokers: "b:9092", translate: standby.TranslateNone, createTopics: true, replicationFactor: 3}, ""},
	} {
		err := tc.f.check()
		var ue usageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.f, err)
		case tc.want != "" && (err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want a usage error saying %q", tc.f, err, tc.want)
		}
	}
}
