package kafkaconf

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// freePort reserves a local port and frees it for a cluster to bind later.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestConnectWaitsForBrokers: a rolling restart with one bootstrap address
// refused the first connection and Connect gave up at once; it now keeps
// trying a refused connection until RetryTimeout runs out.
func TestConnectWaitsForBrokers(t *testing.T) {
	port := freePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	// The cluster starts only once Connect has been refused and said it
	// is still trying, so a connection proves that it waited.
	var told atomic.Bool
	refusedOnce := make(chan bool, 1)
	started := make(chan *kfake.Cluster, 1)
	go func() {
		if !<-refusedOnce {
			started <- nil
			return
		}
		// Not testkit.Kfake: the cluster starts late, on a port chosen
		// before it, in a goroutine (where t.Fatal may not be called), and
		// closes in the cleanup after the refusal is told.
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port))
		if err != nil {
			t.Error(err)
		}
		started <- c
	}()
	t.Cleanup(func() {
		if !told.Load() {
			refusedOnce <- false
		}
		if c := <-started; c != nil {
			c.Close()
		}
	})
	cfg := Config{Brokers: []string{addr}, RetryTimeout: 60 * time.Second, StillTryingAfter: time.Nanosecond,
		StillTrying: func(waited time.Duration, err error) {
			if !refused(err) {
				t.Errorf("StillTrying with %v, not a refused connection", err)
			}
			if !told.Swap(true) {
				refusedOnce <- true
			}
		}}
	mustConnect(t, cfg)
	if !told.Load() {
		t.Fatal("connected without a refusal first: the test did not exercise the wait")
	}
}

// TestConnectRefusedUntilTimeout: an address nothing listens on fails once
// RetryTimeout has run out, saying what was tried for how long.
func TestConnectRefusedUntilTimeout(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	began := time.Now()
	var calls atomic.Int32
	cl, err := Config{Brokers: []string{addr}, RetryTimeout: 2 * time.Second, StillTryingAfter: time.Nanosecond,
		StillTrying: func(time.Duration, error) { calls.Add(1) }}.Connect(testContext(t))
	if err == nil {
		cl.Close()
		t.Fatal("Connect succeeded")
	}
	if d := time.Since(began); d < 2*time.Second {
		t.Errorf("gave up after %v, before the 2s retry timeout", d)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("StillTrying called %d times, want once", n)
	}
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("error %q does not match ErrUnreachable", err)
	}
	for _, w := range []string{addr, "--brokers", "2s", "--kafka-timeout"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
