package connectdemo

import (
	"context"
	"testing"
	"time"
)

// BenchmarkSeedBulk seeds DefaultSpec plus 400k bulk source partitions.
func BenchmarkSeedBulk(b *testing.B) {
	for range b.N {
		c, err := NewCluster()
		if err != nil {
			b.Fatal(err)
		}
		cl := newTestClient(b, c.ListenAddrs())
		spec := DefaultSpec()
		spec.ExtraFileConnectors, spec.FilesPerConnector = 1000, 400
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		exp, err := Seed(ctx, cl, spec)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(exp.Records), "records/op")
		cl.Close()
		c.Close()
	}
}
