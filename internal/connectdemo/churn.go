package connectdemo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
	ch.leave = opts.Leave
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
			return err
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
}

func newChurner(cl *kgo.Client, spec Spec) (*churner, error) {
	ch := &churner{
		spec: spec,
		rng:  rand.New(rand.NewPCG(uint64(spec.Seed), 0x636875726e)),
		adm:  kadm.NewClient(cl),
		s:    &seeder{cl: cl, parts: map[string]int32{}, exp: &Expected{Live: map[string]map[int32]map[string][]byte{}}, txn: map[string]*kgo.Client{}},
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

func (ch *churner) close() { ch.s.close() }

func (ch *churner) tick(ctx context.Context) error {
	if ch.leave != nil {
		if ch.retired == nil {
			ch.retired = map[string]bool{}
		}
		for name := range ch.leave() {
			ch.retired[name] = true
		}
	}
	for _, src := range ch.sources {
		if len(src.keys) == 0 || ch.retired[src.conn.Name] {
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
		if g.Connector != "" && ch.retired[g.Connector] {
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
