package kread

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot/internal/keyview"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// viewContent is what a read kept of a topic: partition → key → value and
// offset, and the null keys counted.
type viewContent map[int32]map[string]string

func contentOf(v *keyview.TopicView) viewContent {
	out := make(viewContent)
	for p, pv := range v.Parts {
		m := make(map[string]string)
		for k, i := range pv.All() {
			r := pv.Record(i)
			m[k] = fmt.Sprintf("%q@%d", r.Value, r.Offset)
		}
		m["\x00nulls"] = fmt.Sprint(pv.Nulls)
		m["\x00next"] = fmt.Sprint(pv.Next)
		out[p] = m
	}
	return out
}

// batchWorld is a cluster with two compacted topics of 3 partitions:
// "plain" written in compressed batches (zstd, snappy, none) with headers,
// null keys, empty values, tombstones and committed transactions; "txn"
// with aborted transactions as well.
func batchWorld(t *testing.T) (*kgo.Client, *kadm.Client) {
	t.Helper()
	kc := testkit.Kfake(t, kfake.NumBrokers(3), kfake.SeedTopics(3, "plain", "txn"))
	ctx := context.Background()
	for i, codec := range []kgo.CompressionCodec{kgo.ZstdCompression(), kgo.SnappyCompression(), kgo.NoCompression()} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.ProducerBatchCompression(codec),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		var rs []*kgo.Record
		for j := range 300 {
			r := &kgo.Record{Topic: "plain", Partition: int32(j % 3), Key: fmt.Appendf(nil, `["c%d",{"p":%d}]`, j%7, j%50), Value: fmt.Appendf(nil, `{"o":%d,"c":%d}`, j, i)}
			switch j % 23 {
			case 0:
				r.Value = nil // tombstone
			case 1:
				r.Key = nil
			case 2:
				r.Value = []byte{}
			case 3:
				r.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}
			}
			rs = append(rs, r)
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	for i, commit := range []bool{true, false, true, false} {
		p, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.TransactionalID(fmt.Sprint("tx", i)),
			kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		for _, topic := range []string{"plain", "txn"} {
			if topic == "plain" && !commit {
				continue // "plain" has no aborted transaction
			}
			if err := p.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			var rs []*kgo.Record
			for j := range 60 {
				rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(j % 3), Key: fmt.Appendf(nil, `["t",{"p":%d}]`, j%20), Value: fmt.Appendf(nil, `{"tx":%d,"j":%d}`, i, j)})
			}
			if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// readWith reads topics with directFetch set to direct.
func readWith(t *testing.T, cl *kgo.Client, adm *kadm.Client, direct bool, topics ...string) map[string]viewContent {
	t.Helper()
	was := directFetch
	directFetch = direct
	defer func() { directFetch = was }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, missing, err := ListBounds(ctx, adm, topics)
	if err != nil || len(missing) > 0 {
		t.Fatalf("list bounds: %v (missing %v)", err, missing)
	}
	var views []*keyview.TopicView
	for _, name := range topics {
		views = append(views, keyview.NewTopicView(name))
	}
	if _, err := ReadTopics(ctx, cl, adm, views, ends); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]viewContent)
	for _, v := range views {
		out[v.Name] = contentOf(v)
	}
	return out
}

// The records applied straight from the batches are those
// kgo.ProcessFetchPartition gives: same keys, values, offsets, null keys
// and next offsets, over compressed batches, headers, tombstones, empty
// values, control batches and aborted transactions.
func TestApplyDirectMatchesKgo(t *testing.T) {
	cl, adm := batchWorld(t)
	want := readWith(t, cl, adm, false, "plain", "txn")
	got := readWith(t, cl, adm, true, "plain", "txn")
	for topic, w := range want {
		for p, wm := range w {
			if !maps.Equal(got[topic][p], wm) {
				t.Errorf("%s/%d: direct read\n%v\nkgo read\n%v", topic, p, got[topic][p], wm)
			}
		}
		if len(got[topic]) != len(w) || len(w) != 3 {
			t.Errorf("%s: %d partitions read directly, %d by kgo", topic, len(got[topic]), len(w))
		}
	}
	for _, pm := range want["plain"] {
		if pm["\x00nulls"] == "0" || len(pm) < 20 {
			t.Fatalf("the world lacks what it tests: %v", pm)
		}
	}
}

// applyDirect takes a partition of committed batches, compressed or not,
// and leaves one with aborted transactions to kgo.
func TestApplyDirectTakesWhatItCan(t *testing.T) {
	cl, adm := batchWorld(t)
	ctx := context.Background()
	ends, _, err := ListBounds(ctx, adm, []string{"plain", "txn"})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"plain", "txn"} {
		v := keyview.NewTopicView(topic)
		c := &cursor{view: v, part: 0, pv: keyview.NewPartView(0), end: ends[topic][0].End}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, fetchMaxBytes, 1, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = partMaxBytes, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		req.Topics[0].TopicID = md.Topics[topic].ID
		kresp, err := cl.Broker(int(md.Topics[topic].Partitions[0].Leader)).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := kresp.(*kmsg.FetchResponse)
		part := &resp.Topics[0].Partitions[0]
		if part.ErrorCode != 0 {
			t.Fatalf("%s: fetch: error code %d", topic, part.ErrorCode)
		}
		next, kept, ok, _ := applyDirect(c, part, kgo.DefaultDecompressor(), nil)
		switch topic {
		case "plain":
			if !ok || next != c.end || kept == 0 || c.pv.Len() == 0 {
				t.Errorf("plain: ok %v, next %d of %d, %d kept, %d keys", ok, next, c.end, kept, c.pv.Len())
			}
		case "txn":
			if len(part.AbortedTransactions) == 0 {
				t.Fatalf("txn: the fetch has no aborted transaction")
			}
			if ok || c.pv.Len() != 0 {
				t.Errorf("txn: taken with aborted transactions (ok %v, %d keys)", ok, c.pv.Len())
			}
		}
	}
}

// decodeBatch never panics on hostile bytes, and every record it accepts
// lies within them.
func FuzzDecodeBatch(f *testing.F) {
	var rb kmsg.Record
	rb.Key, rb.Value, rb.OffsetDelta = []byte("k"), []byte("v"), 1
	rb.Length = int32(len(rb.AppendTo(nil)) - 1) // less its own one-byte length
	one := rb.AppendTo(nil)
	if recs, ok := decodeBatch(one, 100, 1, nil); !ok || len(recs) != 1 || recs[0].offset != 101 ||
		string(spanOf(one, recs[0].key)) != "k" || string(spanOf(one, recs[0].value)) != "v" {
		f.Fatalf("a record kmsg encodes: %v %v", recs, ok)
	}
	f.Add(one, int32(1))
	f.Add(append(one, one...), int32(2))
	f.Add([]byte{0x02, 0x00}, int32(1))
	f.Fuzz(func(t *testing.T, raw []byte, count int32) {
		recs, ok := decodeBatch(raw, 100, count, nil)
		if !ok {
			return
		}
		if len(recs) != int(count) {
			t.Fatalf("%d records accepted of %d", len(recs), count)
		}
		for _, r := range recs {
			for _, s := range [][2]int32{r.key, r.value} {
				if s[0] >= 0 && (s[0] > s[1] || int(s[1]) > len(raw)) {
					t.Fatalf("span %v outside %d bytes", s, len(raw))
				}
			}
		}
	})
}
