package snapshot

import (
	"math/rand"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The verified vectors of docs/connect-offsets.md, and agreement with
// franz-go's default (Java-compatible) partitioner on random keys.
func TestPartitionFor(t *testing.T) {
	for _, tc := range []struct {
		key  string
		n    int32
		want int32
	}{
		{`["source-file-01",{"filename":"/data/testdata.txt"}]`, 25, 20},
		{`["inventory-connector",{"server":"dbserver1"}]`, 25, 11},
		{`["inventory-connector",{"server":"server1"}]`, 25, 8},
	} {
		if got := PartitionFor([]byte(tc.key), tc.n); got != tc.want {
			t.Errorf("PartitionFor(%s, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
	p := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		key := make([]byte, rng.Intn(64))
		rng.Read(key)
		n := int32(1 + rng.Intn(100))
		want := int32(p.Partition(&kgo.Record{Key: key}, int(n)))
		if got := PartitionFor(key, n); got != want {
			t.Fatalf("key %x over %d: got %d, franz-go says %d", key, n, got, want)
		}
	}
}
