package kafkaconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Connect creates a client from c's options and extra ones after them, and
// checks that a broker answers and accepts the credentials by requesting
// cluster metadata, within RetryTimeout (and ctx); a refused connection is
// retried until RetryTimeout runs out, as brokers restart. On failure it closes the
// client and returns an error that names the brokers and, as DescribeError
// does, what to check; SASL failures are recognised even when a broker
// answers them by closing the connection. The client returned retries a
// connection closed on its first request (kgo.AlwaysRetryEOF): once a broker
// has answered, that is a network event, not a wrong setting. The caller
// closes the client.
func (c Config) Connect(ctx context.Context, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := c.Opts()
	if err != nil {
		return nil, err
	}
	h := new(saslHook)
	opts = append(opts, kgo.WithHooks(h))
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("create Kafka client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, c.retryTimeout())
	defer cancel()
	if err := c.pingUntil(pctx, cl); err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect to Kafka brokers %s: %w", strings.Join(c.Brokers, ","), ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v: %w", c.retryTimeout(), err)
		}
		if refused(err) {
			err = fmt.Errorf("kept trying for %v (--kafka-timeout): %w", c.retryTimeout(), err)
		}
		return nil, fmt.Errorf("connect to Kafka brokers %s: %w", strings.Join(c.Brokers, ","), c.describeConnectError(h, err))
	}
	// The brokers answered, so the address, TLS and SASL settings are
	// right: from now on a connection closed on its first request is a
	// broker restarting or a network blip, not a misconfiguration. kgo does
	// not retry that by default (it suspects missing SASL or TLS), which
	// failed a whole snapshot on one dropped connection; the client handed
	// out retries it, within RetryTimeout.
	cl.Close()
	cl, err = kgo.NewClient(append(append(opts, extra...), kgo.AlwaysRetryEOF())...)
	if err != nil {
		return nil, fmt.Errorf("create Kafka client: %w", err)
	}
	return cl, nil
}

// pingUntil pings until a broker answers, retrying a refused or reset
// connection (a broker restarting, the only bootstrap address down for a
// moment) until ctx is done, with a backoff from 100ms to 1s. kgo gives up
// on a refused seed broker at once. It calls c.StillTrying once, after
// c.StillTryingAfter of refusals. It returns the last error.
func (c Config) pingUntil(ctx context.Context, cl *kgo.Client) error {
	backoff := 100 * time.Millisecond
	began, told := time.Now(), c.StillTrying == nil
	for {
		err := cl.Ping(ctx)
		if err == nil || !refused(err) {
			return err
		}
		if waited := time.Since(began); !told && waited >= cmpOr(c.StillTryingAfter, DefaultStillTryingAfter) {
			c.StillTrying(waited, err)
			told = true
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// refused reports whether err is a connection refused or reset by the
// peer's host: nothing listens there now.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// saslHook remembers the last error on a SASL request, so that a broker that
// closes the connection on bad credentials (instead of answering
// SASL_AUTHENTICATION_FAILED) is reported as a SASL failure.
type saslHook struct {
	last atomic.Pointer[saslFailure]
}

type saslFailure struct {
	addr string
	err  error
}

var _ kgo.HookBrokerE2E = (*saslHook)(nil)

func (h *saslHook) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if key != int16(kmsg.SASLHandshake) && key != int16(kmsg.SASLAuthenticate) {
		return
	}
	if err := e2e.Err(); err != nil {
		h.last.Store(&saslFailure{addr: net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port)), err: err})
	}
}

// describeConnectError is DescribeError with what Connect knows besides err:
// a failed SASL exchange, and whether TLS is on.
func (c Config) describeConnectError(h *saslHook, err error) error {
	if f := h.last.Load(); f != nil && !isTimeout(err) {
		if d := DescribeError(err); errors.Is(d, ErrSASL) {
			return d
		}
		return describe(ErrSASL, err, "broker %s closed the connection during SASL %s authentication as user %q: check --sasl-username and --sasl-password (or --sasl-password-file) and --sasl-mechanism",
			f.addr, strings.ToUpper(c.SASL.Mechanism), c.SASL.Username)
	}
	d := DescribeError(err)
	if isTimeout(err) && c.TLS.tlsOn() && !errors.Is(d, ErrTLS) {
		return describe(ErrUnreachable, err, "the Kafka brokers did not answer in time: check --brokers, and that the port is a TLS listener (--tls is on)")
	}
	return d
}
