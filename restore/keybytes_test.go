package restore_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestKeyWithByteFFInLargePartition: a partition of more than 64 live keys,
// one of which holds the byte 0xFF, made capture panic (issue 41, item 1):
// the key sort counted digit 0xFF at index byte(0xFF)+1, which wraps to 0,
// and then placed its keys past the end of the slice. So snapshot,
// restore (even --dry-run), diff --live and the daemon all crashed on any
// offsets topic with such a key. Now it is captured and restored exactly,
// in a partition of each size around the sort's thresholds.
func TestKeyWithByteFFInLargePartition(t *testing.T) {
	for _, n := range []int{13, 65, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { keyWithByteFF(t, n) })
	}
}

func keyWithByteFF(t *testing.T, n int) {
	ctx := context.Background()
	_, cl := testkit.Cluster(t)
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	if _, err := adm.CreateTopic(ctx, 1, -1, compact, snapshot.DefaultConfigTopic); err != nil {
		t.Fatal(err)
	}
	// One partition: every key shares it.
	if _, err := adm.CreateTopic(ctx, 1, -1, compact, snapshot.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var recs []*kgo.Record
	put := func(k, v string) {
		want[k] = v
		recs = append(recs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(k), Value: []byte(v)})
	}
	for i := range n {
		put(fmt.Sprintf(`["c1",{"file":"/data/f%04d"}]`, i), fmt.Sprintf(`{"position":%d}`, i))
	}
	// The byte 0xFF in a key a connector owns, at the end of a word and
	// inside one, and the demo's binary key no connector owns.
	put("[\"c1\",{\"file\":\"/data/\xff\"}]", `{"position":-1}`)
	put("[\"c1\",{\"file\":\"/data/f\xff\xff\xff\xff\xff\xff\xff\xff\xff\"}]", `{"position":-2}`)
	put("\x00\x01\xfe\xffbinary-key", "\x01\x02\xff")
	testkit.Produce(t, cl, recs...)

	snap, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "capture", snap, want)
	snap.ID = "20260101T000000.000000Z-0000ff"

	// Damage every key, then restore the snapshot, unowned key included.
	recs = recs[:0]
	for k := range want {
		recs = append(recs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(k), Value: []byte(`{"position":0}`)})
	}
	testkit.Produce(t, cl, recs...)
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	req := restore.Request{Snapshot: snap}
	req.IncludeUnowned = true
	if _, err := restore.Run(ctx, restore.Env{Client: cl, Store: st}, req); err != nil {
		t.Fatalf("restore: %v", err)
	}
	after, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "after the restore", after, want)
}

// checkKeys fails unless snap holds exactly the keys and values of want,
// in key order.
func checkKeys(t *testing.T, what string, snap *snapshot.Snapshot, want map[string]string) {
	t.Helper()
	if snap.SourceKeys() != len(want) {
		t.Errorf("%s: %d keys, want %d", what, snap.SourceKeys(), len(want))
	}
	for i, o := range snap.SourceTable().Collect() {
		if v, ok := want[string(o.Key)]; !ok || v != string(o.Value) {
			t.Errorf("%s: key %q value %q, want %q (known %v)", what, o.Key, o.Value, v, ok)
		}
		if i > 0 && bytes.Compare(snap.SourceTable().At(int32(i-1)).Key, o.Key) >= 0 {
			t.Errorf("%s: key %q after %q: not in key order", what, o.Key, snap.SourceTable().At(int32(i-1)).Key)
		}
	}
}
