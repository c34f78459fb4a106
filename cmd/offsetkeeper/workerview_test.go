package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim/connectsimtest"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestDiffLiveAsTheWorkerSays: diff --live learns the workers'
// exactly.once.source.support from their REST API (--connect-url; the
// stand-in validates as DistributedHerder does) and reads the live offsets
// as they do: over another producer's aborted transaction, a worker without
// it (read_uncommitted) reads the aborted value, so diff shows it as the
// live value and says why; a worker with it shows no change.
func TestDiffLiveAsTheWorkerSays(t *testing.T) {
	ctx := context.Background()
	kc, cl := testkit.Cluster(t)
	brokers := strings.Join(kc.ListenAddrs(), ",")
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, n := range map[string]int32{snapshot.DefaultConfigTopic: 1, snapshot.DefaultOffsetsTopic: 3, "connect-status": 1} {
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
	for _, eos := range []string{"", "enabled"} {
		srv, err := connectsimtest.Start(cl, connectsim.Options{Version: "3.8.0", ExactlyOnceSource: eos})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		var changes []json.RawMessage
		for range 100 { // the abort markers follow EndTxn
			code, out, errs = runCLI(t, "diff", id, "--live", "--brokers", brokers, "--connect-url", srv.URL, "--output", "json")
			if err := json.Unmarshal([]byte(out), &changes); code != 0 || err != nil {
				t.Fatalf("diff --live --connect-url (exactly.once.source.support %q): exit %d, %v\n%s\n%s", eos, code, err, out, errs)
			}
			if eos != "" || len(changes) > 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		said := strings.Join(strings.Fields(errs), " ")
		if eos == "enabled" {
			if len(changes) != 0 || strings.Contains(said, "aborted") {
				t.Errorf("diff --live, workers reading read_committed: %d changes, want none\n%s\n%s", len(changes), out, errs)
			}
			continue
		}
		if len(changes) != 1 || !strings.Contains(string(changes[0]), "666") {
			t.Errorf("diff --live, workers reading read_uncommitted: want one change to the aborted value they read\n%s\n%s", out, errs)
		}
		for _, want := range []string{"1 key of topic connect-offsets read as the workers read them", "This worker does not have exactly-once source support enabled"} {
			if !strings.Contains(said, want) {
				t.Errorf("diff --live does not say %q:\n%s", want, errs)
			}
		}
	}
}

// TestVerifyReadsAsTheWorkers: verify with Kafka settings, over a store
// holding the record of a restore that did not finish, checks that
// restore's topics and then says how the workers read them: another
// producer's aborted transaction on a key of another connector (no
// restore repairs it) is named as the keys that differ between the two
// views when the workers' setting is unknown, and as the keys the workers
// read from an aborted transaction when --worker-config says they read
// read_uncommitted; nothing when it says exactly-once source support.
func TestVerifyReadsAsTheWorkers(t *testing.T) {
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
	mine, other := []byte(`["c1",{"filename":"/f"}]`), []byte(`["c2",{"filename":"/g"}]`)
	testkit.Produce(t, cl, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: mine, Value: []byte(`{"position":1}`)},
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: other, Value: []byte(`{"position":1}`)})
	storeURL := "file://" + t.TempDir()
	t.Setenv("OFFSETKEEPER_STORE", storeURL)
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers)
	if code != 0 {
		t.Fatalf("snapshot: exit %d\n%s\n%s", code, out, errs)
	}
	st, err := store.OpenStore(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Restores().Put(ctx, store.RestoreIntent{ID: "20260101T000000.000000Z-dead02", Snapshot: lastLine(out), Started: time.Now(), Stage: store.IntentWriting,
		Connectors: []string{"c1"}, Topics: []store.IntentTopic{{Topic: snapshot.DefaultOffsetsTopic, TransactionalID: "offsetkeeper-restore-connect-offsets"}}}); err != nil {
		t.Fatal(err)
	}
	abortedWrite(t, kc, other, []byte(`{"position":666}`))
	worker := func(eos string) string {
		f := t.TempDir() + "/worker.properties"
		props := "bootstrap.servers=" + brokers + "\ngroup.id=connect-cluster\noffset.storage.topic=connect-offsets\nconfig.storage.topic=connect-configs\nstatus.storage.topic=connect-status\n" + eos
		if err := os.WriteFile(f, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		args []string
		want string // "" says nothing of the views
	}{
		{[]string{"--brokers", brokers}, "workers read 1 key of topic connect-offsets differently"},
		{[]string{"--worker-config", worker("")}, "the workers read 1 key of topic connect-offsets from an aborted transaction"},
		{[]string{"--worker-config", worker("exactly.once.source.support=enabled\n")}, ""},
	} {
		var said string
		for range 100 { // the abort markers follow EndTxn
			code, out, errs = runCLI(t, append([]string{"verify"}, tc.args...)...)
			if said = strings.Join(strings.Fields(out+errs), " "); tc.want == "" || strings.Contains(said, tc.want) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if code != 0 || (tc.want != "" && !strings.Contains(said, tc.want)) || (tc.want == "" && (strings.Contains(said, "from an aborted transaction") || strings.Contains(said, "differently"))) {
			t.Errorf("verify %v: exit %d, want 0 saying %q\n%s\n%s", tc.args, code, tc.want, out, errs)
		}
		if tc.want != "" && !strings.Contains(said, `read_uncommitted {"position":666}`) {
			t.Errorf("verify %v does not name the value the workers read:\n%s", tc.args, said)
		}
	}
}

// TestDiffLiveViewNotesScoped: diff --live --connector notes where the
// workers' two views of the offsets topic differ only for the keys of the
// connectors in scope: another connector's aborted write is not this
// diff's concern, and a note about it sent operators of a sink connector
// looking at a source's keys.
func TestDiffLiveViewNotesScoped(t *testing.T) {
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
	mine, other := []byte(`["c1",{"filename":"/f"}]`), []byte(`["c2",{"filename":"/g"}]`)
	testkit.Produce(t, cl, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: mine, Value: []byte(`{"position":1}`)},
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: other, Value: []byte(`{"position":1}`)})
	t.Setenv("OFFSETKEEPER_STORE", "file://"+t.TempDir())
	code, out, errs := runCLI(t, "snapshot", "--brokers", brokers)
	if code != 0 {
		t.Fatalf("snapshot: exit %d\n%s\n%s", code, out, errs)
	}
	id := lastLine(out)
	abortedWrite(t, kc, other, []byte(`{"position":666}`))
	const note = "workers read 1 key of topic connect-offsets differently"
	// c2's key first, until the abort markers follow EndTxn.
	var said string
	for range 100 {
		code, out, errs = runCLI(t, "diff", id, "--live", "--brokers", brokers, "--connector", "c2")
		if said = strings.Join(strings.Fields(out+errs), " "); code != 0 || strings.Contains(said, note) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != 0 || !strings.Contains(said, note) {
		t.Fatalf("diff --live --connector c2: exit %d, want 0 saying %q\n%s\n%s", code, note, out, errs)
	}
	code, out, errs = runCLI(t, "diff", id, "--live", "--brokers", brokers, "--connector", "c1")
	if said = strings.Join(strings.Fields(out+errs), " "); code != 0 || strings.Contains(said, "differently") || strings.Contains(said, "aborted") {
		t.Errorf("diff --live --connector c1: exit %d, want 0 and no note of c2's aborted write\n%s\n%s", code, out, errs)
	}
}

// abortedWrite writes value for key to the offsets topic in another
// producer's transaction, and aborts it: read_uncommitted readers (a worker
// without exactly-once source support) see it, read_committed ones do not.
func abortedWrite(t *testing.T, kc *kfake.Cluster, key, value []byte) {
	t.Helper()
	ctx := context.Background()
	pcl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.TransactionalID("another-app"))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	if err := pcl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: key, Value: value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := pcl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}
