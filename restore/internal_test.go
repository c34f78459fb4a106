package restore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

func TestOnlyCompact(t *testing.T) {
	for policy, want := range map[string]bool{
		"compact":         true,
		"[compact]":       true,
		" compact ":       true,
		"delete":          false,
		"compact,delete":  false,
		"delete, compact": false,
		"":                false,
	} {
		if got := capture.OnlyCompact(policy); got != want {
			t.Errorf("OnlyCompact(%q) = %v, want %v", policy, got, want)
		}
	}
}

func TestResolveScope(t *testing.T) {
	snap := &snapshot.Snapshot{
		ID:    "s",
		Scope: []string{"gone", "src", "snk"},
		Connectors: []snapshot.Connector{
			{Name: "src", Type: snapshot.TypeSource},
			{Name: "snk", Type: snapshot.TypeSink, Group: "connect-snk"},
		},
		SinkGroups: []snapshot.SinkGroup{{Group: "connect-snk", Connector: "snk"}},
	}
	names := func(ss []scoped) string {
		var out []string
		for _, s := range ss {
			n := s.name + ":"
			if s.source {
				n += "source"
			}
			if s.sink {
				n += "sink"
			}
			out = append(out, n)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		opts Options
		want string
		err  error
	}{
		// "gone" had no offsets when the scoped snapshot was taken: it is
		// in scope so that restoring the snapshot removes what it has now.
		{Options{}, "gone:sourcesink snk:sink src:source", nil},
		{Options{SourceOnly: true}, "gone:source src:source", nil},
		{Options{SinkOnly: true}, "gone:sink snk:sink", nil},
		{Options{Options: capture.Options{Connectors: []string{"src", "src"}}}, "src:source", nil},
		{Options{Options: capture.Options{Connectors: []string{"src"}}, SinkOnly: true}, "", ErrEmptyScope},
		{Options{Options: capture.Options{Connectors: []string{"nope"}}}, "", ErrNotInSnapshot},
	} {
		got, err := resolveScope(snap, tc.opts)
		if !errors.Is(err, tc.err) || names(got) != tc.want {
			t.Errorf("resolveScope(%+v) = %q, %v; want %q, %v", tc.opts, names(got), err, tc.want, tc.err)
		}
	}
}

// TestApplyAbortsMisplacedRecords: if records would land anywhere but
// their murmur2 partition (here: the plan believes the topic has another
// partition count), the topic's transaction is aborted and readers see
// the topic as it was.
func TestApplyAbortsMisplacedRecords(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	ctx := context.Background()
	_, cl := seededDemo(t, spec)
	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Damage two keys of jdbc-orders-source.
	for _, k := range []string{`{"protocol":"1","table":"shop.orders"}`, `{"protocol":"1","table":"shop.customers"}`} {
		rec := &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(`["` + connectdemo.ConnJDBC + `",` + k + `]`), Value: []byte(`{"x":0}`)}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	damaged, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(ctx, cl, snap, Options{Options: capture.Options{Connectors: []string{connectdemo.ConnJDBC}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Counts(); c.SourceWrites != 2 {
		t.Fatalf("plan %+v, want 2 source writes", c)
	}
	plan.partitions[snapshot.DefaultOffsetsTopic] = 7
	res, err := Apply(ctx, cl, plan)
	if !errors.Is(err, ErrApply) || !strings.Contains(err.Error(), "not its murmur2 partition") || len(res.Topics) != 0 {
		t.Fatalf("Apply: %v (result %+v), want an aborted transaction", err, res)
	}
	after, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, d := string(mustEncode(t, after.SourceOffsetsOf(connectdemo.ConnJDBC))), string(mustEncode(t, damaged.SourceOffsetsOf(connectdemo.ConnJDBC))); a != d {
		t.Errorf("aborted restore changed what readers see:\n%s\nwas\n%s", a, d)
	}
	// Nothing is left open either.
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		t.Fatal(err)
	}
	for id := range listed {
		if strings.HasPrefix(id, TransactionalIDPrefix) {
			t.Errorf("transaction %s left open", id)
		}
	}
}

func mustEncode(t *testing.T, offs []snapshot.SourceOffset) []byte {
	t.Helper()
	var sb strings.Builder
	for _, o := range offs {
		sb.WriteString(o.Topic + " " + string(o.Key) + " " + string(o.Value) + "\n")
	}
	return []byte(sb.String())
}

// TestWaitReadable: a restore waits, after its commit, until what it wrote
// is readable with read_committed, and says so when another producer's open
// transaction holds the last stable offset below it (regression: Verify
// ran right after EndTxn, which a broker answers before it writes the
// commit markers, and could report a committed restore as failed).
func TestWaitReadable(t *testing.T) {
	ctx := t.Context()
	kc, err := connectdemo.NewCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "wait-readable"); err != nil {
		t.Fatal(err)
	}
	r := cl.ProduceSync(ctx, &kgo.Record{Topic: "wait-readable", Partition: 0, Value: []byte("x")})
	if err := r.FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := waitReadable(ctx, cl, "wait-readable", map[int32]int64{0: 0}, time.Second, nil); err != nil {
		t.Fatalf("a committed record: %v", err)
	}

	// An open transaction on partition 1 holds its last stable offset.
	txn, err := kgo.NewClient(append(cl.Opts(), kgo.TransactionalID("holder"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "wait-readable", Partition: 1, Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	after := cl.ProduceSync(ctx, &kgo.Record{Topic: "wait-readable", Partition: 1, Value: []byte("y")})
	if err := after.FirstErr(); err != nil {
		t.Fatal(err)
	}
	rec, _ := after.First()
	err = waitReadable(ctx, cl, "wait-readable", map[int32]int64{0: 0, 1: rec.Offset}, 300*time.Millisecond, nil)
	if !errors.Is(err, ErrNotReadable) || !strings.Contains(err.Error(), "not readable with read_committed on wait-readable/1") ||
		!strings.Contains(err.Error(), `transactional id "holder"`) || !strings.Contains(err.Error(), "kafka-transactions.sh --bootstrap-server "+seedsOf(cl)+" abort --topic wait-readable --partition 1 --start-offset 0") ||
		seedsOf(cl) == "" || strings.Contains(err.Error(), "<brokers>") {
		t.Fatalf("held by an open transaction: %v", err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if err := waitReadable(ctx, cl, "wait-readable", map[int32]int64{0: 0, 1: rec.Offset}, 5*time.Second, nil); err != nil {
		t.Fatalf("after the other transaction ended: %v", err)
	}
}

// seededDemo starts a kfake cluster seeded with spec and a client of it;
// both close when the test ends.
func seededDemo(t *testing.T, spec connectdemo.Spec) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	kc, cl := testkit.Cluster(t)
	if _, err := connectdemo.Seed(t.Context(), cl, spec); err != nil {
		t.Fatal(err)
	}
	return kc, cl
}

// The hint offers only the ways the restore was not given already.
// Regression: a restore given --connector and --connect-url was told to
// narrow with --connector NAME or to give --connect-url URL.
func TestRefusedHintOffersWhatWasNotGiven(t *testing.T) {
	running := []Refusal{{Connector: "a", Check: CheckRunning, Reason: "runs"}}
	for _, c := range []struct {
		e    RefusedError
		want string
	}{
		{RefusedError{}, "stop it first, restore the other connectors alone with --connector NAME, or let the restore stop and resume it with --connect-url URL --stop-connectors --resume."},
		{RefusedError{Scoped: true}, "stop it first, or let the restore stop and resume it with --connect-url URL --stop-connectors --resume."},
		{RefusedError{Scoped: true, ConnectURL: true}, "stop it first, or let the restore stop and resume it with --stop-connectors --resume."},
		{RefusedError{Scoped: true, ConnectURL: true, Stopping: true}, "1 connector a: stop it first."},
		{RefusedError{ConnectURL: true, Stopping: true}, "stop it first, or restore the other connectors alone with --connector NAME."},
	} {
		c.e.Refusals = running
		if got := c.e.hint(); !strings.HasSuffix(got, c.want) {
			t.Errorf("%+v: hint %q, want it to end %q", c.e, got, c.want)
		}
	}
}
