package restore_test

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// connectCluster is a kfake cluster with the worker topics (compact), a
// sink topic orders, and a Connect REST stand-in over it.
type connectCluster struct {
	cl  *kgo.Client
	srv *connectsimtest.Server
	rc  *connectrest.Client
}

func newConnectCluster(t *testing.T, id string) *connectCluster {
	t.Helper()
	return newConnectClusterWith(t, id, connectsim.Options{})
}

// newConnectClusterWith is newConnectCluster with its REST stand-in made
// with opts.
func newConnectClusterWith(t *testing.T, id string, opts connectsim.Options) *connectCluster {
	t.Helper()
	kc := testkit.Kfake(t, kfake.NumBrokers(1), kfake.ClusterID(id))
	cl := testkit.Client(t, kc)
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for _, tp := range []struct {
		name  string
		parts int32
		conf  map[string]*string
	}{{snapshot.DefaultConfigTopic, 1, compact}, {snapshot.DefaultOffsetsTopic, 5, compact}, {"orders", 3, nil}} {
		if _, err := adm.CreateTopic(t.Context(), tp.parts, -1, tp.conf, tp.name); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := connectsimtest.Start(cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rc, err := connectrest.New(connectrest.Config{URLs: []string{srv.URL}, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &connectCluster{cl: cl, srv: srv, rc: rc}
}

// Configs of the old cluster's connectors.
var (
	srcConfig   = map[string]string{"connector.class": "FileStreamSource", "name": "src", "file": "/data/in.txt", "topic": "lines", "tasks.max": "1", "file.password": "${file:/s.properties:pw}"}
	sinkConfig  = map[string]string{"connector.class": "FileStreamSink", "name": "snk", "topics": "orders", "tasks.max": "2", "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
	otherConfig = map[string]string{"connector.class": "FileStreamSource", "name": "other", "file": "/data/other.txt", "topic": "other", "tasks.max": "1"}
)

// oldCluster runs connectors src and other (sources) and snk (a sink of
// orders) with offsets, and returns it with its snapshot.
func oldCluster(t *testing.T) (*connectCluster, *snapshot.Snapshot) {
	t.Helper()
	ctx := t.Context()
	old := newConnectCluster(t, "old-cluster")
	for name, cfg := range map[string]map[string]string{"src": srcConfig, "snk": sinkConfig, "other": otherConfig} {
		if _, err := old.rc.CreateConnector(ctx, name, cfg, ""); err != nil {
			t.Fatal(err)
		}
	}
	var recs []*kgo.Record
	for i := 0; i < 30; i++ {
		recs = append(recs, &kgo.Record{Topic: "orders", Key: []byte{byte(i)}, Value: []byte("order")})
	}
	for _, kv := range [][2]string{
		{`["src",{"filename":"/data/in.txt"}]`, `{"position":1234}`},
		{`["src",{"filename":"/data/in2.txt"}]`, `{"position":99}`},
		{`["other",{"filename":"/data/other.txt"}]`, `{"position":7}`},
	} {
		recs = append(recs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(kv[0]), Value: []byte(kv[1])})
	}
	if err := old.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3, LeaderEpoch: -1})
	commits.Add(kadm.Offset{Topic: "orders", Partition: 2, At: 5, LeaderEpoch: -1})
	if resp, err := kadm.NewClient(old.cl).CommitOffsets(ctx, "connect-snk", commits); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	snap, err := capture.Capture(ctx, old.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20261202T000000.000000Z-00c0de"
	return old, snap
}

// TestCreateConnectors: --create-connectors into an empty cluster's
// Connect. On a worker older than 3.7 it refuses with the steps by hand; a
// snapshot without configs is an error saying what to do; the dry run
// lists the creations and creates nothing; the run creates each missing
// connector (source and sink, one renamed) STOPPED with the snapshot's
// config, writes and verifies its offsets and resumes it, and reports one
// that exists with another config without touching it.
func TestCreateConnectors(t *testing.T) {
	ctx := t.Context()
	old, snap := oldCluster(t)
	if c, ok := snap.Connector("snk"); !ok || c.Config["topics"] != "orders" {
		t.Fatalf("snapshot connector snk = %+v", c)
	}
	dst := newConnectCluster(t, "new-cluster")
	// other exists on the new cluster, stopped, with another config.
	otherHere := maps.Clone(otherConfig)
	otherHere["file"] = "/data/elsewhere.txt"
	if _, err := dst.rc.CreateConnector(ctx, "other", otherHere, connectrest.StateStopped); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	renamed, _, err := translate.Translate(ctx, dst.cl, snap, translate.TranslateOptions{Rename: map[string]string{"src": "src2"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
	req := restore.Request{Snapshot: renamed, Options: restore.Options{AllowOtherCluster: true}, CreateConnectors: true, Resume: true, StopTimeout: 30 * time.Second}

	// An older worker: refused, nothing created or written.
	dst.srv.SetVersion("3.6.1")
	rep, err := restore.Run(ctx, env, req)
	if !errors.Is(err, restore.ErrRefused) || !strings.Contains(err.Error(), "3.7") || !strings.Contains(err.Error(), "run this restore again without --create-connectors") ||
		!strings.Contains(err.Error(), `"name":"src2"`) || rep.Undo != "" {
		t.Fatalf("on 3.6: %v, report %+v", err, rep)
	}
	dst.srv.SetVersion("3.8.0")
	checkConnectors(t, dst, "other")

	// A snapshot without configs: an error naming what to do.
	bare := *renamed
	bare.Connectors = nil
	for _, c := range renamed.Connectors {
		c.Config = nil
		bare.Connectors = append(bare.Connectors, c)
	}
	noConf := req
	noConf.Snapshot = &bare
	if _, err := restore.Run(ctx, env, noConf); err == nil || errors.Is(err, restore.ErrRefused) || !strings.Contains(err.Error(), "holds no config for 2 connectors") || !strings.Contains(err.Error(), "take a new snapshot") {
		t.Fatalf("snapshot without configs: %v", err)
	}
	checkConnectors(t, dst, "other")

	// The dry run lists the creations and creates nothing.
	dry := req
	dry.DryRun = true
	out.Reset()
	rep, err = restore.Run(ctx, env, dry)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"--create-connectors dry run: would create 2 connectors STOPPED, with the snapshot's configs: snk (sink), src2 (source)",
		"connector other exists on Connect with another config (file differ): left as it is, never overwritten", "dry run: nothing written"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out.String())
		}
	}
	if got := actions(rep.Created); got != "other:exists-with-other-config snk:create src2:create" {
		t.Errorf("dry run creations %s", got)
	}
	checkConnectors(t, dst, "other")

	// The run.
	out.Reset()
	rep, err = restore.Run(ctx, env, req)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := actions(rep.Created); got != "other:exists-with-other-config snk:created src2:created" || rep.Undo == "" {
		t.Errorf("creations %s, report %+v", got, rep)
	}
	for _, want := range []string{"created: 2 connectors STOPPED", "verified: 3 connectors match the snapshot", "resumed: connector snk (RUNNING, 2 tasks)", "resumed: connector src2 (RUNNING, 1 task)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	checkConnectors(t, dst, "other", "snk", "src2")
	wantSrc := maps.Clone(srcConfig)
	wantSrc["name"] = "src2"
	for name, want := range map[string]map[string]string{"src2": wantSrc, "snk": sinkConfig, "other": otherHere} {
		all, err := dst.rc.Connectors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := all[name].Info.Config; !maps.Equal(got, want) {
			t.Errorf("connector %s config %v, want %v", name, got, want)
		}
	}
	for oldName, newName := range map[string]string{"src": "src2", "snk": "snk", "other": "other"} {
		was, err := old.rc.Offsets(ctx, oldName)
		if err != nil {
			t.Fatal(err)
		}
		is, err := dst.rc.Offsets(ctx, newName)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(was, is) {
			t.Errorf("GET /connectors/%s/offsets: %s, the old %s's: %s", newName, is, oldName, was)
		}
	}
	states, err := dst.rc.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if states["src2"].Connector.State != connectrest.StateRunning || states["snk"].Connector.State != connectrest.StateRunning || states["other"].Connector.State != connectrest.StateStopped {
		t.Errorf("states %v", states)
	}

	// Again: nothing to create, nothing to write.
	out.Reset()
	if rep, err = restore.Run(ctx, env, restore.Request{Snapshot: renamed, Options: req.Options, CreateConnectors: true}); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("again: %v\n%s", err, out.String())
	}
	if got := actions(rep.Created); got != "other:exists-with-other-config snk:exists src2:exists" {
		t.Errorf("again: creations %s", got)
	}
}

func actions(cs []restore.Creation) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.Connector+":"+c.Action)
	}
	return strings.Join(parts, " ")
}

// checkConnectors checks that the Connect of c has exactly the connectors
// named.
func checkConnectors(t *testing.T, c *connectCluster, names ...string) {
	t.Helper()
	all, err := c.rc.Connectors(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, len(all))
	for n := range all {
		got = append(got, n)
	}
	if strings.Join(slices.Sorted(slices.Values(got)), ",") != strings.Join(names, ",") {
		t.Errorf("connectors %v, want %v", got, names)
	}
}

// TestCreateConnectorsRenamedOverrideGroup: a sink whose config sets
// consumer.override.group.id, renamed with --rename-connector and created
// by --create-connectors, reads that group, not connect-<new name>: its
// offsets are written there, and GET /connectors/<new>/offsets on the new
// Connect equals the old connector's.
func TestCreateConnectorsRenamedOverrideGroup(t *testing.T) {
	ctx := t.Context()
	old := newConnectCluster(t, "old-cluster")
	cfg := maps.Clone(sinkConfig)
	cfg["name"], cfg["consumer.override.group.id"] = "archive", "archive-loader"
	if _, err := old.rc.CreateConnector(ctx, "archive", cfg, ""); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: []byte("order")})
	}
	if err := old.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 2, LeaderEpoch: -1})
	if resp, err := kadm.NewClient(old.cl).CommitOffsets(ctx, "archive-loader", commits); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	snap, err := capture.Capture(ctx, old.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20261202T000000.000000Z-00c0de"

	dst := newConnectCluster(t, "new-cluster")
	if err := dst.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	renamed, tr, err := translate.Translate(ctx, dst.cl, snap, translate.TranslateOptions{Rename: map[string]string{"archive": "archive2"}})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := tr.Print(&table); err != nil {
		t.Fatal(err)
	}
	if len(renamed.SinkGroups) != 1 || renamed.SinkGroups[0].Group != "archive-loader" ||
		!strings.Contains(table.String(), "sink offsets into group archive-loader") || !strings.Contains(table.String(), "translation (none: offsets kept as numbers): 1 sink partition") {
		t.Fatalf("renamed sink groups %+v:\n%s", renamed.SinkGroups, table.String())
	}
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
	req := restore.Request{Snapshot: renamed, Options: restore.Options{AllowOtherCluster: true}, CreateConnectors: true, Resume: true, StopTimeout: 30 * time.Second}
	if _, err := restore.Run(ctx, env, req); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkConnectors(t, dst, "archive2")
	all, err := dst.rc.Connectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := all["archive2"].Info.Config["consumer.override.group.id"]; got != "archive-loader" {
		t.Fatalf("archive2 created with group override %q", got)
	}
	was, err := old.rc.Offsets(ctx, "archive")
	if err != nil {
		t.Fatal(err)
	}
	is, err := dst.rc.Offsets(ctx, "archive2")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(was, is) || !bytes.Contains(is, []byte(`"kafka_offset":2`)) {
		t.Errorf("GET /connectors/archive2/offsets: %s, the old archive's: %s", is, was)
	}
	stray, err := kadm.NewClient(dst.cl).FetchOffsets(ctx, "connect-archive2")
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatal(err)
	}
	if len(stray.Offsets()) != 0 {
		t.Errorf("group connect-archive2, which nothing reads, got offsets %v", stray.Offsets())
	}
}
