package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Leader election defaults.
const (
	// DefaultLeaderTopic is the one-partition topic the replicas' group
	// subscribes to; the member assigned its partition 0 leads.
	DefaultLeaderTopic = "__offsetkeeper_leader"
	// DefaultSessionTimeout is the group session timeout: how long a leader
	// that stopped heartbeating keeps the lead before another replica takes over.
	DefaultSessionTimeout = 10 * time.Second
	// leaderGroupPrefix starts the group name DefaultLeaderGroup derives.
	leaderGroupPrefix = "offsetkeeper-leader-"
)

// ErrLeaderElection is returned by Run, wrapped, when the daemon cannot
// join leader election (the leader topic is missing and cannot be created,
// or the group cannot be joined): without it no replica would ever lead.
var ErrLeaderElection = errors.New("join leader election")

// LeaderConfig configures leader election through a Kafka consumer group.
type LeaderConfig struct {
	// Enabled turns election on. When off the daemon always leads, and two
	// daemons on one store both take snapshots.
	Enabled bool
	// Group is the consumer group the replicas join. Replicas elect one
	// leader only when they use the same Group; see DefaultLeaderGroup.
	// Required when Enabled.
	Group string
	// Topic is the topic the group subscribes to, created with one
	// partition if missing. Default DefaultLeaderTopic.
	Topic string
	// SessionTimeout is the group session timeout (Kafka's
	// session.timeout.ms); it must lie within the brokers'
	// group.min/max.session.timeout.ms. Default DefaultSessionTimeout. The
	// heartbeat interval is a third of it, at most 3s.
	SessionTimeout time.Duration
	// ClientOpts reach the cluster: seed brokers, TLS, SASL. The daemon
	// adds the group options and owns the client it builds from them.
	// Required when Enabled.
	ClientOpts []kgo.Opt
}

// DefaultLeaderGroup derives a group name from the store URL, so replicas
// writing to the same store elect one leader: "offsetkeeper-leader-" and
// the first 12 hex digits of the URL's SHA-256. Replicas must spell the URL
// identically; set the group explicitly when in doubt.
func DefaultLeaderGroup(storeURL string) string {
	sum := sha256.Sum256([]byte(storeURL))
	return leaderGroupPrefix + hex.EncodeToString(sum[:6])
}

func (c LeaderConfig) topic() string {
	if c.Topic == "" {
		return DefaultLeaderTopic
	}
	return c.Topic
}

func (c LeaderConfig) sessionTimeout() time.Duration {
	if c.SessionTimeout <= 0 {
		return DefaultSessionTimeout
	}
	return c.SessionTimeout
}

// leadership is this daemon's current right to take snapshots. Each term
// has an epoch and a context canceled when the term ends; a run started in
// one term stores nothing once the term is over.
type leadership struct {
	mu      sync.Mutex
	leading bool
	epoch   uint64
	ctx     context.Context
	cancel  context.CancelFunc
	// gained receives a value each time a term begins (buffered, lossy).
	gained chan struct{}
	// inflight counts runs started in any term and not yet finished.
	inflight atomic.Int64
	// onChange is called, under mu, when leading changes.
	onChange func(leading bool)
}

// endWait bounds how long a revoked term waits for its run to stop.
const endWait = 10 * time.Second

func newLeadership(onChange func(bool)) *leadership {
	return &leadership{gained: make(chan struct{}, 1), onChange: onChange}
}

// begin starts a term unless one is running.
func (l *leadership) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leading {
		return
	}
	l.epoch++
	l.leading = true
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.onChange(true)
	select {
	case l.gained <- struct{}{}:
	default:
	}
}

// end ends the current term, cancels its runs and waits, up to wait, for
// them to stop, so that a replica taking over after a clean handover never
// overlaps with a run of ours.
func (l *leadership) end(wait time.Duration) {
	l.mu.Lock()
	if !l.leading {
		l.mu.Unlock()
		return
	}
	l.leading = false
	l.cancel()
	l.onChange(false)
	l.mu.Unlock()
	deadline := time.Now().Add(wait)
	for l.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// start returns the current term's context and epoch and counts a run as
// in flight; done must be called when it ends. ok is false when not leading.
func (l *leadership) start() (ctx context.Context, epoch uint64, done func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.leading {
		return nil, 0, nil, false
	}
	l.inflight.Add(1)
	return l.ctx, l.epoch, func() { l.inflight.Add(-1) }, true
}

// holds reports whether the term epoch is still running.
func (l *leadership) holds(epoch uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leading && l.epoch == epoch
}

func (l *leadership) isLeading() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leading
}

// elect joins the leader group and ensures its topic exists. Terms begin
// when partition 0 of the topic is assigned to this member and end when it
// is revoked or lost, or when the returned client is closed (which leaves
// the group, handing over at once).
func elect(ctx context.Context, cfg LeaderConfig, l *leadership, log *slog.Logger) (*kgo.Client, error) {
	if cfg.Group == "" {
		return nil, fmt.Errorf("%w: no group given", ErrLeaderElection)
	}
	if len(cfg.ClientOpts) == 0 {
		return nil, fmt.Errorf("%w: no Kafka client options given", ErrLeaderElection)
	}
	topic := cfg.topic()
	session := cfg.sessionTimeout()
	heartbeat := min(3*time.Second, session/3)
	holdsZero := func(m map[string][]int32) bool { return slices.Contains(m[topic], 0) }
	opts := append(slices.Clone(cfg.ClientOpts),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(topic),
		kgo.SessionTimeout(session),
		kgo.HeartbeatInterval(heartbeat),
		kgo.DisableAutoCommit(),
		// Cooperative-sticky leaves partition 0 where it is when a replica
		// joins, so a new replica never steals the lead.
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if holdsZero(m) {
				l.begin()
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if holdsZero(m) {
				l.end(endWait)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			// Lost may come without a map entry for what we held (a fatal
			// group error before we joined): end the term regardless.
			l.end(endWait)
		}),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: create client for group %q: %w", ErrLeaderElection, cfg.Group, err)
	}
	if err := ensureTopic(ctx, kadm.NewClient(cl), topic); err != nil {
		cl.Close()
		return nil, err
	}
	log.Info("joined leader election", "group", cfg.Group, "topic", topic, "session_timeout", session)
	return cl, nil
}

// ensureTopic creates the one-partition leader topic, or checks that it
// exists when creating it fails (no CREATE permission, say). A missing
// topic is an error: without it no replica would ever lead, silently.
func ensureTopic(ctx context.Context, adm *kadm.Client, topic string) error {
	_, err := adm.CreateTopic(ctx, 1, -1, nil, topic)
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		return nil
	}
	details, lerr := adm.ListTopics(ctx, topic)
	if lerr == nil && details.Has(topic) {
		if d := details[topic]; d.Err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: create leader topic %q: %w", ErrLeaderElection, topic, err)
}
