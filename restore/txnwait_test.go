package restore

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestRunBlockedByTransaction: a restore whose committed records another
// producer's open transaction keeps from read_committed readers says that
// it waits, and for what; it then fails naming the transactional id, the
// producer and the kafka-transactions.sh command that aborts it (against
// the restore's brokers, a command of its own), with no rollback advice. Once that transaction ends, the same restore finds
// nothing to do.
func TestRunBlockedByTransaction(t *testing.T) {
	defer func(w, n time.Duration) { readableWait, waitNotice = w, n }(readableWait, waitNotice)
	readableWait, waitNotice = 500*time.Millisecond, 100*time.Millisecond

	ctx := context.Background()
	kc, cl := testkit.Cluster(t)
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, n := range map[string]int32{snapshot.DefaultConfigTopic: 1, snapshot.DefaultOffsetsTopic: 4} {
		if _, err := adm.CreateTopic(ctx, n, -1, compact, topic); err != nil {
			t.Fatal(err)
		}
	}
	key := []byte(`["c1",{"file":"a"}]`)
	part := snapshot.PartitionFor(key, 4)
	snap := (&snapshot.Snapshot{
		Version: snapshot.Version, ID: "20240101T000000.000000Z-000001", ClusterID: connectdemo.DefaultClusterID,
		Topics:     []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, 4)}},
		Connectors: []snapshot.Connector{{Name: "c1", Type: snapshot.TypeSource, Tasks: -1}},
	}).WithSourceOffsets([]snapshot.SourceOffset{{Topic: snapshot.DefaultOffsetsTopic, Partition: part, Key: key, Value: []byte(`{"pos":7}`), Connector: "c1"}})

	// A zombie worker's transaction, open on the key's partition.
	holder, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.TransactionalID("zombie-worker-c2-0"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := holder.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := holder.ProduceSync(ctx, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Partition: part, Key: []byte(`["c2",{"f":1}]`), Value: []byte(`{"pos":1}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	env := Env{Client: cl, Store: st, Out: &out}
	_, err = Run(ctx, env, Request{Snapshot: snap})
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if !errors.Is(err, ErrNotReadable) {
		t.Fatalf("Run: %v, want ErrNotReadable\n%s", err, out.String())
	}
	for _, want := range []string{`transactional id "zombie-worker-c2-0"`, "producer ", "do not roll it back",
		"kafka-transactions.sh --bootstrap-server " + seedsOf(cl) + " abort --topic connect-offsets --partition "} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	// The command names the brokers (it said <brokers>: a redirection
	// from a file, pasted) and is carried whole, for lines of its own.
	if cmds, _ := AdvisedCommands(err); seedsOf(cl) == "" || strings.Contains(msg, "<brokers>") || len(cmds) != 1 || !strings.Contains(msg, cmds[0]) {
		t.Errorf("advised commands %q of:\n%s", cmds, msg)
	}
	if strings.Contains(msg, "to roll back") || strings.Contains(out.String(), "to roll back") {
		t.Errorf("rollback advice for a committed restore:\n%s\n%s", msg, out.String())
	}
	if !strings.Contains(out.String(), "waiting (") || !strings.Contains(out.String(), `held by connect-offsets/`) {
		t.Errorf("the wait is not shown:\n%s", out.String())
	}

	if err := holder.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := Run(ctx, env, Request{Snapshot: snap}); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("once the transaction ended: %v\n%s", err, out.String())
	}
}
