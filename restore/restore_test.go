package restore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// newCluster starts a 3-broker kfake cluster, seeded with spec unless nil.
func newCluster(t *testing.T, spec *connectdemo.Spec, opts ...kfake.Opt) (*kgo.Client, *connectdemo.Expected) {
	t.Helper()
	if spec == nil {
		_, cl := testkit.Cluster(t, opts...)
		return cl, nil
	}
	_, cl, exp := testkit.Seeded(t, *spec, opts...)
	return cl, exp
}

// small is a cluster with the worker topics (offsets topic 4 partitions,
// cleanup.policy as given) and one source connector "c1" with no config,
// plus the snapshot that restores one key of it.
func small(t *testing.T, policy string) (*kgo.Client, *snapshot.Snapshot) {
	t.Helper()
	cl, _ := newCluster(t, nil)
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, snapshot.DefaultConfigTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 4, -1, map[string]*string{"cleanup.policy": kadm.StringPtr(policy)}, snapshot.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	key := []byte(`["c1",{"file":"a->b <&>"}]`)
	snap := (&snapshot.Snapshot{
		Version:    snapshot.Version,
		ID:         "20240101T000000.000000Z-000001",
		ClusterID:  connectdemo.DefaultClusterID,
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, 4)}},
		Connectors: []snapshot.Connector{{Name: "c1", Type: snapshot.TypeSource, Tasks: -1}},
	}).WithSourceOffsets([]snapshot.SourceOffset{{
		Topic: snapshot.DefaultOffsetsTopic, Partition: snapshot.PartitionFor(key, 4),
		Key: key, Value: []byte(`{"pos":1.0E7}`), Connector: "c1",
	}})
	return cl, snap
}

// TestCheckCleanupPolicyAndConcurrentRestore: an offsets topic written to
// that is not exactly compact, and another restore's open transaction on
// it, refuse; another restore's transaction on a topic not written to is a
// warning, and a topic not written to may have any policy.
func TestCheckCleanupPolicyAndConcurrentRestore(t *testing.T) {
	cl, snap := small(t, "compact,delete")
	ctx := context.Background()
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Counts(); c.SourceWrites != 1 || c.Writes() != 1 {
		t.Fatalf("plan counts %+v, want one source write", c)
	}

	// Another restore holds a transaction open.
	other, err := kgo.NewClient(append(cl.Opts(), kgo.TransactionalID(restore.TransactionalIDPrefix+"connect-offsets"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := other.ProduceSync(ctx, &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("x"), Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// And one on a topic this restore does not write: a warning only.
	elsewhere, err := kgo.NewClient(append(cl.Opts(), kgo.TransactionalID(restore.TransactionalIDPrefix+"elsewhere-offsets"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close()
	if err := elsewhere.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := elsewhere.ProduceSync(ctx, &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte("x"), Value: []byte("z")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	err = plan.Check(ctx, cl)
	var refused *restore.RefusedError
	if !errors.As(err, &refused) || !errors.Is(err, restore.ErrRefused) {
		t.Fatalf("Check: %v, want a RefusedError", err)
	}
	checks := map[string]bool{}
	for _, r := range refused.Refusals {
		checks[r.Check] = true
	}
	if !checks[restore.CheckCleanupPolicy] || !checks[restore.CheckConcurrentRestore] || len(refused.Refusals) != 2 {
		t.Errorf("refusals %v, want cleanup-policy and concurrent-restore", refused.Refusals)
	}
	if !strings.Contains(err.Error(), "cleanup.policy=compact,delete") {
		t.Errorf("error %q does not name the policy", err)
	}
	if len(plan.OpenRestores) != 2 || plan.OpenRestores[1].Topic != "elsewhere-offsets" || plan.OpenRestores[1].Written || !plan.OpenRestores[0].Written {
		t.Errorf("open restores %+v", plan.OpenRestores)
	}
	var printed strings.Builder
	if err := plan.Print(&printed); err != nil {
		t.Fatal(err)
	}
	// Warnings are wrapped to 120 columns: match them unwrapped.
	if !strings.Contains(strings.ReplaceAll(printed.String(), "\n  ", " "), `warning: another restore's transaction "offsetkeeper-restore-elsewhere-offsets" is Ongoing on offsets topic "elsewhere-offsets", which this restore does not write: left alone (restore --force fences it)`) {
		t.Errorf("plan does not warn of the transaction left alone:\n%s", printed.String())
	}

	for _, c := range []*kgo.Client{other, elsewhere} {
		if err := c.EndTransaction(ctx, kgo.TryAbort); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, snapshot.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	plan, err = restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Check(ctx, cl); err != nil {
		t.Fatalf("Check after the fixes: %v", err)
	}
	res, err := restore.Apply(ctx, cl, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.SourceWrites != 1 || len(res.Topics) != 1 || res.Topics[0].Partitions != 4 {
		t.Errorf("result %+v", res)
	}
	if _, err := restore.Verify(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}

	// A topic the plan does not write may have any policy.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact,delete")}}, snapshot.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	plan, err = restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Check(ctx, cl); !plan.Empty() || err != nil {
		t.Errorf("a plan that writes nothing on a compact,delete topic: %v (counts %+v)", err, plan.Counts())
	}
}

// TestNewPlanErrors: the bad inputs NewPlan rejects before reading offsets.
func TestNewPlanErrors(t *testing.T) {
	cl, snap := small(t, "compact")
	ctx := context.Background()

	other := *snap
	other.ClusterID = "elsewhere"
	if _, err := restore.NewPlan(ctx, cl, &other, restore.Options{}); !errors.Is(err, restore.ErrOtherCluster) {
		t.Errorf("other cluster: %v", err)
	}
	plan, err := restore.NewPlan(ctx, cl, &other, restore.Options{AllowOtherCluster: true})
	if err != nil || !plan.OtherCluster {
		t.Errorf("other cluster allowed: %v", err)
	}

	if _, err := restore.NewPlan(ctx, cl, snap, restore.Options{SinkOnly: true}); !errors.Is(err, restore.ErrEmptyScope) {
		t.Errorf("sink only of a source snapshot: %v", err)
	}
	if _, err := restore.NewPlan(ctx, cl, snap, restore.Options{Options: capture.Options{Connectors: []string{"c2"}}}); !errors.Is(err, restore.ErrNotInSnapshot) {
		t.Errorf("unknown connector: %v", err)
	}
	if _, err := restore.NewPlan(ctx, cl, snap, restore.Options{Options: capture.Options{OffsetsTopics: []string{"nope"}}}); !errors.Is(err, restore.ErrTopicMissing) {
		t.Errorf("missing worker topic: %v", err)
	}

	// A connector whose own offsets topic is gone: refused, with the
	// command that creates it.
	own := *snap
	own.Connectors = []snapshot.Connector{{Name: "c1", Type: snapshot.TypeSource, Tasks: -1, OffsetsTopic: "c1-offsets"}}
	first := *snap.SourceTable().At(0)
	first.Topic = "c1-offsets"
	own.SetSourceOffsets([]snapshot.SourceOffset{first})
	own.Topics = append(own.Topics, snapshot.Topic{Name: "c1-offsets", Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, 3)})
	_, err = restore.NewPlan(ctx, cl, &own, restore.Options{})
	if !errors.Is(err, restore.ErrTopicMissing) || !strings.Contains(err.Error(), "--partitions 3") {
		t.Errorf("missing own topic: %v", err)
	}
}

// TestPlanDefaultSpec: an untouched cluster plans nothing and nothing
// blocks it (running connectors are left alone); a snapshot that differs
// for a running, a paused and the live sink connector is refused for those
// three only; the exactly-once connector targets its own topic.
func TestPlanDefaultSpec(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	spec.LiveSinkMember = true
	cl, _ := newCluster(t, &spec)
	ctx := context.Background()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Empty() || len(plan.Differences()) != 0 {
		t.Errorf("untouched cluster: plan %+v, differences %v", plan.Counts(), plan.Differences())
	}
	var sb strings.Builder
	if err := plan.Print(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ReplaceAll(sb.String(), "\n  ", " "), `is in partitions 8, 11 of "connect-offsets" in the snapshot`) {
		t.Errorf("plan does not report the hand-made duplicate:\n%s", sb.String())
	}
	for _, cp := range plan.Connectors {
		if cp.Name == connectdemo.ConnEOS && (cp.Source == nil || cp.Source.Target != connectdemo.EOSOffsetsTopic || !cp.Source.ExactlyOnce) {
			t.Errorf("payments-cdc source plan %+v", cp.Source)
		}
	}

	// Nothing is written, so nothing blocks: the running, paused and
	// member-holding connectors are left alone and the plan says so.
	if err := plan.Check(ctx, cl); err != nil {
		t.Fatalf("Check of a plan that writes nothing: %v", err)
	}
	for _, want := range []string{
		"connector inventory-connector (source, STARTED, 1 task): unchanged, running, left alone\n",
		"connector sqlserver-connector (source, PAUSED, 1 task): unchanged, paused, left alone\n",
		"connector es-sink-orders (sink, STARTED, 2 tasks): unchanged, running, left alone\n",
		"connector mongodb-connector (source, STOPPED)\n",
	} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, sb.String())
		}
	}

	// A snapshot that differs for a running, a paused and the live sink
	// connector: only those three are refused, "paused" said of the paused.
	changed := *snap
	offs := snap.SourceTable().Collect()
	for i, o := range offs {
		if o.Connector == connectdemo.ConnMySQL || o.Connector == connectdemo.ConnSQLServer {
			offs[i].Value = []byte(`{"pos":1}`)
		}
	}
	changed.SetSourceOffsets(offs)
	changed.SinkGroups = slices.Clone(snap.SinkGroups)
	for i, g := range changed.SinkGroups {
		if g.Group == connectdemo.GroupSinkES {
			changed.SinkGroups[i].Offsets = slices.Clone(g.Offsets)
			changed.SinkGroups[i].Offsets[0].Offset++
		}
	}
	plan, err = restore.NewPlan(ctx, cl, &changed, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = plan.Check(ctx, cl)
	var refused *restore.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Check: %v", err)
	}
	var got []string
	for _, r := range refused.Refusals {
		got = append(got, r.Check+" "+r.Connector)
		if r.Connector == connectdemo.ConnSQLServer && !strings.HasPrefix(r.Reason, "is paused (target state PAUSED, 1 task in the config topic)") {
			t.Errorf("paused connector: %s", r)
		}
	}
	slices.Sort(got)
	want := []string{
		restore.CheckRunning + " " + connectdemo.ConnSinkES,
		restore.CheckRunning + " " + connectdemo.ConnMySQL,
		restore.CheckRunning + " " + connectdemo.ConnSQLServer,
		restore.CheckGroupMembers + " " + connectdemo.ConnSinkES,
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("refusals %v, want %v", got, want)
	}
	if b := refused.Blocking(); !slices.Equal(b, []string{connectdemo.ConnSinkES, connectdemo.ConnMySQL, connectdemo.ConnSQLServer}) {
		t.Errorf("blocking %v", b)
	}
	msg := err.Error()
	for _, w := range []string{"(4 problems)", "The restore would write 3 connectors es-sink-orders, inventory-connector, sqlserver-connector: stop them first, restore the other connectors alone with --connector NAME, or let the restore stop and resume them with --connect-url URL --stop-connectors --resume."} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal lacks %q:\n%s", w, msg)
		}
	}
}

func TestDiff(t *testing.T) {
	k1, k2, k3 := []byte(`["c",{"f":"a"}]`), []byte(`["c",{"f":"b"}]`), []byte(`["c",{"f":"c"}]`)
	a := (&snapshot.Snapshot{
		Connectors: []snapshot.Connector{{Name: "c", Type: snapshot.TypeSource}, {Name: "s", Type: snapshot.TypeSink}},
		SinkGroups: []snapshot.SinkGroup{
			{Group: "connect-s", Connector: "s", Offsets: []snapshot.SinkOffset{{Topic: "t", Partition: 0, Offset: 10}, {Topic: "t", Partition: 1, Offset: 10}, {Topic: "t", Partition: 2, Offset: 10}, {Topic: "t", Partition: 3, Offset: 5}}},
			{Group: "foreign", Offsets: []snapshot.SinkOffset{{Topic: "t", Partition: 0, Offset: 1}}},
		},
	}).WithSourceOffsets([]snapshot.SourceOffset{
		{Topic: "o", Partition: 1, Key: k1, Value: []byte(`{"p":1}`), Connector: "c"},
		{Topic: "o", Partition: 2, Key: k2, Value: []byte(`{"p":2}`), Connector: "c"},
		{Topic: "o", Partition: 0, Key: []byte("junk"), Value: []byte("x")},
	})
	b := (&snapshot.Snapshot{
		Connectors: a.Connectors,
		SinkGroups: []snapshot.SinkGroup{
			{Group: "connect-s", Connector: "s", Offsets: []snapshot.SinkOffset{{Topic: "t", Partition: 0, Offset: 12}, {Topic: "t", Partition: 1, Offset: 3}, {Topic: "t", Partition: 3, Offset: 5}, {Topic: "t", Partition: 4, Offset: 7}}},
		},
	}).WithSourceOffsets([]snapshot.SourceOffset{
		{Topic: "o", Partition: 1, Key: k1, Value: []byte(`{"p":9}`), Connector: "c"},
		{Topic: "o", Partition: 3, Key: k3, Value: []byte(`{"p":3}`), Connector: "c"},
	})
	var got []string
	for _, c := range restore.Diff(a, b, nil) {
		got = append(got, c.Connector+" "+c.Kind+" "+c.Topic)
	}
	want := []string{"c changed o", "c vanished o", "c appeared o", "s forward t", "s backward t", "s vanished t", "s appeared t"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Diff:\n got %v\nwant %v", got, want)
	}
	if n := len(restore.Diff(a, b, []string{"s"})); n != 4 {
		t.Errorf("Diff scoped to s: %d changes, want 4", n)
	}
	if n := len(restore.Diff(a, a, nil)); n != 0 {
		t.Errorf("Diff of a snapshot with itself: %d changes", n)
	}
	var sb strings.Builder
	if err := restore.PrintChanges(&sb, restore.Diff(a, b, nil)); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`  source  o/1  {"f":"a"}  changed  {"p":1} -> {"p":9}`,
		`  sink  connect-s  t/1  moved backward  10 -> 3`,
		`diff: 2 connectors differ; source: 1 changed, 1 appeared, 1 vanished; sink: 1 moved forward, 1 moved backward, 1 appeared, 1 vanished`,
	} {
		// Lines over 120 columns are broken: compare the words.
		if !strings.Contains(strings.Join(strings.Fields(sb.String()), " "), strings.Join(strings.Fields(line), " ")) {
			t.Errorf("PrintChanges lacks %q:\n%s", line, sb.String())
		}
	}
}

// TestPlanSinkBounds: a group that does not exist yet is created by the
// commit; an offset beyond the log end is a warning; an offset for a topic
// that does not exist is skipped, not restored here, and no difference for
// Verify.
func TestPlanSinkBounds(t *testing.T) {
	cl, snap := small(t, "compact")
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, -1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	manual, err := kgo.NewClient(append(cl.Opts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	for i := 0; i < 10; i++ {
		if err := manual.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	snap.Connectors = []snapshot.Connector{{Name: "s", Type: snapshot.TypeSink, Group: "connect-s", Tasks: -1}}
	snap.SetSourceOffsets(nil)
	snap.SinkGroups = []snapshot.SinkGroup{{Group: "connect-s", Connector: "s", Offsets: []snapshot.SinkOffset{
		{Topic: "nope", Partition: 0, Offset: 3, LeaderEpoch: -1},
		{Topic: "t", Partition: 0, Offset: 4, LeaderEpoch: -1, Metadata: "m"},
		{Topic: "t", Partition: 1, Offset: 50, LeaderEpoch: -1},
	}}}
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Counts(); c.SinkCommits != 2 || c.SinkSkipped != 1 {
		t.Errorf("counts %+v, want 2 commits and 1 skipped", c)
	}
	warnings := strings.Join(plan.Warnings, "\n")
	for _, want := range []string{`sink topic "nope" does not exist here`, "offset 50 for t/1 is beyond the partition's end offset 0"} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	if sp := plan.Connectors[0].Sink; sp == nil || sp.Exists {
		t.Fatalf("sink plan %+v: the group must not exist yet", sp)
	}
	if err := plan.Check(ctx, cl); err != nil {
		t.Fatal(err)
	}
	res, err := restore.Apply(ctx, cl, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.SinkCommits != 2 || len(res.Groups) != 1 {
		t.Errorf("result %+v", res)
	}
	fetched, err := adm.FetchOffsets(ctx, "connect-s")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("t", 0); !ok || o.At != 4 || o.Metadata != "m" {
		t.Errorf("t/0 committed %+v, want 4 with metadata m", o)
	}
	// The skipped offset is not a difference: it is not restored here.
	v, err := restore.Verify(ctx, cl, plan)
	if err != nil || len(v.Differences) != 0 {
		t.Errorf("Verify: %v, %v", err, v)
	}
	nr := plan.NotRestored()
	if len(nr) != 1 || nr[0].Topic != "nope" || nr[0].Offsets != 1 || nr[0].Partitions != 1 || nr[0].Have != 0 {
		t.Errorf("NotRestored %+v", nr)
	}
}

// TestPlanTargetsFollowLiveConfig: source keys go to the topic the
// connector reads now: a connector that gained its own offsets topic gets
// its keys there (and keeps them in the worker topic); one that lost it
// gets the copy it read merged into the worker topic.
func TestPlanTargetsFollowLiveConfig(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	cl, _ := newCluster(t, &spec)
	ctx := context.Background()
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "file-offsets"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	conf := func(key, value string) {
		recs = append(recs, &kgo.Record{Topic: snapshot.DefaultConfigTopic, Key: []byte(key), Value: []byte(value)})
	}
	conf("connector-"+connectdemo.ConnFile, `{"properties":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","offsets.storage.topic":"file-offsets","name":"source-file-01"}}`)
	conf("connector-"+connectdemo.ConnEOS, `{"properties":{"connector.class":"io.debezium.connector.postgresql.PostgresConnector","name":"payments-cdc"}}`)
	for _, n := range []string{connectdemo.ConnFile, connectdemo.ConnEOS} {
		conf("commit-"+n, `{"tasks":0}`)
		conf("target-state-"+n, `{"state":"PAUSED","state.v2":"STOPPED"}`)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{Options: capture.Options{Connectors: []string{connectdemo.ConnFile, connectdemo.ConnEOS}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cp := range plan.Connectors {
		got[cp.Name] = cp.Source.Target
		for _, ch := range cp.Source.Changes() {
			got[cp.Name+" "+ch.Topic] = string(ch.Action)
		}
	}
	want := map[string]string{
		connectdemo.ConnFile:                          "file-offsets",
		connectdemo.ConnFile + " connect-offsets":     "unchanged",
		connectdemo.ConnFile + " file-offsets":        "added",
		connectdemo.ConnEOS:                           "connect-offsets",
		connectdemo.ConnEOS + " connect-offsets":      "unchanged",
		connectdemo.ConnEOS + " payments-cdc-offsets": "",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q (plan %v)", k, got[k], w, got)
		}
	}
	if !strings.Contains(strings.Join(plan.Warnings, "\n"), `connector "payments-cdc": keys the snapshot holds in both "connect-offsets" and "payments-cdc-offsets" go to one topic here`) {
		t.Errorf("no merge warning: %v", plan.Warnings)
	}
	if err := plan.Check(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Apply(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
	if _, err := restore.Verify(ctx, cl, plan); err != nil {
		t.Fatal(err)
	}
}

// TestCheckRestoreTransactionOnExactlyOncePartition: another restore's
// transaction open on an exactly-once connector's offsets partition is
// refused as another restore running. Regression: Check saw it with
// DescribeProducers, the other restore committed before Check's
// ListTransactions, and the only refusal left blamed "an exactly-once task
// or an offset alter" and did not say another restore was running
// (reliability's TestKillRestore and TestConcurrentRestoresRace failed
// now and then on it). Here the other restore's transaction ends exactly
// in that gap.
func TestCheckRestoreTransactionOnExactlyOncePartition(t *testing.T) {
	kc, cl := testkit.Cluster(t)
	ctx := context.Background()
	exp, err := connectdemo.Seed(ctx, cl, connectdemo.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eosKey := []byte(`["` + connectdemo.ConnEOS + `",{"server":"pgpayments"}]`)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: eosKey, Value: []byte(`{"lsn":1}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{Options: capture.Options{Connectors: []string{connectdemo.ConnEOS}}})
	if err != nil {
		t.Fatal(err)
	}

	// Another restore's transaction, open on the key's partition.
	txnID := restore.TransactionalIDPrefix + connectdemo.EOSOffsetsTopic
	other, err := kgo.NewClient(append(cl.Opts(), kgo.TransactionalID(txnID))...)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := other.ProduceSync(ctx, &kgo.Record{Topic: connectdemo.EOSOffsetsTopic, Key: eosKey, Value: []byte(`{"lsn":2}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// It commits after DescribeProducers and before Check's own
	// ListTransactions (the one with a state filter, sent to every
	// broker: each waits for the commit).
	var (
		commit    sync.Once
		commitErr error
		listed    atomic.Int64
	)
	kc.ControlKey(int16(kmsg.ListTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		if len(req.(*kmsg.ListTransactionsRequest).StateFilters) == 0 {
			return nil, nil, false
		}
		listed.Add(1)
		kc.SleepControl(func() { commit.Do(func() { commitErr = other.EndTransaction(ctx, kgo.TryCommit) }) })
		return nil, nil, false
	})

	err = plan.Check(ctx, cl)
	if commitErr != nil {
		t.Fatalf("commit the other restore's transaction: %v", commitErr)
	}
	if listed.Load() == 0 {
		t.Fatal("Check did not list transactions")
	}
	var refused *restore.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Check: %v, want a RefusedError", err)
	}
	found := false
	for _, r := range refused.Refusals {
		if r.Check == restore.CheckOpenTransaction && strings.Contains(r.Reason, txnID) {
			t.Errorf("the other restore's transaction is refused as %s: %s", r.Check, r.Reason)
		}
		if r.Check == restore.CheckConcurrentRestore && strings.Contains(r.Reason, "another restore is running") && strings.Contains(r.Reason, txnID) {
			found = true
		}
	}
	if !found {
		t.Errorf("no %s refusal naming %q: %v", restore.CheckConcurrentRestore, txnID, refused.Refusals)
	}
}
