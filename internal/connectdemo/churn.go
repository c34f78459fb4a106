package connectdemo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Churn makes a seeded cluster look alive, for the demo: every interval it
// advances the offsets of up to 10 source partitions of each running
// (STARTED, with a Counter) source connector of spec, writing the way the
// worker would (a transaction on its own topic plus a plain secondary
// write for exactly-once connectors), and moves every Active group forward
// by a few freshly produced records, except the group with a live member.
// It starts from the values spec wrote, so it belongs after Seed(spec). It
// returns nil once ctx is done, or the first write error. What Seed
// returned as Expected no longer holds once Churn has written.
func Churn(ctx context.Context, cl *kgo.Client, spec Spec, every time.Duration) error {
	return ChurnWith(ctx, cl, spec, every, ChurnOptions{})
}

// ChurnOptions refine Churn.
type ChurnOptions struct {
	// Leave, if set, is asked once per tick which connectors to leave
	// alone (those stopped, reset or restored through a Connect REST API,
	// say). A source connector, or a sink connector's group, it names is
	// not written again, even once it runs again: the churner cannot know
	// where a resumed connector would carry on from.
	Leave func() map[string]bool
	// Notify, if set, is told in a sentence when connectors pause because
	// a topic they write to is gone (deleted under the demo), and when they
	// continue because it is back. Without it, a missing topic still only
	// pauses them.
	Notify func(msg string)
}

// ChurnWith is Churn with options.
func ChurnWith(ctx context.Context, cl *kgo.Client, spec Spec, every time.Duration, opts ChurnOptions) error {
	if every <= 0 {
		return fmt.Errorf("churn: interval must be positive, got %v", every)
	}
	spec = spec.withDefaults()
	ch, err := newChurner(cl, spec)
	if err != nil {
		return err
	}
	ch.leave, ch.notify = opts.Leave, opts.Notify
	defer ch.close()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := ch.tick(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// A topic deleted during the tick: the next one pauses what
			// writes to it (the brokers may answer the produce before
			// their metadata says it is gone). Anything else ends the
			// churn.
			gone, lerr := ch.look(ctx)
			missing := errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID)
			if !missing && (lerr != nil || len(gone) == 0) {
				return err
			}
			ch.reset()
		}
	}
}

type churnSource struct {
	conn    Connector
	topic   string // primary offsets topic
	txnID   string // for exactly-once connectors
	counter *regexp.Regexp
	keys    []string
	values  map[string][]byte
}

type churner struct {
	spec    Spec
	rng     *rand.Rand
	s       *seeder // reused for its clients and produce checks
	adm     *kadm.Client
	sources []*churnSource
	groups  []Group
	leave   func() map[string]bool
	retired map[string]bool // connectors Leave named once
	notify  func(string)
	// gone are the topics written to that were missing at the last look.
	gone map[string]bool
}

func newChurner(cl *kgo.Client, spec Spec) (*churner, error) {
	ch := &churner{
		spec: spec,
		rng:  rand.New(rand.NewPCG(uint64(spec.Seed), 0x636875726e)),
		adm:  kadm.NewClient(cl),
		s:    newChurnSeeder(cl),
		gone: map[string]bool{},
	}
	byName := map[string]*churnSource{}
	for _, c := range append(append([]Connector{}, spec.Connectors...), bulkConnectors(spec)...) {
		if !c.HasConfig || c.Type != TypeSource || c.TargetState != StateStarted || c.Counter == "" {
			continue
		}
		src := &churnSource{
			conn:    c,
			topic:   spec.Topics.Offsets,
			counter: regexpFor(c.Counter),
			values:  map[string][]byte{},
		}
		if c.OffsetsTopic != "" {
			src.topic = c.OffsetsTopic
		}
		if c.ExactlyOnce != "" {
			src.txnID = spec.WorkerGroupID + "-" + c.Name + "-0"
		}
		byName[c.Name] = src
		ch.sources = append(ch.sources, src)
	}
	// The values spec leaves behind, last committed write wins.
	apply := func(b Batch) {
		if b.Abort {
			return
		}
		for _, r := range b.Records {
			src := byName[r.Connector]
			if src == nil || r.Topic != src.topic {
				continue
			}
			key := string(r.Key)
			if _, seen := src.values[key]; !seen {
				src.keys = append(src.keys, key)
			}
			src.values[key] = r.Value
		}
	}
	for _, b := range spec.Writes {
		apply(b)
	}
	for b := range bulkBatches(spec) {
		apply(b)
	}
	for _, src := range ch.sources { // drop tombstoned and counter-less keys
		keys := src.keys[:0]
		for _, k := range src.keys {
			if v := src.values[k]; v != nil && src.counter.Match(v) {
				keys = append(keys, k)
			}
		}
		src.keys = keys
	}
	for _, g := range spec.Groups {
		if g.Active && !(g.Live && spec.LiveSinkMember) {
			g.Offsets = append([]GroupOffset(nil), g.Offsets...)
			ch.groups = append(ch.groups, g)
		}
	}
	return ch, nil
}

func newChurnSeeder(cl *kgo.Client) *seeder {
	return &seeder{cl: cl, parts: map[string]int32{}, exp: &Expected{Live: map[string]map[int32]map[string][]byte{}}, txn: map[string]*kgo.Client{},
		// A topic deleted under the demo fails its records at once (the
		// next tick pauses what writes there), not after kgo's retries.
		opts: []kgo.Opt{kgo.UnknownTopicRetries(1)}}
}

func (ch *churner) close() { ch.s.close() }

// reset makes the producers anew: a topic deleted and created again may
// have another partition count, and a transaction cut short by a deleted
// topic leaves its producer unusable.
func (ch *churner) reset() {
	cl := ch.s.cl
	ch.s.close()
	ch.s = newChurnSeeder(cl)
}

// topics are the topics a churner writes to: the offsets topics of its
// sources and the data topics of its groups.
func (ch *churner) topics() []string {
	set := map[string]bool{}
	for _, src := range ch.sources {
		set[src.topic] = true
		if src.txnID != "" {
			set[ch.spec.Topics.Offsets] = true
		}
	}
	for _, g := range ch.groups {
		for _, o := range g.Offsets {
			set[o.Topic] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// look finds which topics written to are missing now, tells Notify what
// pauses and what continues, and returns the missing ones.
func (ch *churner) look(ctx context.Context) (map[string]bool, error) {
	topics := ch.topics()
	td, err := ch.adm.ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	gone := map[string]bool{}
	for _, t := range topics {
		if d, ok := td[t]; !ok || d.Err != nil || len(d.Partitions) == 0 {
			gone[t] = true
		}
	}
	var paused, back []string
	for _, t := range topics {
		switch {
		case gone[t] && !ch.gone[t]:
			paused = append(paused, t)
		case !gone[t] && ch.gone[t]:
			back = append(back, t)
		}
	}
	if len(back) > 0 {
		ch.reset()
	}
	if ch.notify != nil {
		for _, t := range paused {
			ch.notify(fmt.Sprintf("topic %s does not exist (deleted?): %s paused, writing nothing until it is back", t, strings.Join(ch.writers(t), ", ")))
		}
		for _, t := range back {
			ch.notify(fmt.Sprintf("topic %s is back: %s continue", t, strings.Join(ch.writers(t), ", ")))
		}
	}
	ch.gone = gone
	return gone, nil
}

// writers names what writes to topic: connectors, and the groups of sinks.
func (ch *churner) writers(topic string) []string {
	var out []string
	for _, src := range ch.sources {
		if src.topic == topic || src.txnID != "" && topic == ch.spec.Topics.Offsets {
			out = append(out, "connector "+src.conn.Name)
		}
	}
	for _, g := range ch.groups {
		if slices.ContainsFunc(g.Offsets, func(o GroupOffset) bool { return o.Topic == topic }) {
			out = append(out, "group "+g.Name)
		}
	}
	return out
}

func (ch *churner) tick(ctx context.Context) error {
	gone, err := ch.look(ctx)
	if err != nil {
		return err
	}
	if ch.leave != nil {
		if ch.retired == nil {
			ch.retired = map[string]bool{}
		}
		for name := range ch.leave() {
			ch.retired[name] = true
		}
	}
	for _, src := range ch.sources {
		if len(src.keys) == 0 || ch.retired[src.conn.Name] || gone[src.topic] || src.txnID != "" && gone[ch.spec.Topics.Offsets] {
			continue
		}
		var rs []Record
		for range min(10, len(src.keys)) {
			key := src.keys[ch.rng.IntN(len(src.keys))]
			v := bump(src.counter, src.values[key], 1+ch.rng.Int64N(500))
			src.values[key] = v
			rs = append(rs, Record{Topic: src.topic, Key: []byte(key), Value: v, Connector: src.conn.Name})
		}
		if src.txnID == "" {
			if err := ch.s.write(ctx, Batch{Records: rs}); err != nil {
				return err
			}
			continue
		}
		if err := ch.s.write(ctx, Batch{TransactionalID: src.txnID, Records: rs}); err != nil {
			return err
		}
		if src.topic != ch.spec.Topics.Offsets { // best-effort secondary copy
			sec := make([]Record, len(rs))
			for i, r := range rs {
				r.Topic = ch.spec.Topics.Offsets
				sec[i] = r
			}
			if err := ch.s.write(ctx, Batch{Records: sec}); err != nil {
				return err
			}
		}
	}
	if err := ch.s.flush(ctx); err != nil {
		return err
	}
	for gi := range ch.groups {
		g := &ch.groups[gi]
		if g.Connector != "" && ch.retired[g.Connector] || slices.ContainsFunc(g.Offsets, func(o GroupOffset) bool { return gone[o.Topic] }) {
			continue
		}
		var data []*kgo.Record
		for i := range g.Offsets {
			o := &g.Offsets[i]
			n := 1 + ch.rng.IntN(5)
			for range n {
				data = append(data, &kgo.Record{Topic: o.Topic, Partition: o.Partition, Value: []byte(`{"churn":true}`)})
			}
			o.Offset += int64(n)
		}
		c, err := ch.s.client(ctx, "", true)
		if err != nil {
			return err
		}
		if err := c.ProduceSync(ctx, data...).FirstErr(); err != nil {
			return fmt.Errorf("produce data for group %q: %w", g.Name, err)
		}
		if err := commitGroup(ctx, ch.adm, g.Name, g.Offsets); err != nil {
			return err
		}
	}
	return nil
}

// bump adds delta to the first integer counter matches in v, keeping every
// other byte as it is.
func bump(counter *regexp.Regexp, v []byte, delta int64) []byte {
	loc := counter.FindSubmatchIndex(v)
	if loc == nil {
		return v
	}
	n, err := strconv.ParseInt(string(v[loc[2]:loc[3]]), 10, 64)
	if err != nil {
		return v
	}
	out := append([]byte{}, v[:loc[2]]...)
	out = strconv.AppendInt(out, n+delta, 10)
	return append(out, v[loc[3]:]...)
}

// regexpFor matches the integer value of field in a flat JSON object.
func regexpFor(field string) *regexp.Regexp {
	return regexp.MustCompile(`"` + regexp.QuoteMeta(field) + `":(-?[0-9]+)`)
}
