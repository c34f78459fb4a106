package main

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// standbyWorld is a primary seeded with connectdemo's connectors and a
// standby with Connect's topics, MirrorMaker 2's copies of the data topics
// (aliases a -> b) and the Connect REST stand-in.
type standbyWorld struct {
	primary, standby string
	acl, bcl         *kgo.Client
	connect          *connectsimtest.Server
	rc               *connectrest.Client
	spec             connectdemo.Spec
	// primaryCluster is the primary's kfake cluster (a test closes it
	// to take the primary's Kafka down).
	primaryCluster *kfake.Cluster
}

// newStandbyWorld makes the world, with extra bulk file connectors
// (file-bulk-NNNN, running) on the primary.
func newStandbyWorld(t testing.TB, extra int) *standbyWorld {
	t.Helper()
	ctx := context.Background()
	a, acl := testkit.Cluster(t, kfake.ClusterID("primary"))
	b, bcl := testkit.Cluster(t, kfake.ClusterID("standby"))
	spec, fill := connectdemo.MigrationSpec(time.Now().Add(-time.Hour).Truncate(time.Second))
	spec.ExtraFileConnectors = extra
	exp, err := connectdemo.Seed(t.Context(), acl, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	if err := fill(ctx, acl); err != nil {
		t.Fatal(err)
	}
	if err := connectdemo.CreateTopics(ctx, bcl, connectdemo.Topics{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(bcl).CreateTopic(ctx, 5, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, connectdemo.EOSOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := connectdemo.MirrorTopics(ctx, acl, bcl, connectdemo.Mirror{SourceAlias: "a", TargetAlias: "b",
		Topics: []string{"orders", "clicks", "invoices", "legacy.customers"}, Shift: func(string, int32) int64 { return 50 },
		SyncEvery: 10, Checkpointed: []string{connectdemo.GroupSinkES}}); err != nil {
		t.Fatal(err)
	}
	srv, err := connectsimtest.Start(bcl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return &standbyWorld{primary: strings.Join(a.ListenAddrs(), ","), standby: strings.Join(b.ListenAddrs(), ","),
		acl: acl, bcl: bcl, connect: srv, rc: rc, spec: spec, primaryCluster: a}
}

func (w *standbyWorld) flags() []string {
	return []string{"--standby-brokers", w.standby, "--standby-translate", "mm2", "--mm2-source-alias", "a", "--standby-connect-url", w.connect.URL}
}

// standbyValue is the value of key on the standby's worker offsets topic
// ("" when absent).
func standbyValue(t *testing.T, cl *kgo.Client, key []byte) string {
	t.Helper()
	snap, err := capture.Capture(context.Background(), cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range snap.SourceTable().Collect() {
		if string(o.Key) == string(key) {
			return string(o.Value)
		}
	}
	return ""
}

var metricLine = regexp.MustCompile(`(?m)^(offsetkeeper_standby_[a-z_]+(?:\{[^}]*\})?) (\S+)$`)

func standbyMetrics(addr string) map[string]float64 {
	out := map[string]float64{}
	_, body, err := httpGet("http://" + addr + "/metrics")
	if err != nil {
		return out
	}
	for _, m := range metricLine.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] = v
	}
	return out
}

// TestStandbyDaemonFailover: the daemon keeps the standby in step (its
// connectors created STOPPED there, a change on the primary's offsets
// written to the standby, the lag and the connectors in step on
// /metrics); failover fences it, applies the last state, verifies and
// resumes on the standby the connectors that ran on the primary; the
// daemon then reports itself fenced, and a second daemon started on the
// same store never writes to the standby.
func TestStandbyDaemonFailover(t *testing.T) {
	w := newStandbyWorld(t, 0)
	st := "file://" + t.TempDir()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr testkit.SyncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", addr, "--log-format", "json"}, w.flags()...), &stdout, &stderr)
	}()
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			select {
			case code := <-exit:
				t.Fatalf("daemon exited with %d while waiting for %s\n%s", code, what, stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s\n%s", what, stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("the standby in step", func() bool {
		m := standbyMetrics(addr)
		return m["offsetkeeper_standby_last_applied_timestamp_seconds"] > 0 && m[`offsetkeeper_standby_connectors{state="in_step"}`] > 0
	})
	// The page and its JSON twin show the standby.
	if code, body, err := httpGet("http://" + addr + "/api/standby"); err != nil || code != 200 || !strings.Contains(body, `"in_step":`) || !strings.Contains(body, `"last_sync":`) {
		t.Errorf("/api/standby: %d %v\n%s", code, err, body)
	}
	if code, body, err := httpGet("http://" + addr + "/"); err != nil || code != 200 || !strings.Contains(body, `class="standby"`) {
		t.Errorf("the page shows no standby line: %d %v", code, err)
	}
	for _, n := range []string{connectdemo.ConnFile, connectdemo.ConnJDBC} {
		if s, err := w.rc.Status(ctx, n); err != nil || !s.Stopped() {
			t.Fatalf("%s on the standby: %+v, %v; want created STOPPED", n, s, err)
		}
	}

	// A change of the file connector's offset on the primary reaches the
	// standby through the journal.
	key := []byte(`["` + connectdemo.ConnFile + `",{"filename":"/var/log/app.log"}]`)
	snapA, err := capture.Capture(ctx, w.acl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range snapA.SourceTable().Collect() {
		if o.Connector == connectdemo.ConnFile {
			key = o.Key
		}
	}
	testkit.Produce(t, w.acl, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":987654}`)})
	wait("the change on the standby", func() bool { return standbyValue(t, w.bcl, key) == `{"position":987654}` })

	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--output", "json"}, w.flags()...)...)
	if code != 0 {
		t.Fatalf("failover exit %d\n%s\n%s", code, out, errs)
	}
	var doc failoverDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("failover --output json: %v\n%s", err, out)
	}
	if !doc.Fenced || !doc.Verified || doc.Primary != "primary" || doc.Standby != "standby" || doc.RPOSeconds <= 0 || doc.Seconds <= 0 {
		t.Fatalf("failover document %+v", doc)
	}
	if len(doc.Resumed) == 0 {
		t.Fatalf("failover resumed nothing: %+v", doc)
	}
	// The duplicates bound: per sink partition from the translated offset
	// to the end of the standby's copy, and their sum.
	var sum int64
	for _, b := range doc.DuplicateBounds {
		if b.Records != max(0, b.End-b.Committed) || b.Group == "" || b.Topic == "" {
			t.Errorf("duplicate bound %+v", b)
		}
		sum += b.Records
	}
	if len(doc.DuplicateBounds) == 0 || sum != doc.DuplicatesBound {
		t.Errorf("failover duplicates bound %d of %+v", doc.DuplicatesBound, doc.DuplicateBounds)
	}
	for _, c := range w.spec.Connectors {
		if !c.HasConfig {
			continue
		}
		s, err := w.rc.Status(ctx, c.Name)
		if err != nil {
			t.Fatalf("%s on the standby after failover: %v", c.Name, err)
		}
		want := map[string]string{snapshot.StateStarted: "RUNNING", snapshot.StatePaused: "PAUSED", snapshot.StateStopped: "STOPPED"}[c.TargetState]
		if s.Connector.State != want {
			t.Errorf("%s on the standby after failover: %s, want %s (target state %s on the primary)", c.Name, s.Connector.State, want, c.TargetState)
		}
	}
	if got := standbyValue(t, w.bcl, key); got != `{"position":987654}` {
		t.Errorf("after failover the standby holds %q for the file connector", got)
	}
	// diff of the state failover applied with the standby: the
	// differences are the sink offsets the translation moved, and it says
	// so.
	code, out, errs = runCLI(t, "diff", "--store", st, "--at", doc.StateAt.Format(time.RFC3339Nano), "--live", "--brokers", w.standby)
	t.Logf("diff --at %s --live (the standby):\n%s%s", doc.StateAt.Format(time.RFC3339Nano), out, errs)
	if code != 0 || !strings.Contains(out, "note: live cluster standby is the standby of cluster primary (failover at ") ||
		!regexp.MustCompile(`note: sink offsets translated \(mm2\): all \d+ differences are the translation's, expected; nothing else differs`).MatchString(out) {
		t.Errorf("diff --at --live against the standby: exit %d\n%s\n%s", code, out, errs)
	}
	// A change no translation made is named as not the translation's.
	testkit.Produce(t, w.bcl, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":5}`)})
	code, out, errs = runCLI(t, "diff", "--store", st, "--at", doc.StateAt.Format(time.RFC3339Nano), "--live", "--brokers", w.standby)
	if code != 0 || !regexp.MustCompile(`(?s)note: sink offsets translated \(mm2\): \d+ of the \d+ differences are the translation's, `+
		`expected;\nnote: these 1 are not:\n.*`+connectdemo.ConnFile+`.*changed`).MatchString(out) {
		t.Errorf("diff --at --live against the standby after a change there: exit %d\n%s\n%s", code, out, errs)
	}
	wait("the daemon fenced", func() bool { return standbyMetrics(addr)["offsetkeeper_standby_fenced"] == 1 })
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("daemon exit %d\n%s", code, stderr.String())
	}

	// A second daemon on the same store: fenced from its first sync; the
	// standby's offsets topic is never written again.
	ends := func() string {
		e, err := kadm.NewClient(w.bcl).ListEndOffsets(context.Background(), connectdemo.DefaultOffsetsTopic)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(e)
		return string(b)
	}
	before := ends()
	testkit.Produce(t, w.acl, &kgo.Record{Topic: connectdemo.DefaultOffsetsTopic, Key: key, Value: []byte(`{"position":1}`)})
	addr2 := freeAddr(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var stderr2 testkit.SyncBuffer
	exit2 := make(chan int, 1)
	go func() {
		exit2 <- run(ctx2, append([]string{"daemon", "--brokers", w.primary, "--store", st, "--schedule", "@every 1h",
			"--journal-interval", "200ms", "--standby-interval", "200ms", "--listen", addr2, "--log-format", "json"}, w.flags()...), &stdout, &stderr2)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for standbyMetrics(addr2)["offsetkeeper_standby_fenced"] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("second daemon not fenced\n%s", stderr2.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(stderr2.String(), "standby fenced") {
		t.Errorf("second daemon's log does not say it is fenced:\n%s", stderr2.String())
	}
	cancel2()
	<-exit2
	if after := ends(); after != before {
		t.Fatalf("the standby's offsets topic was written after the fence: %s -> %s", before, after)
	}
}

// TestFailoverDryRunAndRefused: with only a snapshot in the store (no
// journal), failover --dry-run writes nothing and stores no fence; with a
// connector running on the standby failover is refused (exit 3) before
// the fence; without a standby Connect URL it prints the resume calls.
func TestFailoverDryRunAndRefused(t *testing.T) {
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	ends := func() string {
		e, err := kadm.NewClient(w.bcl).ListEndOffsets(ctx, connectdemo.DefaultOffsetsTopic)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(e)
		return string(b)
	}
	fenced := func() bool {
		s, err := store.OpenStore(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Fences().Get(ctx, "primary")
		return err == nil
	}
	before := ends()
	noConnect := []string{"--standby-brokers", w.standby, "--standby-translate", "mm2", "--mm2-source-alias", "a"}
	code, out, errs := runCLI(t, append([]string{"failover", "--store", st, "--dry-run"}, noConnect...)...)
	if code != 0 || !strings.Contains(out, "dry run: nothing written, no fence stored") || !strings.Contains(out, `curl -sS --fail-with-body -X PUT "$STANDBY_CONNECT_URL/connectors/`) {
		t.Fatalf("failover --dry-run: %d\n%s\n%s", code, out, errs)
	}
	if ends() != before || fenced() {
		t.Fatal("failover --dry-run wrote to the standby or stored a fence")
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 120 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}

	testkit.Produce(t, w.bcl, &kgo.Record{Topic: connectdemo.DefaultConfigsTopic, Key: []byte("connector-" + connectdemo.ConnFile),
		Value: []byte(`{"properties":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","name":"` + connectdemo.ConnFile + `"}}`)})
	code, out, errs = runCLI(t, append([]string{"failover", "--store", st}, noConnect...)...)
	if code != exitRefused || !strings.Contains(errs, connectdemo.ConnFile) || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("failover with %s running on the standby: %d, want %d\n%s\n%s", connectdemo.ConnFile, code, exitRefused, out, errs)
	}
	if ends() != before || fenced() {
		t.Fatal("a refused failover wrote to the standby or stored a fence")
	}
}

// TestFailoverRefusedWhilePrimaryRuns: with the primary's Connect named
// (--connect-url) and answering, a failover while it runs connectors of
// the state is refused (exit 3, nothing written, no fence): resumed on the
// standby they would run on both clusters. The refusal prints, each on a
// line of its own, the commands that stop them on the primary and resume
// them on the standby; once they are stopped there (and the state has it),
// the same failover runs. --force fails over anyway, saying so.
func TestFailoverRefusedWhilePrimaryRuns(t *testing.T) {
	w := newStandbyWorld(t, 0)
	ctx := context.Background()
	prim, err := connectsimtest.Start(w.acl, connectsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prim.Close)
	prc, err := connectrest.New(connectrest.Config{URLs: []string{prim.URL}})
	if err != nil {
		t.Fatal(err)
	}
	live, err := prc.Connectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var running []string
	for name, e := range live {
		if e.Status != nil && e.Status.Connector.State == "RUNNING" {
			running = append(running, name)
		}
	}
	if len(running) == 0 {
		t.Fatal("no connector runs on the primary: the test needs one")
	}
	st := "file://" + t.TempDir()
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	args := append([]string{"failover", "--store", st, "--connect-url", prim.URL, "--dry-run"}, w.flags()...)
	code, out, errs := runCLI(t, args...)
	if code != exitRefused || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("failover while the primary runs: %d, want %d\n%s\n%s", code, exitRefused, out, errs)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(errs, "\n") {
		if len(l) > 120 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
		lines[strings.TrimSpace(l)] = true
	}
	for _, n := range running {
		for _, cmd := range []string{
			// A URL with a % escape is quoted for the shell.
			"curl -sS --fail-with-body -X PUT " + restore.ShellQuote(prim.URL+"/connectors/"+url.PathEscape(n)+"/stop"),
			"curl -sS --fail-with-body -X PUT " + restore.ShellQuote(w.connect.URL+"/connectors/"+url.PathEscape(n)+"/resume"),
		} {
			if !lines[cmd] {
				t.Errorf("the refusal lacks the line %q:\n%s", cmd, errs)
			}
		}
	}

	code, out, errs = runCLI(t, append(args, "--force")...)
	if code != 0 || !strings.Contains(out, "WARNING: --force: the primary's Connect still runs") {
		t.Fatalf("failover --force --dry-run: %d\n%s\n%s", code, out, errs)
	}

	// Stopped on the primary, as advised; the state taken after it.
	for _, n := range running {
		if err := prc.Stop(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errs := runCLI(t, "snapshot", "--brokers", w.primary, "--store", st); code != 0 {
		t.Fatalf("snapshot: %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs = runCLI(t, args...); code != 0 || !strings.Contains(out, "dry run: nothing written, no fence stored") {
		t.Fatalf("failover once the primary's connectors are stopped: %d\n%s\n%s", code, out, errs)
	}
}
