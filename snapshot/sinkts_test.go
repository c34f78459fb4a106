package snapshot_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// recordAt reads the record at offset off of topic/p.
func recordAt(t *testing.T, cl *kgo.Client, topic string, p int32, off int64) *kgo.Record {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(off)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s/%d@%d: %v", topic, p, off, err)
		}
		for _, r := range fs.Records() {
			if r.Offset == off {
				return r
			}
		}
	}
}

func TestCaptureLastConsumed(t *testing.T) {
	_, cl, _ := seeded(t, connectdemo.DefaultSpec())
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	// Nothing consumed is left below clicks/1's committed offset 55 once
	// the log starts there; orders/5 is read at 12 as usual.
	if _, err := adm.DeleteRecords(ctx, kadm.Offsets{"clicks": {1: {Topic: "clicks", Partition: 1, At: 56}}}); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Capture(ctx, cl, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range snap.Warnings {
		if strings.Contains(w, "last consumed") {
			t.Errorf("warning: %s", w)
		}
	}
	n := 0
	for _, g := range snap.SinkGroups {
		for _, o := range g.Offsets {
			lc := o.LastConsumed
			if o.Topic == "clicks" && o.Partition == 1 {
				if lc == nil || lc.Offset != -1 {
					t.Errorf("%s %s/%d: last consumed %+v, want offset -1 (log start past the offset)", g.Group, o.Topic, o.Partition, lc)
				}
				continue
			}
			if lc == nil {
				t.Errorf("%s %s/%d@%d: no last consumed record", g.Group, o.Topic, o.Partition, o.Offset)
				continue
			}
			r := recordAt(t, cl, o.Topic, o.Partition, o.Offset-1)
			if lc.Offset != o.Offset-1 || lc.Timestamp != r.Timestamp.UnixMilli() || lc.LogAppendTime {
				t.Errorf("%s %s/%d@%d: last consumed %+v, want offset %d timestamp %d", g.Group, o.Topic, o.Partition, o.Offset, *lc, r.Offset, r.Timestamp.UnixMilli())
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d sink offsets checked", n)
	}

	// The field round-trips through the document, and a document without
	// it keeps its exact bytes.
	var buf bytes.Buffer
	if err := snap.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`,"last_consumed":{"offset":`)) {
		t.Fatal("no last_consumed in the document")
	}
	back, err := snapshot.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.Encode(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatal("decoded and encoded again, the document differs")
	}
}
