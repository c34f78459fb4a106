package drill

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// benchState is a state shaped as bench/cluster seeds it: keys source
// keys of 1,000 FileStreamSource connectors over 25 partitions, and groups
// sink groups of 50 partitions each.
func benchState(keys, groups int) *snapshot.Snapshot {
	const parts = 25
	s := &snapshot.Snapshot{Version: snapshot.Version, ID: snapshot.NewID(time.Now()), CreatedAt: time.Now().UTC(), ClusterID: "bench",
		Topics: []snapshot.Topic{{Name: snapshot.DefaultOffsetsTopic, Role: snapshot.RoleOffsets, Partitions: make([]snapshot.TopicPartition, parts)}}}
	for c := range 1000 {
		s.Connectors = append(s.Connectors, snapshot.Connector{Name: fmt.Sprintf("file-bulk-%04d", c), Type: snapshot.TypeSource, TargetState: "STOPPED", HasConfig: true})
	}
	for i := range keys {
		conn := fmt.Sprintf("file-bulk-%04d", i%1000)
		key := []byte(fmt.Sprintf(`["%s",{"filename":"/data/bulk/%s/part-%06d.log"}]`, conn, conn, i/1000))
		p := snapshot.PartitionFor(key, parts)
		s.AppendSourceOffsets(snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic, Partition: p, Offset: int64(i),
			Key: key, Value: []byte(fmt.Sprintf(`{"position":%d}`, 100000000+i)), Connector: conn})
	}
	for g := range groups {
		conn := fmt.Sprintf("bulk-sink-%04d", g)
		s.Connectors = append(s.Connectors, snapshot.Connector{Name: conn, Type: snapshot.TypeSink, TargetState: "STOPPED", HasConfig: true})
		sg := snapshot.SinkGroup{Group: "connect-" + conn, Connector: conn, State: "Empty"}
		for p := range int32(50) {
			sg.Offsets = append(sg.Offsets, snapshot.SinkOffset{Topic: "bench-sink-data", Partition: p, Offset: int64(1000 + g), LeaderEpoch: -1})
		}
		s.SinkGroups = append(s.SinkGroups, sg)
	}
	return s
}

// peakHeap samples the heap every 5 ms until stop is called, and returns
// the largest live heap (what the last collection kept) and the largest
// heap in use (live and garbage not collected yet, which the soft memory
// limit of the command bounds).
func peakHeap() (stop func() (live, inuse uint64)) {
	var (
		live, inuse uint64
		done        = make(chan struct{})
		wg          sync.WaitGroup
	)
	wg.Add(1)
	profile := os.Getenv("OFFSETKEEPER_PEAK_HEAP_PROFILE")
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer wg.Done()
		for {
			metrics.Read(s)
			if l := s[0].Value.Uint64(); l > live+1<<20 && profile != "" {
				writeHeapProfile(profile)
			}
			live, inuse = max(live, s[0].Value.Uint64()), max(inuse, s[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		return live, inuse
	}
}

// writeHeapProfile writes the heap profile as of the last collection
// (what it kept) to path.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}

// BenchmarkDrillPeakHeap drills a stored snapshot of 200,000 source keys
// and 100,000 sink offsets (bench/cluster's 400k records), read as the
// drill command reads it, into the embedded scratch cluster, and reports
// the peak heap in use during the drill beside the heap the state alone
// holds (live: what a collection kept; objects: with the garbage not yet
// collected). docs/benchmarks.md has the figures; run it with
//
//	go test -run '^$' -bench DrillPeakHeap -benchtime 3x ./restore/drill/
func BenchmarkDrillPeakHeap(b *testing.B) {
	ctx := b.Context()
	st, err := store.OpenStore(ctx, "file://"+filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	info, err := st.Snapshots().Put(ctx, benchState(200_000, 2000))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var req Request
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := ReadSnapshot(ctx, st, info.ID, &req); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var held runtime.MemStats
		runtime.ReadMemStats(&held)
		req.SkipComplete, req.ToolVersion = "bench", "bench"
		stop := peakHeap()
		rep, err := Run(ctx, Env{}, req)
		live, inuse := stop()
		if err != nil || rep.Result != Passed {
			b.Fatalf("drill: %v %+v", err, rep)
		}
		mib := func(n uint64) float64 { return (float64(n) - float64(before.HeapAlloc)) / (1 << 20) }
		b.Logf("state %.1f MiB, peak live %.1f MiB, peak objects %.1f MiB", mib(held.HeapAlloc), mib(live), mib(inuse))
		b.ReportMetric(mib(held.HeapAlloc), "state-MiB")
		b.ReportMetric(mib(live), "peak-live-MiB")
		b.ReportMetric(mib(inuse), "peak-objects-MiB")
	}
}
