package restore_test

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/translate"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// mappedCluster is a new cluster holding dr.orders, the copy of the old
// cluster's orders (3 partitions, 30 records), with its Connect stand-in.
func mappedCluster(t *testing.T) *connectCluster {
	t.Helper()
	dst := newConnectCluster(t, "new-cluster")
	if _, err := kadm.NewClient(dst.cl).CreateTopic(t.Context(), 3, -1, nil, "dr.orders"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 30 {
		recs = append(recs, &kgo.Record{Topic: "dr.orders", Partition: int32(i % 3), Value: []byte("order")})
	}
	if err := dst.cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// translated translates snap for dst with opts and returns it with the
// translation table printed.
func translated(t *testing.T, dst *connectCluster, snap *snapshot.Snapshot, opts translate.TranslateOptions) (*snapshot.Snapshot, *translate.Translation, string) {
	t.Helper()
	out, tr, err := translate.Translate(t.Context(), dst.cl, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := tr.Print(&table); err != nil {
		t.Fatal(err)
	}
	return out, tr, table.String()
}

// TestCreateConnectorsMapsTopics: a migration with --create-connectors and
// --topic-prefix (and --map-topic) restores a sink's offsets into dr.orders
// and creates the connector reading dr.orders, not orders (it was created
// still reading orders, and --resume started it there). The rewrite is in
// the translation table, the plan and the report; --resume starts it and
// GET /connectors/snk/offsets shows the old offsets on dr.orders.
func TestCreateConnectorsMapsTopics(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts translate.TranslateOptions
	}{
		{"topic-prefix", translate.TranslateOptions{TopicPrefix: "dr."}},
		{"map-topic", translate.TranslateOptions{MapTopics: map[string]string{"orders": "dr.orders"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			_, snap := oldCluster(t)
			dst := mappedCluster(t)
			snap2, tr, table := translated(t, dst, snap, tc.opts)
			if len(tr.Configs) != 1 || !strings.Contains(table, "config: connector snk: topics=orders -> topics=dr.orders (the config --create-connectors creates it with)") {
				t.Fatalf("translation table:\n%s", table)
			}
			if c, _ := snap.Connector("snk"); c.Config["topics"] != "orders" {
				t.Fatalf("the translation changed the snapshot's own config: %v", c.Config)
			}
			st, err := store.OpenStore(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var out bytes.Buffer
			env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
			req := restore.Request{Snapshot: snap2, Options: restore.Options{AllowOtherCluster: true}, CreateConnectors: true, Resume: true,
				StopTimeout: 30 * time.Second, ConfigRewrites: tr.Configs}
			req.Connectors = []string{"snk"}
			rep, err := restore.Run(ctx, env, req)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "  snk: created with topics=dr.orders (the snapshot has topics=orders)") ||
				!strings.Contains(out.String(), "resumed: connector snk (RUNNING, 2 tasks)") {
				t.Errorf("output:\n%s", out.String())
			}
			if len(rep.Created) != 1 || len(rep.Created[0].Rewritten) != 1 || rep.Created[0].Rewritten[0].New != "dr.orders" {
				t.Errorf("report creations %+v", rep.Created)
			}
			all, err := dst.rc.Connectors(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := maps.Clone(sinkConfig)
			want["topics"] = "dr.orders"
			if got := all["snk"].Info.Config; !maps.Equal(got, want) {
				t.Errorf("snk created with %v, want %v", got, want)
			}
			is, err := dst.rc.Offsets(ctx, "snk")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{`{"kafka_partition":0,"kafka_topic":"dr.orders"},"offset":{"kafka_offset":3}`, `{"kafka_partition":2,"kafka_topic":"dr.orders"},"offset":{"kafka_offset":5}`} {
				if !bytes.Contains(is, []byte(w)) {
					t.Errorf("GET /connectors/snk/offsets lacks %s: %s", w, is)
				}
			}
		})
	}
}

// TestCreateConnectorsRegexUnmapped: a sink reading topics.regex=orders,
// restored into dr.orders with --map-topic: a pattern cannot be rewritten,
// so --create-connectors refuses it with the reason (exit 3, nothing
// created, nothing written), also in a dry run; a pattern that already
// reads the renamed topic is no refusal.
func TestCreateConnectorsRegexUnmapped(t *testing.T) {
	ctx := t.Context()
	old := newConnectCluster(t, "old-cluster")
	cfg := map[string]string{"connector.class": "FileStreamSink", "name": "rx", "topics.regex": "orders", "tasks.max": "1"}
	if _, err := old.rc.CreateConnector(ctx, "rx", cfg, ""); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range 9 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: int32(i % 3), Value: []byte("order")})
	}
	if err := old.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 2, LeaderEpoch: -1})
	if resp, err := kadm.NewClient(old.cl).CommitOffsets(ctx, "connect-rx", commits); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	snap, err := capture.Capture(ctx, old.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20261202T000000.000000Z-00c0de"
	dst := mappedCluster(t)
	snap2, tr, table := translated(t, dst, snap, translate.TranslateOptions{MapTopics: map[string]string{"orders": "dr.orders"}})
	if !strings.Contains(strings.Join(strings.Fields(table), " "), "config: connector rx: topics.regex=orders NOT REWRITTEN: a pattern cannot be rewritten to the renamed topics, and it does not match dr.orders (--create-connectors and --resume refuse it)") {
		t.Fatalf("translation table:\n%s", table)
	}
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
	req := restore.Request{Snapshot: snap2, Options: restore.Options{AllowOtherCluster: true}, CreateConnectors: true, Resume: true,
		StopTimeout: 30 * time.Second, ConfigRewrites: tr.Configs}
	for _, dry := range []bool{true, false} {
		out.Reset()
		req.DryRun = dry
		rep, err := restore.Run(ctx, env, req)
		if !errors.Is(err, restore.ErrRefused) || rep.Undo != "" || len(rep.Refusals) == 0 && !dry {
			t.Fatalf("dry run %v: %v, report %+v\n%s", dry, err, rep, out.String())
		}
		text := err.Error() + out.String()
		for _, want := range []string{`connector "rx": --create-connectors would create it with topics.regex=orders (a pattern cannot be rewritten`,
			"which does not read dr.orders, where its offsets are restored", `POST /connectors with "initial_state":"STOPPED"`} {
			if !strings.Contains(text, want) {
				t.Errorf("dry run %v: refusal lacks %q:\n%s", dry, want, text)
			}
		}
		checkConnectors(t, dst)
		if got, err := kadm.NewClient(dst.cl).FetchOffsets(ctx, "connect-rx"); err == nil && len(got.Offsets()) > 0 {
			t.Fatalf("dry run %v: group connect-rx written: %v", dry, got.Offsets())
		}
	}

	// A pattern that reads the renamed topic needs no rewrite.
	wide := *snap
	wide.Connectors = nil
	for _, c := range snap.Connectors {
		c.Config = maps.Clone(c.Config)
		c.Config["topics.regex"] = ".*orders"
		wide.Connectors = append(wide.Connectors, c)
	}
	snap2, tr, table = translated(t, dst, &wide, translate.TranslateOptions{MapTopics: map[string]string{"orders": "dr.orders"}})
	if len(tr.Configs) != 0 {
		t.Fatalf("a pattern reading dr.orders was rewritten:\n%s", table)
	}
	req.Snapshot, req.ConfigRewrites, req.DryRun = snap2, nil, false
	out.Reset()
	if _, err := restore.Run(ctx, env, req); err != nil {
		t.Fatalf("run with topics.regex=.*orders: %v\n%s", err, out.String())
	}
	checkConnectors(t, dst, "rx")
}

// TestResumeRefusedTopicsUnread: an existing sink on the target reads
// orders; its offsets are restored into dr.orders (--topic-prefix) with
// --stop-connectors --resume: resuming it would start it on topics it has
// no restored offsets for, so the restore is refused before anything is
// stopped or written, naming its topics and the request that changes
// them. Without --resume it restores and leaves it stopped.
func TestResumeRefusedTopicsUnread(t *testing.T) {
	ctx := t.Context()
	_, snap := oldCluster(t)
	dst := mappedCluster(t)
	if _, err := dst.rc.CreateConnector(ctx, "snk", sinkConfig, ""); err != nil {
		t.Fatal(err)
	}
	snap2, tr, _ := translated(t, dst, snap, translate.TranslateOptions{TopicPrefix: "dr."})
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	env := restore.Env{Client: dst.cl, Store: st, Connect: dst.rc, Out: &out, Warn: &out}
	req := restore.Request{Snapshot: snap2, Options: restore.Options{AllowOtherCluster: true}, StopConnectors: true, Resume: true,
		StopTimeout: 30 * time.Second, ConfigRewrites: tr.Configs}
	req.Connectors = []string{"snk"}
	rep, err := restore.Run(ctx, env, req)
	if !errors.Is(err, restore.ErrRefused) || rep.Undo != "" || len(rep.Stopped) != 0 ||
		!strings.Contains(err.Error(), `connector "snk": its config here reads topics=orders, not dr.orders, where its offsets are restored: --resume would start it`) ||
		!strings.Contains(err.Error(), "PUT /connectors/snk/config") {
		t.Fatalf("with --resume: %v, report %+v\n%s", err, rep, out.String())
	}
	states, err := dst.rc.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if states["snk"].Connector.State != connectrest.StateRunning {
		t.Errorf("refused, snk is %v, want RUNNING as before", states["snk"])
	}
	req.Resume = false
	out.Reset()
	if rep, err = restore.Run(ctx, env, req); err != nil || rep.Undo == "" {
		t.Fatalf("without --resume: %v\n%s", err, out.String())
	}
	if states, err = dst.rc.States(ctx); err != nil || states["snk"].Connector.State != connectrest.StateStopped {
		t.Errorf("without --resume, snk is %v (%v), want STOPPED", states["snk"], err)
	}
}
