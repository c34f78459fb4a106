package capture_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kgo"
	"gocloud.dev/blob/memblob"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// encodeAs encodes snap with the given ID and time, so that documents of
// two captures can be compared byte for byte.
func encodeAs(t *testing.T, snap *snapshot.Snapshot, id string, at time.Time) []byte {
	t.Helper()
	snap.ID, snap.CreatedAt = id, at
	var buf bytes.Buffer
	if err := snap.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameDocument checks that a streamed snapshot encodes to the very bytes
// of a built one, and counts as it does.
func sameDocument(t *testing.T, streamed, built *snapshot.Snapshot) {
	t.Helper()
	if !streamed.Streamed() || built.Streamed() {
		t.Fatalf("Streamed() = %v, %v; want true, false", streamed.Streamed(), built.Streamed())
	}
	if streamed.SourceTable().Compact() || streamed.CompactOffsets() {
		t.Fatalf("streamed snapshot holds a compact table")
	}
	if got, want := streamed.SourceKeys(), built.SourceKeys(); got != want || want != built.SourceKeys() {
		t.Errorf("SourceKeys %d, built %d (len %d)", got, want, built.SourceKeys())
	}
	if got, want := streamed.Unparsed(), built.Unparsed(); got != want {
		t.Errorf("Unparsed %d, built %d", got, want)
	}
	if got, want := streamed.SourceKeysByConnector(), built.SourceKeysByConnector(); !maps.Equal(got, want) {
		t.Errorf("SourceKeysByConnector\n got %v\nwant %v", got, want)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	id := snapshot.NewID(at)
	a, b := encodeAs(t, streamed, id, at), encodeAs(t, built, id, at)
	if !bytes.Equal(a, b) {
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("documents differ at byte %d of %d/%d:\nstreamed: %.300s\n   built: %.300s", i, len(a), len(b), a[max(0, i-100):], b[max(0, i-100):])
	}
}

// oddRecords writes what a capture must keep or report besides worker
// records: keys that are not [name, {map}], invalid UTF-8, a value that
// is not JSON, a null key, and one key live in two partitions.
func oddRecords(t *testing.T, cl *kgo.Client) {
	t.Helper()
	manual, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	topic := snapshot.DefaultOffsetsTopic
	testkit.Produce(t, manual,
		&kgo.Record{Topic: topic, Partition: 3, Key: []byte(`not json at all`), Value: []byte(`{"x":1}`)},
		&kgo.Record{Topic: topic, Partition: 4, Key: []byte{0xff, 0xfe, '"', '<'}, Value: []byte{0x80, 0x81}},
		&kgo.Record{Topic: topic, Partition: 5, Key: []byte(`["odd-conn",{"file":"a\u00e9\\n"}]`), Value: []byte(`not json`)},
		&kgo.Record{Topic: topic, Partition: 6, Key: nil, Value: []byte(`{"null":"key"}`)},
		&kgo.Record{Topic: topic, Partition: 1, Key: []byte(`["twice",{"p":1}]`), Value: []byte(`{"o":1}`)},
		&kgo.Record{Topic: topic, Partition: 2, Key: []byte(`["twice",{"p":1}]`), Value: []byte(`{"o":2}`)},
		&kgo.Record{Topic: topic, Partition: 7, Key: []byte(`["odd-conn",{"b":[1,2,{"c":null}]}]`), Value: []byte(`{ "spaced" : true }`)},
		&kgo.Record{Topic: topic, Partition: 8, Key: []byte(`["",{"empty":"name"}]`), Value: []byte(`{"o":3}`)},
	)
}

// A streamed capture encodes to the same document as a built one, whole
// and scoped, and a stored streamed snapshot reads back as the built one.
func TestCaptureStreamedEncodesAsBuilt(t *testing.T) {
	_, cl, exp := testkit.Seeded(t, connectdemo.DefaultSpec())
	oddRecords(t, cl)
	ctx := context.Background()

	built, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := capture.NewCapturer(cl, capture.Options{}).CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if built.Unparsed() < 2 || len(built.Warnings) == 0 {
		t.Fatalf("odd records not captured: %d unparsed, warnings %q", built.Unparsed(), built.Warnings)
	}
	sameDocument(t, streamed, built)

	// Scoped: a source connector of the worker topic, one with its own
	// offsets topic, a sink, and the connector known only from offsets.
	scope := []string{"odd-conn"}
	var own, plain, sink bool
	for name, c := range exp.Connectors {
		switch {
		case c.Type == snapshot.TypeSource && c.OffsetsTopic != "" && !own:
			own = true
		case c.Type == snapshot.TypeSource && c.OffsetsTopic == "" && c.HasConfig && !plain:
			plain = true
		case c.Type == snapshot.TypeSink && !sink:
			sink = true
		default:
			continue
		}
		scope = append(scope, name)
	}
	opts := capture.Options{Connectors: scope}
	built, err = capture.Capture(ctx, cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	streamed, err = capture.NewCapturer(cl, opts).CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if built.SourceKeys() == 0 || len(built.SinkGroups) == 0 {
		t.Fatalf("scoped capture of %v is empty", scope)
	}
	sameDocument(t, streamed, built)

	// Through a store: the streamed snapshot stores what the built one
	// does, and reads back as a whole snapshot.
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	streamed.ID, streamed.CreatedAt = "", time.Time{}
	info, err := st.Snapshots().Put(ctx, streamed)
	if err != nil {
		t.Fatal(err)
	}
	if info.SourceKeys != built.SourceKeys() || info.Connectors != len(built.Connectors) || info.SinkGroups != len(built.SinkGroups) {
		t.Errorf("Info %+v, built has %d keys, %d connectors, %d groups", info, built.SourceKeys(), len(built.Connectors), len(built.SinkGroups))
	}
	got, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	equalContent(t, got, built)
	// Stored as compactly: a streamed snapshot's partitions of a few keys
	// each share frames, as the built snapshot's offsets do.
	built.ID, built.CreatedAt = "", time.Time{}
	binfo, err := st.Snapshots().Put(ctx, built)
	if err != nil {
		t.Fatal(err)
	}
	if d := info.Size - binfo.Size; d > binfo.Size/100 || -d > binfo.Size/100 {
		t.Errorf("streamed snapshot stored in %d bytes, built one in %d", info.Size, binfo.Size)
	}
}

// An incremental Capturer's streamed snapshots equal full reads round after
// round (keys rewritten, added, removed, removed and written again, keys
// that do not parse, keys off their partition), keeping and updating its
// index between them, and one encoded after the next Capture fails with
// ErrStale instead of encoding views that moved on.
func TestCaptureStreamedIncremental(t *testing.T) {
	c, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	manual, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	ctx := context.Background()
	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	// A built capture first: its kept state must not leak into streamed ones.
	if _, err := inc.Capture(ctx); err != nil {
		t.Fatal(err)
	}
	// And one limited to some connectors, which keeps only their keys.
	scope := []string{"churn-0", "churn-2", "strayed"}
	scoped := capture.NewCapturer(cl, capture.Options{Incremental: true, Connectors: scope})
	rng := rand.New(rand.NewSource(7))
	var prev *snapshot.Snapshot
	updated := 0
	for round := 0; round < 8; round++ {
		var rs []*kgo.Record
		// Few enough per round that partitions keep their index (a
		// partition where more than half the keys changed indexes anew).
		for i := 0; i < 60; i++ {
			key := fmt.Sprintf(`["churn-%d",{"filename":"/data/f%d.txt"}]`, rng.Intn(4), rng.Intn(60))
			switch rng.Intn(12) {
			case 0:
				key = fmt.Sprintf(`not json %d`, rng.Intn(5))
			case 1:
				key = fmt.Sprintf(`["",{"n":%d}]`, rng.Intn(5))
			case 2:
				key = fmt.Sprintf(`["new-%d-%d",{"f":"x"}]`, round, rng.Intn(3))
			}
			var val []byte
			if rng.Intn(5) > 0 {
				val = fmt.Appendf(nil, `{"position":%d}`, rng.Intn(100000))
			}
			if rng.Intn(9) == 0 {
				// Removed and written again in the same round.
				rs = append(rs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(key)})
				val = []byte(`{"again":true}`)
			}
			rs = append(rs, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(key), Value: val})
		}
		testkit.Produce(t, cl, rs...)
		// One key off its murmur2 partition, now and then removed again.
		off := &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Partition: int32(round % 5), Key: []byte(fmt.Sprintf(`["strayed",{"f":"s%d"}]`, round%2)), Value: []byte(`{"o":1}`)}
		if round%3 == 2 {
			// The copy the round before wrote goes.
			off.Partition, off.Key, off.Value = int32((round-1)%5), []byte(fmt.Sprintf(`["strayed",{"f":"s%d"}]`, (round-1)%2)), nil
		}
		testkit.Produce(t, manual, off)
		if round == 5 {
			c.Compact()
		}
		var got *snapshot.Snapshot
		if round == 3 {
			got, err = inc.Capture(ctx) // built again in between
		} else {
			got, err = inc.CaptureStreamed(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		updated += inc.Stats().IndexesUpdated
		sgot, err := scoped.CaptureStreamed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		updated += scoped.Stats().IndexesUpdated
		sfull, err := capture.Capture(ctx, cl, capture.Options{Connectors: scope})
		if err != nil {
			t.Fatal(err)
		}
		sameDocument(t, sgot, sfull)
		if prev != nil {
			if err := prev.Encode(new(bytes.Buffer)); !errors.Is(err, snapshot.ErrStale) {
				t.Fatalf("round %d: encoding the previous streamed snapshot: %v, want ErrStale", round, err)
			}
			prev = nil
		}
		full, err := capture.Capture(ctx, cl, capture.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Streamed() {
			sameDocument(t, got, full)
			prev = got
		} else {
			equalContent(t, got, full)
		}
		// Compaction moving a log start makes that partition read again.
		if st := inc.Stats(); st.RecordsRead > 450 && len(st.Resets) == 0 {
			t.Errorf("round %d: incremental run read %d records, want only the new ones", round, st.RecordsRead)
		}
	}
	if updated == 0 {
		t.Error("no streamed capture updated a kept index: every one indexed from scratch")
	}

	// A Capturer that is not incremental hands its views to the snapshot:
	// it encodes after any later capture.
	once := capture.NewCapturer(cl, capture.Options{})
	s1, err := once.CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Produce(t, cl, &kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Key: []byte(`["late",{"f":1}]`), Value: []byte(`{"o":1}`)})
	full, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := once.CaptureStreamed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s1.Encode(new(bytes.Buffer)); err != nil {
		t.Fatalf("encoding a non-incremental streamed snapshot after another capture: %v", err)
	}
	if s1.SourceKeys() != full.SourceKeys()-1 {
		t.Errorf("first streamed snapshot has %d keys, want %d (before the late key)", s1.SourceKeys(), full.SourceKeys()-1)
	}
}

// Documents cut into many pieces, streamed and built, encode to the same
// bytes, and the body Put stores (a zstd frame per piece) decompresses,
// through a streaming decoder too, to exactly what Encode writes.
func TestPiecesAndFrames(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	oddRecords(t, cl)
	ctx := context.Background()
	built, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := capture.NewCapturer(cl, capture.Options{}).CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(built.SinkGroups) < 3 || built.SourceKeys() < 10 {
		t.Fatalf("too small to cut: %d groups, %d keys", len(built.SinkGroups), built.SourceKeys())
	}
	sameDocument(t, streamed, built)
	for _, snap := range []*snapshot.Snapshot{built, streamed} {
		var whole, cut bytes.Buffer
		if err := snap.Encode(&whole); err != nil {
			t.Fatal(err)
		}
		if err := snapshot.EncodeInPieces(snap, &cut, 3, 2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole.Bytes(), cut.Bytes()) {
			t.Fatalf("streamed %v: cut into pieces of 3 keys and 2 groups, the document is not the same bytes", snap.Streamed())
		}
	}

	b := memblob.OpenBucket(nil)
	st := store.NewStore(b)
	defer st.Close()
	st.SetPieceSizes(3, 2)
	for _, snap := range []*snapshot.Snapshot{built, streamed} {
		snap.ID, snap.CreatedAt = "", time.Time{}
		info, err := st.Snapshots().Put(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		var doc bytes.Buffer
		if err := snap.Encode(&doc); err != nil {
			t.Fatal(err)
		}
		obj, err := b.ReadAll(ctx, "snapshots/"+info.ID+".snap")
		if err != nil {
			t.Fatal(err)
		}
		body := obj[bytes.IndexByte(obj, '\n')+1:]
		if n := bytes.Count(body, []byte{0x28, 0xb5, 0x2f, 0xfd}); n < 10 {
			t.Errorf("body has %d zstd frame magics, want one per piece", n)
		}
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		zr.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, doc.Bytes()) {
			t.Fatalf("stored body decompresses to %d bytes that are not the %d bytes Encode writes", len(got), doc.Len())
		}
		back, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		equalContent(t, back, built)
	}
}

// A streamed snapshot stored under EncodeOnce, its partitions let go as
// Put encodes them (many pieces here), stores the same document as one
// without; encoding it again fails while its counts stay. An incremental
// Capturer's snapshot ignores EncodeOnce: its views are the Capturer's.
func TestEncodeOnce(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	oddRecords(t, cl)
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	st := store.NewStore(b)
	defer st.Close()
	st.SetPieceSizes(3, 2)
	plain, err := capture.NewCapturer(cl, capture.Options{}).CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	once, err := capture.NewCapturer(cl, capture.Options{}).CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys := once.SourceKeys()
	once.EncodeOnce()
	pi, err := st.Snapshots().Put(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	oi, err := st.Snapshots().Put(ctx, once)
	if err != nil {
		t.Fatal(err)
	}
	// IDs and times differ, so checksums too, and the compressed sizes by
	// a few bytes (the documents are compared below).
	if d := pi.Size - oi.Size; pi.SHA256 == oi.SHA256 || d < -16 || d > 16 {
		t.Errorf("sizes %d and %d (want about the same), checksums %s and %s (want different)", pi.Size, oi.Size, pi.SHA256, oi.SHA256)
	}
	got, _, err := st.Snapshots().GetWith(ctx, oi.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := st.Snapshots().GetWith(ctx, pi.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	got.ID, got.CreatedAt = want.ID, want.CreatedAt
	var gd, wd bytes.Buffer
	if err := got.Encode(&gd); err != nil {
		t.Fatal(err)
	}
	if err := want.Encode(&wd); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gd.Bytes(), wd.Bytes()) {
		t.Fatal("the EncodeOnce snapshot stored another document")
	}
	if err := once.Encode(new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "EncodeOnce") {
		t.Errorf("encoding it again: %v, want an error naming EncodeOnce", err)
	}
	if _, err := st.Snapshots().Put(ctx, once); err == nil {
		t.Error("stored it a second time")
	}
	if once.SourceKeys() != keys || keys == 0 {
		t.Errorf("SourceKeys %d after Put, %d before", once.SourceKeys(), keys)
	}

	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	s, err := inc.CaptureStreamed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.EncodeOnce()
	if _, err := st.Snapshots().Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := s.Encode(new(bytes.Buffer)); err != nil {
		t.Errorf("an incremental Capturer's snapshot after Put under EncodeOnce: %v", err)
	}
}

// A one-shot streamed capture (CaptureStreamedOnce), whose partitions are
// compressed as they are read and their views let go, encodes and stores
// the document a built capture does: all partitions early, some of them,
// scoped; with keys live in two partitions, one of them the key's murmur2
// partition (found through the hashes of a view let go). Once stored, it
// encodes no more; an incremental Capturer's is CaptureStreamed's.
func TestCaptureStreamedOnce(t *testing.T) {
	_, cl, exp := testkit.Seeded(t, connectdemo.DefaultSpec())
	oddRecords(t, cl)
	ctx := context.Background()
	// A key in its murmur2 partition and, by hand, in the next one too.
	const nparts = 25
	dup := []byte(`["dup-conn",{"file":"/x"}]`)
	m := snapshot.PartitionFor(dup, nparts)
	manual, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	testkit.Produce(t, manual,
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Partition: m, Key: dup, Value: []byte(`{"o":1}`)},
		&kgo.Record{Topic: snapshot.DefaultOffsetsTopic, Partition: (m + 1) % nparts, Key: dup, Value: []byte(`{"o":2}`)},
	)

	built, err := capture.Capture(ctx, cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var dupWarned, twiceWarned bool
	for _, w := range built.Warnings {
		dupWarned = dupWarned || strings.Contains(w, "dup-conn")
		twiceWarned = twiceWarned || strings.Contains(w, "twice")
	}
	if !dupWarned || !twiceWarned {
		t.Fatalf("duplicate keys not warned of: %q", built.Warnings)
	}
	perPart := map[int32]int{}
	for _, o := range built.SourceTable().Collect() {
		if o.Topic == snapshot.DefaultOffsetsTopic {
			perPart[o.Partition]++
		}
	}
	counts := slices.Sorted(maps.Values(perPart))
	median := counts[len(counts)/2]
	if median < 2 || counts[0] == counts[len(counts)-1] {
		t.Fatalf("keys per partition %v: want a spread to compress some partitions early", counts)
	}

	// minKeys 0: the defaults, under which this small read leaves too
	// little to overlap and nothing is compressed early.
	for _, minKeys := range []int{1, median, 0} {
		c := capture.NewCapturer(cl, capture.Options{})
		if minKeys > 0 {
			capture.SetEarly(c, 3, minKeys)
		}
		once, err := c.CaptureStreamedOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sameDocument(t, once, built)

		st := store.NewStore(memblob.OpenBucket(nil))
		defer st.Close()
		st.SetPieceSizes(4, 2)
		once.ID, once.CreatedAt = "", time.Time{}
		info, err := st.Snapshots().Put(ctx, once)
		if err != nil {
			t.Fatal(err)
		}
		if info.SourceKeys != built.SourceKeys() {
			t.Errorf("min %d: stored %d keys, built %d", minKeys, info.SourceKeys, built.SourceKeys())
		}
		got, _, err := st.Snapshots().GetWith(ctx, info.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		equalContent(t, got, built)
		if err := once.Encode(new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "EncodeOnce") {
			t.Errorf("min %d: encoding it after Put: %v, want an error naming EncodeOnce", minKeys, err)
		}
	}

	// Scoped, every partition early.
	scope := []string{"dup-conn"}
	for name, c := range exp.Connectors {
		if c.Type == snapshot.TypeSource && len(scope) < 3 {
			scope = append(scope, name)
		}
	}
	opts := capture.Options{Connectors: scope}
	sbuilt, err := capture.Capture(ctx, cl, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := capture.NewCapturer(cl, opts)
	capture.SetEarly(c, 2, 1)
	sonce, err := c.CaptureStreamedOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameDocument(t, sonce, sbuilt)

	// Incremental: the Capturer's views stay, and so does the snapshot.
	inc := capture.NewCapturer(cl, capture.Options{Incremental: true})
	capture.SetEarly(inc, 2, 1)
	s, err := inc.CaptureStreamedOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewStore(memblob.OpenBucket(nil))
	defer st.Close()
	if _, err := st.Snapshots().Put(ctx, s); err != nil {
		t.Fatal(err)
	}
	sameDocument(t, s, built)
}
