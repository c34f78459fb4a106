package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestCommandsRepairKilledRestore: a restore killed inside its
// transaction (its record in the store, its process gone, its transaction
// open with half its records in the log) is what a default worker
// (read_uncommitted) sees until the key is written again: issue 41 found
// diff --live saying "no differences" then. verify without brokers names
// it and fails; each of verify with brokers, diff --live and snapshot,
// run next, says the restore did not finish and leaves a worker reading
// the state before it; diff --live reports keys read differently by
// workers with and without exactly-once source support.
func TestCommandsRepairKilledRestore(t *testing.T) {
	for _, cmd := range []string{"verify", "diff", "snapshot"} {
		t.Run(cmd, func(t *testing.T) { commandRepairsKilledRestore(t, cmd) })
	}
}

func commandRepairsKilledRestore(t *testing.T, command string) {
	ctx := context.Background()
	kc, cl := testkit.Cluster(t)
	brokers := strings.Join(kc.ListenAddrs(), ",")
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, n := range map[string]int32{snapshot.DefaultConfigTopic: 1, snapshot.DefaultOffsetsTopic: 3} {
		if _, err := adm.CreateTopic(ctx, n, -1, compact, topic); err != nil {
			t.Fatal(err)
		}
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf(`["c1",{"filename":"/f%03d"}]`, i)) }
	var recs []*kgo.Record
	for i := range 100 {
		recs = append(recs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key(i), Value: []byte(`{"position":0}`)})
	}
	testkit.Produce(t, cl, recs...)
	storeURL := "file://" + t.TempDir()
	t.Setenv("OFFSETKEEPER_STORE", storeURL)
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers)
	if code != 0 {
		t.Fatalf("snapshot: exit %d\n%s\n%s", code, out, errs)
	}
	id := lastLine(out)
	before := workerView(t, cl)

	// The killed restore: a process that is gone, its record, and its
	// transaction left open with 50 records.
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenStore(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host, _ := os.Hostname()
	txnID := restore.TransactionalIDPrefix + snapshot.DefaultOffsetsTopic
	if err := st.Restores().Put(ctx, store.RestoreIntent{ID: "20260101T000000.000000Z-dead01", Snapshot: id, Started: time.Now(), Host: host, PID: dead.Process.Pid,
		Stage: store.IntentWriting, Connectors: []string{"c1"}, Topics: []store.IntentTopic{{Topic: snapshot.DefaultOffsetsTopic, TransactionalID: txnID}}}); err != nil {
		t.Fatal(err)
	}
	pcl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.TransactionalID(txnID), kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := pcl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	recs = recs[:0]
	for i := range 50 {
		recs = append(recs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key(i), Value: []byte(`{"position":99}`)})
	}
	if err := pcl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pcl.Close() // dies with its transaction open
	if maps.Equal(workerView(t, cl), before) {
		t.Fatal("the worker does not see the open transaction: the test proves nothing")
	}

	if command == "verify" {
		code, out, errs = runCLI(t, "verify")
		said := strings.Join(strings.Fields(out), " ")
		if code != 1 || !strings.Contains(said, "FAIL restore 20260101T000000.000000Z-dead01") || !strings.Contains(said, "offsetkeeper restore "+id) {
			t.Fatalf("verify without brokers: exit %d\n%s\n%s", code, out, errs)
		}
	}
	args := map[string][]string{
		"verify":   {"verify", "--brokers", brokers},
		"diff":     {"diff", id, "--live", "--brokers", brokers},
		"snapshot": {"snapshot", "--brokers", brokers},
	}[command]
	code, out, errs = runCLI(t, args...)
	said := strings.Join(strings.Fields(out+errs), " ") // as one line: messages wrap at 120 columns
	if code != 0 || !strings.Contains(said, "restore 20260101T000000.000000Z-dead01 of snapshot "+id) || !strings.Contains(said, "wrote back their committed values") {
		t.Fatalf("%s: exit %d\n%s\n%s", command, code, out, errs)
	}
	if got := workerView(t, cl); !maps.Equal(got, before) {
		t.Errorf("after %s the worker does not read the state before the restore", command)
	}
}

// workerView is the offsets topic as a worker without exactly-once
// source support reads it.
func workerView(t *testing.T, cl *kgo.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	if _, err := capture.ReadWorkerView(context.Background(), cl, snapshot.DefaultOffsetsTopic, func(k *capture.PartitionKeys) error {
		for key, v := range k.All() {
			out[string(key)] = string(v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDiffLiveReportsBothViews: diff --live reads the offsets topic as
// a worker with exactly-once source support does (read_committed) and
// says where a worker without it (read_uncommitted, the default) reads
// otherwise: here an aborted transaction of another producer, which no
// restore repairs. With --worker-config enabling exactly-once support it
// says nothing of the kind.
func TestDiffLiveReportsBothViews(t *testing.T) {
	ctx := context.Background()
	kc, cl := testkit.Cluster(t)
	brokers := strings.Join(kc.ListenAddrs(), ",")
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, n := range map[string]int32{snapshot.DefaultConfigTopic: 1, snapshot.DefaultOffsetsTopic: 3} {
		if _, err := adm.CreateTopic(ctx, n, -1, compact, topic); err != nil {
			t.Fatal(err)
		}
	}
	k := []byte(`["c1",{"filename":"/f"}]`)
	testkit.Produce(t, cl, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: k, Value: []byte(`{"position":1}`)})
	t.Setenv("OFFSETKEEPER_STORE", "file://"+t.TempDir())
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers)
	if code != 0 {
		t.Fatalf("snapshot: exit %d\n%s\n%s", code, out, errs)
	}
	id := lastLine(out)
	abortedWrite(t, kc, k, []byte(`{"position":666}`))
	var said string
	for range 100 { // the abort markers follow EndTxn
		code, out, errs = runCLI(t, "diff", id, "--live", "--brokers", brokers)
		if said = strings.Join(strings.Fields(errs), " "); strings.Contains(said, "workers read 1 key of topic connect-offsets differently") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != 0 || !strings.Contains(said, "workers read 1 key of topic connect-offsets differently") || !strings.Contains(said, `read_uncommitted {"position":666}`) {
		t.Fatalf("diff --live over an aborted transaction: exit %d\n%s\n%s", code, out, errs)
	}
	worker := t.TempDir() + "/worker.properties"
	if err := os.WriteFile(worker, []byte("bootstrap.servers="+brokers+"\ngroup.id=connect-cluster\noffset.storage.topic=connect-offsets\nconfig.storage.topic=connect-configs\nstatus.storage.topic=connect-status\nexactly.once.source.support=enabled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "diff", id, "--live", "--worker-config", worker)
	if code != 0 || strings.Contains(errs, "differently") {
		t.Fatalf("diff --live for an exactly-once worker: exit %d\n%s\n%s", code, out, errs)
	}
}
