package capture_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// equalContent compares two snapshots apart from their ID and time.
func equalContent(t *testing.T, a, b *snapshot.Snapshot) {
	t.Helper()
	a2, b2 := *a, *b
	a2.CreatedAt, b2.CreatedAt = time.Time{}, time.Time{}
	a2.ID, b2.ID = "", ""
	ja, _ := json.Marshal(a2)
	jb, _ := json.Marshal(b2)
	if string(ja) != string(jb) {
		t.Fatalf("snapshots differ:\n a: %.2000s\n b: %.2000s", ja, jb)
	}
}

// Incremental capture must equal a full read after random writes,
// tombstones and compaction.
func TestIncrementalEqualsFull(t *testing.T) {
	c, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	if _, err := inc.Capture(ctx); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 4; round++ {
		var rs []*kgo.Record
		for i := 0; i < 200; i++ {
			key := fmt.Sprintf(`["churn-%d",{"filename":"/data/f%d.txt"}]`, rng.Intn(3), rng.Intn(50))
			var val []byte
			if rng.Intn(5) > 0 {
				val = fmt.Appendf(nil, `{"position":%d}`, rng.Intn(100000))
			}
			rs = append(rs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(key), Value: val})
		}
		testkit.Produce(t, cl, rs...)
		if round%2 == 1 {
			c.Compact()
		}
		got, err := inc.Capture(ctx)
		if err != nil {
			t.Fatal(err)
		}
		full, err := capture.Capture(ctx, cl, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		equalContent(t, got, full)
		if st := inc.Stats(); st.RecordsRead > 400 {
			t.Errorf("round %d: incremental run read %d records, want only the new ones", round, st.RecordsRead)
		}
	}
}

// CaptureLast reads only what is new and equals a full read; the Capturer
// keeps nothing after it, so the next Capture reads everything again.
func TestCaptureLast(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	if _, err := inc.Capture(ctx); err != nil {
		t.Fatal(err)
	}
	full0 := inc.Stats().RecordsRead
	rng := rand.New(rand.NewSource(2))
	var rs []*kgo.Record
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf(`["churn-%d",{"filename":"/data/f%d.txt"}]`, rng.Intn(3), rng.Intn(80))
		var val []byte
		if rng.Intn(5) > 0 {
			val = fmt.Appendf(nil, `{"position":%d}`, rng.Intn(100000))
		}
		rs = append(rs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(key), Value: val})
	}
	testkit.Produce(t, cl, rs...)
	got, err := inc.CaptureLast(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	equalContent(t, got, full)
	if n := inc.Stats().RecordsRead; n > 300 {
		t.Errorf("CaptureLast read %d records, want only the 300 new ones", n)
	}
	again, err := inc.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	equalContent(t, again, full)
	if n := inc.Stats().RecordsRead; n < full0 {
		t.Errorf("the Capture after CaptureLast read %d records, want everything (%d or more)", n, full0)
	}
}

// An incremental view must start over when the log start moves past it.
func TestIncrementalAfterDeleteRecords(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	if _, err := inc.Capture(ctx); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, snapshot.DefaultOffsetsTopic)
	if err != nil {
		t.Fatal(err)
	}
	os := kadm.Offsets{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			os.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
		}
	})
	if _, err := adm.DeleteRecords(ctx, os); err != nil {
		t.Fatal(err)
	}
	testkit.Produce(t, cl, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(`["fresh",{"filename":"x"}]`), Value: []byte(`{"position":1}`)})
	got, err := inc.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	equalContent(t, got, full)
	if len(inc.Stats().Resets) == 0 {
		t.Errorf("no partition was reset after DeleteRecords")
	}
}

// Regression: a read_committed reader never sees aborted records, so a
// partition whose last records were aborted must still count as read to its
// end; and records of a transaction still open must not appear.
func TestCaptureAbortedTailAndOpenTransaction(t *testing.T) {
	c, cl, _ := testkit.Seeded(t, connectdemo.Spec{})
	_ = c
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "tiny-offsets"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, snapshot.DefaultConfigTopic); err != nil && !isExists(err) {
		t.Fatal(err)
	}
	testkit.Produce(t, cl, &kgo.Record{Topic: "tiny-offsets", Key: []byte(`["a",{"p":1}]`), Value: []byte(`{"o":1}`)})

	txn := func(id string, commit bool, key string) *kgo.Client {
		p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID(id), kgo.DefaultProduceTopic("tiny-offsets"))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(`{"o":99}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := p.EndTransaction(ctx, kgo.TryAbort); err != nil {
				t.Fatal(err)
			}
			p.Close()
			return nil
		}
		return p
	}
	txn("aborter", true, `["a",{"p":1}]`) // aborted: must not win
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	snap, err := capture.Capture(tctx, cl, capture.Options{OffsetsTopics: []string{"tiny-offsets"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.SourceKeys() != 1 || string(snap.SourceTable().At(0).Value) != `{"o":1}` {
		t.Fatalf("after an aborted tail: %+v", snap.SourceTable().Collect())
	}

	open := txn("opener", false, `["b",{"p":2}]`) // left open
	defer open.Close()
	snap, err = capture.Capture(tctx, cl, capture.Options{OffsetsTopics: []string{"tiny-offsets"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.SourceKeys() != 1 {
		t.Fatalf("an open transaction's record was captured: %+v", snap.SourceTable().Collect())
	}
}

func isExists(err error) bool {
	return err != nil && strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS")
}

// A view overwrites a value in place only when nothing was handed out of
// it: the snapshots an incremental Capturer returned before stay as they
// were after later reads rewrite their keys (twice each, with values that
// fit in place of the old ones).
func TestIncrementalKeepsEarlierSnapshots(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	first, err := inc.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.SourceKeys() == 0 {
		t.Fatal("no source offsets in the seeded cluster")
	}
	before, _ := json.Marshal(first)
	for round := range 3 {
		var rs []*kgo.Record
		for _, o := range first.SourceTable().Collect() {
			for i := range 2 {
				rs = append(rs, &kgo.Record{Topic: o.Topic, Partition: o.Partition, Key: o.Key, Value: fmt.Appendf(nil, `{"p":%d}`, round*2+i)})
			}
		}
		testkit.Produce(t, cl, rs...)
		if _, err := inc.Capture(ctx); err != nil {
			t.Fatal(err)
		}
		if after, _ := json.Marshal(first); string(after) != string(before) {
			t.Fatalf("round %d: the first snapshot changed under its holder", round)
		}
	}
}
