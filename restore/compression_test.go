package restore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/offsetkeeper/offsetkeeper/internal/testkit"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// A restore writes its offsets topic batches uncompressed unless
// Options.Compression says otherwise (as Connect's own offsets producer,
// compression.type none); a drill's zstd is what the brokers receive.
func TestRestoreCompression(t *testing.T) {
	const keys = 200
	for _, tc := range []struct {
		name  string
		codec kgo.CompressionCodec
		want  int8 // the codec bits of a record batch's attributes
	}{
		{"default", kgo.CompressionCodec{}, 0},
		{"zstd", kgo.ZstdCompression(), 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			kc, cl := testkit.Cluster(t)
			// Enough keys for batches that compress (kgo sends a batch
			// that does not shrink uncompressed).
			snap := smallSnapshot(t, cl)
			snap.SetSourceOffsets(nil)
			for i := range keys {
				key := []byte(fmt.Sprintf(`["c1",{"file":"/data/in/part-%04d.log"}]`, i))
				snap.AppendSourceOffsets(snapshot.SourceOffset{Topic: snapshot.DefaultOffsetsTopic,
					Partition: snapshot.PartitionFor(key, 4), Key: key, Value: []byte(fmt.Sprintf(`{"position":%d}`, 1000+i)), Connector: "c1"})
			}
			td, err := kadm.NewClient(cl).ListTopics(ctx, snapshot.DefaultOffsetsTopic)
			if err != nil {
				t.Fatal(err)
			}
			id := td[snapshot.DefaultOffsetsTopic].ID // Produce v13+ names a topic by its ID
			var mu sync.Mutex
			seen := map[int8]int{}
			kc.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
				kc.KeepControl()
				for _, rt := range req.(*kmsg.ProduceRequest).Topics {
					if rt.Topic != snapshot.DefaultOffsetsTopic && rt.TopicID != id {
						continue
					}
					for _, rp := range rt.Partitions {
						var b kmsg.RecordBatch
						if err := b.ReadFrom(rp.Records); err != nil {
							t.Errorf("a produced batch does not read: %v", err)
							continue
						}
						mu.Lock()
						seen[int8(b.Attributes&7)]++
						mu.Unlock()
					}
				}
				return nil, nil, false // observed only: the broker handles it
			})
			sto, err := store.OpenStore(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer sto.Close()
			req := restore.Request{Snapshot: snap}
			req.Compression = tc.codec
			rep, err := restore.Run(ctx, restore.Env{Client: cl, Store: sto}, req)
			if err != nil || rep.Verified == nil || rep.Applied == nil || rep.Applied.SourceWrites != keys {
				t.Fatalf("Run: %v, report %+v", err, rep)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || seen[tc.want] == 0 {
				t.Fatalf("batch codecs produced to %s: %v, want only %d", snapshot.DefaultOffsetsTopic, seen, tc.want)
			}
		})
	}
}
