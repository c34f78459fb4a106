package capture_test

// Benchmarks of capture, incremental capture, Put and Get, and a count of
// the broker requests a sink capture makes. They run against an in-process
// kfake cluster seeded by connectdemo, small by default so that
// `go test -bench . ./snapshot/` stays quick; the sizes come from the
// environment:
//
//	OFFSETKEEPER_BENCH_RECORDS           offsets topic records (default 20000; keys are half)
//	OFFSETKEEPER_BENCH_GROUPS            sink groups (default 100)
//	OFFSETKEEPER_BENCH_GROUP_PARTITIONS  partitions per sink group (default 50)
//	OFFSETKEEPER_BENCH_BROKERS           use this already seeded cluster instead
//	                                     (bench/cluster; profiles then show offsetkeeper alone)
//
// bench/run.sh runs them at the sizes; docs/benchmarks.md has the
// figures.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

func envInt(b testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// benchCluster is a seeded cluster shared by the benchmarks of one run.
type benchCluster struct {
	brokers []string
	records int
}

var (
	benchOnce sync.Once
	benchCl   benchCluster
	benchErr  error
)

// cluster returns the brokers of the cluster the benchmarks read: the one
// OFFSETKEEPER_BENCH_BROKERS names, or an in-process kfake seeded once per
// test binary at the configured size.
func cluster(b *testing.B) benchCluster {
	b.Helper()
	if v := os.Getenv("OFFSETKEEPER_BENCH_BROKERS"); v != "" {
		return benchCluster{brokers: strings.Split(v, ","), records: -1}
	}
	records := envInt(b, "OFFSETKEEPER_BENCH_RECORDS", 20_000)
	groups := envInt(b, "OFFSETKEEPER_BENCH_GROUPS", 100)
	groupParts := envInt(b, "OFFSETKEEPER_BENCH_GROUP_PARTITIONS", 50)
	benchOnce.Do(func() {
		c, err := connectdemo.NewCluster()
		if err != nil {
			benchErr = err
			return
		}
		// Kept for the whole test binary: seeding is the slow part.
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
		if err != nil {
			benchErr = err
			return
		}
		defer cl.Close()
		keys := max(records/2, 1)
		conns := 100
		for keys%conns != 0 {
			conns--
		}
		spec := connectdemo.Spec{
			ExtraFileConnectors: conns, FilesPerConnector: keys / conns, HistoryPerKey: 1,
			BulkStopped: true, ExtraSinkGroups: groups, GroupPartitions: groupParts, Seed: 1,
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if _, err := connectdemo.Seed(ctx, cl, spec); err != nil {
			benchErr = err
			return
		}
		benchCl = benchCluster{brokers: c.ListenAddrs(), records: 2 * keys}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchCl
}

func client(b *testing.B, brokers []string, opts ...kgo.Opt) *kgo.Client {
	b.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

func fileStore(b *testing.B) *store.Store {
	b.Helper()
	st, err := store.OpenStore(context.Background(), "file://"+b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

func reportSize(b *testing.B, snap *snapshot.Snapshot, st capture.CaptureStats) {
	b.ReportMetric(float64(snap.SourceKeys()), "keys")
	b.ReportMetric(float64(len(snap.SinkGroups)), "groups")
	b.ReportMetric(float64(st.RecordsRead), "records/op")
}

// BenchmarkCaptureFull is a full read of the cluster: what the snapshot
// command does before Put.
func BenchmarkCaptureFull(b *testing.B) { benchFull(b, capture.Options{}) }

// BenchmarkCaptureFullSourceOnly is BenchmarkCaptureFull limited to the
// source connectors: no sink group is read.
func BenchmarkCaptureFullSourceOnly(b *testing.B) { benchFull(b, sourceOnly(b)) }

// sourceOnly returns Options limited to the source connectors of the
// benchmark cluster.
func sourceOnly(b *testing.B) capture.Options {
	var opts capture.Options
	for _, c := range captured(b).Connectors {
		if c.Type == snapshot.TypeSource {
			opts.Connectors = append(opts.Connectors, c.Name)
		}
	}
	return opts
}

func benchFull(b *testing.B, opts capture.Options) {
	cl := client(b, cluster(b).brokers)
	ctx := context.Background()
	var snap *snapshot.Snapshot
	c := capture.NewCapturer(cl, opts)
	for b.Loop() {
		var err error
		// Streamed, as the snapshot command captures.
		if snap, err = c.CaptureStreamed(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportSize(b, snap, c.Stats())
}

// BenchmarkSnapshotFull is a full capture plus Put into a file store: the
// snapshot command, in process.
func BenchmarkSnapshotFull(b *testing.B) {
	cl := client(b, cluster(b).brokers)
	st := fileStore(b)
	ctx := context.Background()
	var snap *snapshot.Snapshot
	c := capture.NewCapturer(cl, capture.Options{})
	for b.Loop() {
		var err error
		if snap, err = c.CaptureStreamed(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Snapshots().Put(ctx, snap); err != nil {
			b.Fatal(err)
		}
	}
	reportSize(b, snap, c.Stats())
}

// changeKeys gives pct% of the source keys of snap new values, written as
// a worker writes them (default partitioner: murmur2 of the key).
func changeKeys(b *testing.B, cl *kgo.Client, snap *snapshot.Snapshot, pct float64, rng *rand.Rand) int {
	b.Helper()
	n := int(float64(snap.SourceKeys()) * pct / 100)
	rs := make([]*kgo.Record, 0, n)
	for _, i := range rng.Perm(snap.SourceKeys())[:n] {
		so := *snap.SourceTable().At(int32(i))
		rs = append(rs, &kgo.Record{Topic: so.Topic, Key: so.Key, Value: fmt.Appendf(nil, `{"position":%d}`, rng.Int64N(1<<30))})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchIncremental measures what a daemon does on each tick after 1% of
// the keys changed: an incremental capture, and with put a Put too.
func benchIncremental(b *testing.B, put bool, opts capture.Options) {
	cl := client(b, cluster(b).brokers)
	prod := client(b, cluster(b).brokers, kgo.ProducerLinger(0))
	st := fileStore(b)
	ctx := context.Background()
	opts.Incremental = true
	c := capture.NewCapturer(cl, opts)
	base, err := c.Capture(ctx)
	if err != nil {
		b.Fatal(err)
	}
	snap := base
	rng := rand.New(rand.NewPCG(1, 2))
	changed := 0
	for b.Loop() {
		b.StopTimer()
		changed = changeKeys(b, prod, base, 1, rng) // values change, keys stay
		b.StartTimer()
		// Streamed, as the daemon captures.
		snap, err = c.CaptureStreamed(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if put {
			if _, err := st.Snapshots().Put(ctx, snap); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportSize(b, snap, c.Stats())
	b.ReportMetric(float64(changed), "changed")
}

// BenchmarkCaptureIncremental is an incremental capture after 1% of the
// keys changed; compare with BenchmarkCaptureFull.
func BenchmarkCaptureIncremental(b *testing.B) { benchIncremental(b, false, capture.Options{}) }

// BenchmarkCaptureIncrementalSourceOnly is BenchmarkCaptureIncremental
// limited to the source connectors, as BenchmarkCaptureFullSourceOnly:
// what is left when no sink group is read (sink group offsets have no
// change feed, so every capture reads them all).
func BenchmarkCaptureIncrementalSourceOnly(b *testing.B) {
	benchIncremental(b, false, sourceOnly(b))
}

// BenchmarkSnapshotIncremental is the daemon's tick: an incremental
// capture after 1% of the keys changed, plus Put; compare with
// BenchmarkSnapshotFull.
func BenchmarkSnapshotIncremental(b *testing.B) { benchIncremental(b, true, capture.Options{}) }

// captured returns one full capture of the benchmark cluster.
func captured(b *testing.B) *snapshot.Snapshot {
	b.Helper()
	snap, err := capture.Capture(context.Background(), client(b, cluster(b).brokers), capture.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return snap
}

// BenchmarkPut is encoding, compression, checksum and the write of one
// snapshot into a file store.
func BenchmarkPut(b *testing.B) {
	snap := captured(b)
	st := fileStore(b)
	ctx := context.Background()
	var info snapshot.Info
	for b.Loop() {
		snap.ID, snap.CreatedAt = "", time.Time{}
		var err error
		if info, err = st.Snapshots().Put(ctx, snap); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.Size), "stored-bytes")
}

// BenchmarkEncode is Snapshot.Encode alone, to io.Discard.
func BenchmarkEncode(b *testing.B) {
	snap := captured(b)
	var n countWriter
	for b.Loop() {
		n = 0
		if err := snap.Encode(&n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "doc-bytes")
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// BenchmarkGet is reading, verifying and decoding one stored snapshot, as
// restore, show and verify do.
func BenchmarkGet(b *testing.B) {
	snap := captured(b)
	st := fileStore(b)
	ctx := context.Background()
	info, err := st.Snapshots().Put(ctx, snap)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := st.Snapshots().GetWith(ctx, info.ID, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.Size), "stored-bytes")
}

// requestCounter counts the requests a client writes, by API key and
// broker.
type requestCounter struct {
	mu sync.Mutex
	n  map[int16]map[int32]int
}

func (r *requestCounter) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[int16]map[int32]int{}
	}
	if r.n[key] == nil {
		r.n[key] = map[int32]int{}
	}
	r.n[key][meta.NodeID]++
}

// total and perBroker return the count of key's requests, and the most
// any one broker received.
func (r *requestCounter) total(key kmsg.Key) (total, perBroker int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.n[int16(key)] {
		total += n
		perBroker = max(perBroker, n)
	}
	return total, perBroker
}

// BenchmarkCaptureSinkGroups captures the sink groups with an empty
// offsets topic, and reports the broker requests of each kind one capture
// makes (OffsetFetch is batched per coordinator: with 3 brokers, 3, never
// one per group; DescribeGroups too, for the groups not listed Empty: the
// bench cluster's groups have no members, so none).
func BenchmarkCaptureSinkGroups(b *testing.B) {
	bc := cluster(b)
	admin := client(b, bc.brokers)
	ctx := context.Background()
	const empty = "bench-empty-offsets"
	if err := admin.Ping(ctx); err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = empty, 25, -1
	req.Topics = append(req.Topics, rt)
	if _, err := req.RequestWith(ctx, admin); err != nil {
		b.Fatal(err)
	}
	rc := &requestCounter{}
	var snap *snapshot.Snapshot
	for b.Loop() {
		b.StopTimer()
		// A new client each time: its coordinator cache starts empty, as
		// in the CLI.
		cl := client(b, bc.brokers, kgo.WithHooks(rc))
		b.StartTimer()
		var err error
		if snap, err = capture.Capture(ctx, cl, capture.Options{OffsetsTopics: []string{empty}}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cl.Close()
		b.StartTimer()
	}
	offsets := 0
	for _, g := range snap.SinkGroups {
		offsets += len(g.Offsets)
	}
	b.ReportMetric(float64(len(snap.SinkGroups)), "groups")
	b.ReportMetric(float64(offsets), "group-offsets")
	for _, k := range []kmsg.Key{kmsg.ListGroups, kmsg.FindCoordinator, kmsg.DescribeGroups, kmsg.OffsetFetch} {
		total, per := rc.total(k)
		name := k.Name()
		b.ReportMetric(float64(total)/float64(b.N), name+"/op")
		b.ReportMetric(float64(per)/float64(b.N), name+"-max-per-broker/op")
	}
}

// Snapshot.Encode writes exactly what encoding/json writes for the
// Snapshot (HTML not escaped): its fast path must never change a byte of
// the format. Checked on a capture of DefaultSpec (escapes, raw UTF-8,
// U+2028, binary keys, unparsed keys) plus hand-made edge cases.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	snap, err := capture.Capture(context.Background(), cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID, snap.CreatedAt = "20261130T134920.123456Z-3f9a1c", time.Date(2026, 11, 30, 13, 49, 20, 123456000, time.UTC)
	edge := []snapshot.SourceOffset{
		{Topic: "t", Key: snapshot.Bytes("\x00\x1f\x7f\"\\/<>&\u2028\u2029\b\f\n\r\t é😀"), Value: snapshot.Bytes{}},
		{Topic: "t", Partition: -1, Offset: -1, Key: snapshot.Bytes{0xff, 0xfe, 'a'}, Value: nil, ParseError: "bad \xff key \"x\""},
		{Topic: "t\u2028", Key: snapshot.Bytes(`[1]`), Value: snapshot.Bytes(`{"a": 1}`), Connector: "c<&>",
			SourcePartition: json.RawMessage(`{ "a" : [1, 2] , "b":"x y\u2028" }`), SourceOffset: json.RawMessage(`{"a":"\u00e9"}`)},
	}
	snap.AppendSourceOffsets(edge...)
	// Random keys and values: every escape at every position of the
	// 8-byte words the fast path tests at once, valid UTF-8 or not.
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("abc\x00\x01\x1f \"\\/<>&\x7f\x80\xbf\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80{}[]:,0123456789")
	for range 2000 {
		k, v := make([]byte, rng.IntN(40)), make([]byte, rng.IntN(20))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for i := range v {
			v[i] = alphabet[rng.IntN(len(alphabet))]
		}
		snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: string(v), Key: k, Value: v, ParseError: string(k)})
	}
	snap.SinkGroups = append(snap.SinkGroups, snapshot.SinkGroup{Group: "g\"", State: "Empty", Offsets: []snapshot.SinkOffset{{Topic: "x", Metadata: "m\n"}}},
		snapshot.SinkGroup{Group: "nil-offsets"})
	snap.Warnings = append(snap.Warnings, "w <&> \u2028")
	for _, s := range []*snapshot.Snapshot{snap, {}, (&snapshot.Snapshot{Scope: []string{"a"}}).WithSourceOffsets([]snapshot.SourceOffset{})} {
		// The reference: encoding/json on the Snapshot struct as it was,
		// its source offsets a field (Snapshot.MarshalJSON is Encode).
		want, err := testkit.EncodingJSON(*s, s.SourceTable().Collect())
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := s.Encode(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			g, w := got.Bytes(), want
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("Encode differs from encoding/json at byte %d:\n got: %.300q\nwant: %.300q", i, g[max(0, i-100):], w[max(0, i-100):])
		}
	}
}

// Decode reads documents as Encode writes them through a fast path: it
// must give exactly what encoding/json gives, for those documents and for
// anything else (which it leaves to encoding/json).
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	_, cl, _ := testkit.Seeded(t, connectdemo.DefaultSpec())
	snap, err := capture.Capture(context.Background(), cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20261130T134920.123456Z-3f9a1c"
	snap.SetSourceOffsets(append(snap.SourceTable().Collect(),
		snapshot.SourceOffset{Topic: "t", Key: snapshot.Bytes{0xff, 0}, Value: snapshot.Bytes{}, ParseError: "x\x01"},
		snapshot.SourceOffset{Topic: "t", Partition: -3, Offset: -1 << 62, Key: snapshot.Bytes("\u2028\x7f\"\\é😀"), Value: nil,
			SourcePartition: json.RawMessage(`{"a" : [ 1 ,{"b":null}], "c":"\u00e9"}`)}))
	// More offsets than the decoder collects in one chunk.
	for i := range 5000 {
		snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: "bulk", Partition: int32(i % 7), Offset: int64(i),
			Key: fmt.Appendf(nil, `["bulk",{"n":%d}]`, i), Value: fmt.Appendf(nil, `{"p":%d}`, i), Connector: "bulk"})
	}
	var doc bytes.Buffer
	if err := snap.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	canonical := doc.String()
	docs := []string{
		canonical,
		strings.Replace(canonical, `"source_offsets":[{`, `"source_offsets": [ {`, 1),           // white space: slow path
		strings.Replace(canonical, `"key":"[\"`, `"key":"\u005b\"`, 1),                          // an escape
		strings.Replace(canonical, `"key":"[\"`, `"key":"\ud83d\ude00\ud83d\u0041\ude00x\"`, 1), // surrogates, paired or not
		strings.Replace(canonical, `"key":"[\"`, `"key":"\/\b\f\n\r\t\u0000\"`, 1),
		strings.Replace(canonical, `"value":"{`, "\"value\":\"\xff\xfe{", 1),                // invalid UTF-8
		strings.Replace(canonical, `{"version":1,`, `{"version":1,"Source_Offsets":[],`, 1), // another spelling
		strings.Replace(canonical, `{"version":1,`, `{"version":1,"version":1,`, 1),         // a duplicate
		strings.Replace(canonical, `{"version":1,`, `{"version":2,`, 1),
		strings.Replace(canonical, `{"version":1,`, `{"version":01,`, 1),
		strings.Replace(canonical, `"partition":0,`, `"partition":0.5,`, 1),
		strings.Replace(canonical, `"partition":0,`, `"partition":99999999999,`, 1),
		strings.Replace(canonical, `"topic":"connect-offsets"`, `"topic":"connect-offsets","extra":1`, 1),
		strings.Replace(canonical, `"value":`, `"value":null,"v":`, 1),
		strings.Replace(canonical, `"key":"`, `"key":{"base64":"AAEC"},"k":"`, 1),
		strings.Replace(canonical, `"source_offsets":[`, `"source_offsets":null,"x":[`, 1),
		canonical[:len(canonical)/2],
		canonical + "x",
		`{"version":1,"source_offsets":[]}`,
		`{"source_offsets":[],"version":1}`,
	}
	for i, d := range docs {
		var want snapshot.Snapshot
		wantErr := json.Unmarshal([]byte(d), &want)
		got, err := snapshot.Decode([]byte(d))
		if strings.Contains(d, `"version":2`) {
			wantErr = errors.New("unsupported version")
		}
		switch {
		case (err != nil) != (wantErr != nil):
			t.Errorf("doc %d: Decode error %v, encoding/json error %v", i, err, wantErr)
		case err == nil && !reflect.DeepEqual(got, &want):
			t.Errorf("doc %d: Decode differs from encoding/json", i)
		}
	}
}

// FuzzDecodeMatchesEncodingJSON checks the fast path of Decode against
// encoding/json on arbitrary documents, seeded with documents as Encode
// writes them: Decode must fail exactly when encoding/json fails (or the
// version is not one this build reads) and otherwise give the same
// Snapshot.
//
//	go test -run '^$' -fuzz=FuzzDecodeMatchesEncodingJSON -fuzztime=60s ./snapshot/capture/
func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	doc, err := os.ReadFile("../testdata/v1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add([]byte(`{"version":1,"source_offsets":[{"topic":"t","partition":1,"offset":2,"key":"\ud83d\ude00\ud83dA\"","value":{"base64":"AAE="},"connector":"c","source_partition":{"a":[1]},"source_offset":{"b":2},"parse_error":"e"}]}`))
	f.Add([]byte(`{"version":1,"source_offsets":[],"sink_groups":[{"group":"connect-a\u00e9","connector":"a","state":"Empty","members":0,"offsets":[{"topic":"t","partition":0,"offset":5,"leader_epoch":-1,"metadata":"m\n"},{"topic":"t","partition":1,"offset":0,"leader_epoch":3}]},{"group":"g","state":"Dead","members":2,"offsets":null}],"warnings":["w"]}`))
	f.Add([]byte(`{"sink_groups":null,"version":1,"source_offsets":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var want snapshot.Snapshot
		wantErr := json.Unmarshal(data, &want)
		if wantErr == nil && (want.Version < snapshot.MinVersion || want.Version > snapshot.Version) {
			wantErr = errors.New("version")
		}
		got, err := snapshot.Decode(data)
		if (err != nil) != (wantErr != nil) {
			// encoding/json reads a version it cannot place as 0; Decode
			// reports the document as corrupt or of another version.
			if wantErr == nil || err == nil {
				t.Fatalf("Decode error %v, encoding/json error %v", err, wantErr)
			}
		}
		if err == nil && !reflect.DeepEqual(got, &want) {
			t.Fatalf("Decode differs from encoding/json:\n got %+v\nwant %+v", got.SourceTable().Collect(), want.SourceTable().Collect())
		}
	})
}
