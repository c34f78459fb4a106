// Package testkit is what tests across the module share to set their world
// up: a kfake cluster and a client of it (Cluster; Kfake and Client for a
// bare one), seeded with
// Connect-shaped data (Seeded), records written synchronously (Produce), a certificate
// authority for TLS tests (CA), and a buffer that a
// program's goroutines write while a test reads it (SyncBuffer).
//
// Every helper registers its cleanup with the test, so a test owns what it
// starts and nothing outlives it.
package testkit

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// Cluster starts a kfake cluster (connectdemo's: three brokers, Connect's
// topics) and returns it and a client of it; both close with the test.
func Cluster(t testing.TB, opts ...kfake.Opt) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, err := connectdemo.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, Client(t, c)
}

// Kfake starts a bare kfake cluster with opts (kfake's defaults: no
// topics), for tests of the client's settings or of a cluster's own
// behaviour; it closes with the test.
func Kfake(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Client is a client of c, closed with the test.
func Client(t testing.TB, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Seeded is Cluster seeded with spec: it also returns what was written.
// The seeder's running connectors stop with the test.
func Seeded(t testing.TB, spec connectdemo.Spec, opts ...kfake.Opt) (*kfake.Cluster, *kgo.Client, *connectdemo.Expected) {
	t.Helper()
	c, cl := Cluster(t, opts...)
	// The seeder's members run on the test's context: a sink group keeps
	// its members until the test ends.
	exp, err := connectdemo.Seed(t.Context(), cl, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	return c, cl, exp
}

// Produce writes rs and fails the test on the first error.
func Produce(t testing.TB, cl *kgo.Client, rs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// SyncBuffer is a bytes.Buffer safe for one writer goroutine and readers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
