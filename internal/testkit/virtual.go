package testkit

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// VirtualSeeded is Seeded on kfake's in-memory network (VirtualNetwork),
// for a test inside a testing/synctest bubble: the bubble's clock moves
// only while every goroutine in it waits on something of the bubble, which
// a read from a TCP socket is not, and a pipe of the virtual network is.
// So a test that must let time pass (a record stamped ahead, an interval)
// sleeps in fake time, at once. Call it inside synctest.Test.
//
// The brokers' ports are the virtual network's own (no socket is opened),
// so they are fixed; every client of the cluster must dial through the
// returned client's Dialer (connectdemo's clients copy it).
func VirtualSeeded(t *testing.T, spec connectdemo.Spec) (*kfake.Cluster, *kgo.Client, *connectdemo.Expected) {
	t.Helper()
	vn := new(kfake.VirtualNetwork)
	c, err := connectdemo.NewCluster(kfake.ListenFn(vn.Listen), kfake.Ports(9092, 9093, 9094))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := Client(t, c, kgo.Dialer(vn.DialContext))
	exp, err := connectdemo.Seed(t.Context(), cl, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exp.Stop)
	return c, cl, exp
}
