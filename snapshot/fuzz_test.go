package snapshot_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// fuzzID is the ID the fuzzed objects are stored under: the fixture's, so
// that testdata/v1.snap and v1.json decode whole.
const fuzzID = "20261130T134920.123456Z-0a1b2c"

// fuzzZstd compresses documents for the wrapped-document path.
var fuzzZstd, _ = zstd.NewWriter(nil)

// FuzzDecode feeds the snapshot readers arbitrary bytes three ways: as a
// JSON document (Decode), as a whole stored object (Store.Get: header,
// checksum, zstd, document), and as a document wrapped in a valid header
// and compressed body, so that the fuzzer reaches the document decoder
// through the store too. No input may panic; whatever decodes must encode
// again, and decode to the same document: one round reaches a fixed point
// with the same exact key and value bytes. The seed corpus is in
// testdata/fuzz/FuzzDecode; run it longer with
//
//	go test -run '^$' -fuzz=FuzzDecode -fuzztime=60s ./snapshot/
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"testdata/v1.json", "store/testdata/v1.snap", "testdata/v1-configs.json", "testdata/v1-sinkguard.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(fuzzOne)
}

// fuzzOne is one FuzzDecode input.
func fuzzOne(t *testing.T, data []byte) {
	ctx := context.Background()

	// 1. The document decoder.
	if snap, err := snapshot.Decode(data); err == nil {
		roundTrip(t, snap)
	}

	// 2. The bytes as a stored object.
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "snapshots/"+fuzzID+".snap", data, nil); err != nil {
		t.Fatal(err)
	}
	st := store.NewStore(bucket)
	if snap, _, err := st.Snapshots().GetWith(ctx, fuzzID, nil); err == nil {
		if snap.ID != fuzzID {
			t.Fatalf("Get(%s) returned snapshot %s", fuzzID, snap.ID)
		}
		roundTrip(t, snap)
	} else if _, verr := st.Snapshots().Verify(ctx, fuzzID); verr == nil && !errors.Is(err, snapshot.ErrEncrypted) {
		t.Fatalf("Get failed (%v) but Verify passed", err)
	}

	// 3. The bytes as a document in a well-formed object.
	body := fuzzZstd.EncodeAll(data, nil)
	sum := sha256.Sum256(body)
	head := fmt.Sprintf(`{"format":"offsetkeeper-snapshot","version":1,"compression":"zstd","sha256":%q,"body_size":%d}`, hex.EncodeToString(sum[:]), len(body))
	obj := append(append([]byte(head), '\n'), body...)
	if err := bucket.WriteAll(ctx, "snapshots/"+fuzzID+".snap", obj, nil); err != nil {
		t.Fatal(err)
	}
	if snap, _, err := st.Snapshots().GetWith(ctx, fuzzID, nil); err == nil {
		roundTrip(t, snap)
	}
}

// roundTrip checks that a decoded snapshot encodes, decodes again to the
// same exact bytes, and that a second round changes nothing; and that it
// survives a store Put and Get.
func roundTrip(t *testing.T, snap *snapshot.Snapshot) {
	t.Helper()
	var doc1 bytes.Buffer
	if err := snap.Encode(&doc1); err != nil {
		t.Fatalf("a decoded snapshot does not encode: %v", err)
	}
	again, err := snapshot.Decode(doc1.Bytes())
	if err != nil {
		t.Fatalf("an encoded snapshot does not decode: %v\n%s", err, doc1.Bytes())
	}
	var doc2 bytes.Buffer
	if err := again.Encode(&doc2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc1.Bytes(), doc2.Bytes()) {
		t.Fatalf("no fixed point after one round:\n%s\n%s", doc1.Bytes(), doc2.Bytes())
	}
	if again.SourceKeys() != snap.SourceKeys() {
		t.Fatalf("%d source offsets after a round, %d before", again.SourceKeys(), snap.SourceKeys())
	}
	for i, o := range snap.SourceTable().Collect() {
		a := *again.SourceTable().At(int32(i))
		if !bytes.Equal(a.Key, o.Key) || !bytes.Equal(a.Value, o.Value) || (a.Key == nil) != (o.Key == nil) || (a.Value == nil) != (o.Value == nil) {
			t.Fatalf("source offset %d: key %q value %q became key %q value %q", i, o.Key, o.Value, a.Key, a.Value)
		}
	}
	if again.ID != snap.ID || again.Version != snap.Version || !again.CreatedAt.Equal(snap.CreatedAt) {
		t.Fatalf("identity changed: %s v%d %s became %s v%d %s", snap.ID, snap.Version, snap.CreatedAt, again.ID, again.Version, again.CreatedAt)
	}

	// A stored copy reads back as the same document. Put takes only
	// valid IDs, and fills in a missing creation time.
	if _, err := snapshot.ParseID(again.ID); err != nil || again.CreatedAt.IsZero() {
		return
	}
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	ctx := context.Background()
	if _, err := st.Snapshots().Put(ctx, again); err != nil {
		t.Fatalf("put a decoded snapshot: %v", err)
	}
	got, _, err := st.Snapshots().GetWith(ctx, again.ID, nil)
	if err != nil {
		t.Fatalf("get a stored snapshot: %v", err)
	}
	var doc3 bytes.Buffer
	if err := got.Encode(&doc3); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc3.Bytes(), doc2.Bytes()) {
		t.Fatalf("stored and read back, the document changed:\n%s\n%s", doc2.Bytes(), doc3.Bytes())
	}
}
