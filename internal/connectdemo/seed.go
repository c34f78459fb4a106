package connectdemo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Expected is what a correct snapshot of a seeded cluster must contain,
// computed by Seed from what it wrote (never by reading the cluster back).
// Maps are not safe for concurrent mutation; read them freely.
type Expected struct {
	Topics        Topics
	WorkerGroupID string
	// OffsetsTopics are the worker offsets topic first, then the
	// connectors' own offsets.storage.topic values, sorted.
	OffsetsTopics []string
	// Partitions is the partition count of every topic Seed created or
	// wrote, as the cluster reported it.
	Partitions map[string]int32
	// Live holds, for the offsets, config and status topics, per partition,
	// every live key (as a string of its exact bytes) and the exact value
	// bytes of its last committed write in that partition. Tombstoned keys
	// are absent; records of aborted transactions never count.
	Live map[string]map[int32]map[string][]byte
	// Connectors are the connectors of the config topic plus the deleted
	// ones whose offsets remain (HasConfig false), by name.
	Connectors map[string]Connector
	// Groups are the consumer groups a snapshot must capture, by name: the
	// sinks' resolved groups and every connect- prefixed group. That
	// includes connect-legacy-jdbc-sink, a deleted sink with no config at
	// all, which is captured by prefix only (its Connector is empty).
	Groups map[string]Group
	// NotCaptured are groups that exist but must not be in a snapshot.
	NotCaptured []string
	// UnparsedKeys counts the live keys of all offsets topics that are not
	// a [string, {object}] pair.
	UnparsedKeys int
	// Duplicates are live keys present in more than one partition of the
	// same offsets topic.
	Duplicates []DuplicateKey
	// LiveMemberGroup is the group that has a running member, or empty.
	LiveMemberGroup string
	// Records is how many records Seed wrote, aborted ones included.
	Records int

	stopOnce sync.Once
	stop     func()
}

// DuplicateKey is one key live in several partitions of a topic.
type DuplicateKey struct {
	Topic      string
	Key        string
	Partitions []int32
}

// LiveKeys returns the live keys of topic by partition (see Live); nil if
// Seed wrote nothing live there. The map is Expected's own: do not modify.
func (e *Expected) LiveKeys(topic string) map[int32]map[string][]byte { return e.Live[topic] }

// LiveCount returns how many live keys topic holds across partitions.
func (e *Expected) LiveCount(topic string) int {
	n := 0
	for _, m := range e.Live[topic] {
		n += len(m)
	}
	return n
}

// Stop stops the live sink member, if any, and waits until it has left its
// group. It is safe to call more than once and on a nil Expected.
func (e *Expected) Stop() {
	if e == nil || e.stop == nil {
		return
	}
	e.stopOnce.Do(e.stop)
}

// Seed creates the worker topics and spec.ExtraTopics (existing topics are
// kept), fills the data topics, writes spec.Writes and the bulk connectors
// in order, commits the groups' offsets as a non-member (kadm), and with
// spec.LiveSinkMember starts a member in the Live group that runs until ctx
// ends or Expected.Stop is called. It returns what a snapshot must contain.
//
// Seed writes through its own clients, opened to cl's seed brokers: a
// plain producer as the worker has (franz-go default partitioner,
// idempotence off, acks=all, no compression), a transactional producer per
// transactional id, and a manual-partition producer for Forced records and
// data topics. Every produced record is checked against Murmur2Partition.
func Seed(ctx context.Context, cl *kgo.Client, spec Spec) (*Expected, error) {
	spec = spec.withDefaults()
	adm := kadm.NewClient(cl)
	if err := CreateTopics(ctx, cl, spec.Topics); err != nil {
		return nil, err
	}
	for _, ts := range spec.ExtraTopics {
		if err := createTopic(ctx, adm, ts, spec.Topics.ReplicationFactor); err != nil {
			return nil, err
		}
	}
	topics := []string{spec.Topics.Offsets, spec.Topics.Configs, spec.Topics.Status}
	for _, ts := range spec.ExtraTopics {
		topics = append(topics, ts.Name)
	}
	for _, b := range spec.Writes {
		for _, r := range b.Records {
			topics = append(topics, r.Topic)
		}
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	parts, err := partitionCounts(ctx, adm, topics...)
	if err != nil {
		return nil, err
	}

	exp := &Expected{
		Topics:        spec.Topics,
		WorkerGroupID: spec.WorkerGroupID,
		Partitions:    parts,
		Live:          map[string]map[int32]map[string][]byte{},
		Connectors:    map[string]Connector{},
		Groups:        map[string]Group{},
	}
	s := &seeder{cl: cl, parts: parts, exp: exp, txn: map[string]*kgo.Client{}, tracked: map[string]bool{}}
	defer s.close()

	if spec.ExtraSinkGroups > 0 {
		ts := TopicSpec{Name: BulkSinkTopic, Partitions: int32(spec.GroupPartitions)}
		if err := createTopic(ctx, adm, ts, spec.Topics.ReplicationFactor); err != nil {
			return nil, err
		}
		exp.Partitions[BulkSinkTopic] = ts.Partitions
	}

	own := []string{}
	for _, c := range append(slices.Clone(spec.Connectors), bulkConnectors(spec)...) {
		exp.Connectors[c.Name] = c
		if c.OffsetsTopic != "" && c.OffsetsTopic != spec.Topics.Offsets {
			own = append(own, c.OffsetsTopic)
		}
	}
	slices.Sort(own)
	exp.OffsetsTopics = append([]string{spec.Topics.Offsets}, slices.Compact(own)...)
	for _, t := range append(slices.Clone(exp.OffsetsTopics), spec.Topics.Configs, spec.Topics.Status) {
		s.tracked[t] = true
	}

	if err := s.prefill(ctx, spec.ExtraTopics); err != nil {
		return nil, err
	}
	for _, b := range spec.Writes {
		if err := s.write(ctx, b); err != nil {
			return nil, err
		}
	}
	for b := range bulkBatches(spec) {
		if err := s.write(ctx, b); err != nil {
			return nil, err
		}
	}

	if err := s.flush(ctx); err != nil {
		return nil, err
	}

	var live *Group
	for i, g := range spec.Groups {
		if err := commitGroup(ctx, adm, g.Name, g.Offsets); err != nil {
			return nil, err
		}
		if g.Captured {
			exp.Groups[g.Name] = g
		} else {
			exp.NotCaptured = append(exp.NotCaptured, g.Name)
		}
		if g.Live && spec.LiveSinkMember && live == nil {
			live = &spec.Groups[i]
		}
	}
	bulk := bulkGroups(spec)
	if err := commitGroups(ctx, adm, bulk); err != nil {
		return nil, err
	}
	for _, g := range bulk {
		exp.Groups[g.Name] = g
	}
	sort.Strings(exp.NotCaptured)

	exp.finish(s.unparsed)

	if live != nil {
		stop, err := startMember(ctx, cl, *live)
		if err != nil {
			return nil, err
		}
		exp.stop = stop
		exp.LiveMemberGroup = live.Name
	}
	return exp, nil
}

// finish computes UnparsedKeys and Duplicates from Live. unparsed holds
// the keys written without a Connector that do not parse; a key written
// with one is a [name,{map}] key by construction (the tests check
// DefaultSpec's).
func (e *Expected) finish(unparsed map[string]bool) {
	for _, t := range e.OffsetsTopics {
		where := map[string][]int32{}
		for p, m := range e.Live[t] {
			for key := range m {
				where[key] = append(where[key], p)
				if unparsed[key] {
					e.UnparsedKeys++
				}
			}
		}
		for key, ps := range where {
			if len(ps) > 1 {
				slices.Sort(ps)
				e.Duplicates = append(e.Duplicates, DuplicateKey{Topic: t, Key: key, Partitions: ps})
			}
		}
	}
	sort.Slice(e.Duplicates, func(i, j int) bool {
		a, b := e.Duplicates[i], e.Duplicates[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Key < b.Key
	})
}

// parsesAsConnectKey reports whether key is a JSON [string, {object}] pair,
// the only shape Connect attributes to a connector. It only decodes.
func parsesAsConnectKey(key []byte) bool {
	var pair []json.RawMessage
	if json.Unmarshal(key, &pair) != nil || len(pair) != 2 {
		return false
	}
	var name string
	if json.Unmarshal(pair[0], &name) != nil {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(pair[1], &m) == nil && m != nil
}

type seeder struct {
	cl            *kgo.Client
	parts         map[string]int32
	exp           *Expected
	plain, manual *kgo.Client
	txn           map[string]*kgo.Client
	tracked       map[string]bool
	// unparsed are keys written to tracked topics without a Connector
	// that do not parse as [name,{map}].
	unparsed map[string]bool
	// opts are added to every producer's options.
	opts []kgo.Opt

	mu       sync.Mutex
	asyncErr error
}

func (s *seeder) close() {
	for _, c := range []*kgo.Client{s.plain, s.manual} {
		if c != nil {
			c.Close()
		}
	}
	for _, c := range s.txn {
		c.Close()
	}
}

// producerOpts are the worker's KafkaBasedLog producer settings.
func producerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(5 * time.Millisecond),
	}
}

func (s *seeder) client(ctx context.Context, txnID string, manual bool) (*kgo.Client, error) {
	var err error
	switch {
	case txnID != "":
		if c := s.txn[txnID]; c != nil {
			return c, nil
		}
		c, err := newClient(s.cl, append([]kgo.Opt{kgo.TransactionalID(txnID), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)}, s.opts...)...)
		if err != nil {
			return nil, err
		}
		s.txn[txnID] = c
		return c, nil
	case manual:
		if s.manual == nil {
			s.manual, err = newClient(s.cl, append(append(producerOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner())), s.opts...)...)
		}
		return s.manual, err
	default:
		if s.plain == nil {
			s.plain, err = newClient(s.cl, append(producerOpts(), s.opts...)...)
		}
		return s.plain, err
	}
}

// prefill writes ts.Records records to every partition of each data topic.
func (s *seeder) prefill(ctx context.Context, tss []TopicSpec) error {
	var rs []*kgo.Record
	for _, ts := range tss {
		for p := int32(0); p < s.parts[ts.Name] && ts.Records > 0; p++ {
			for i := 0; i < ts.Records; i++ {
				rs = append(rs, &kgo.Record{
					Topic:     ts.Name,
					Partition: p,
					Key:       fmt.Appendf(nil, `{"id":"%s-%d-%d"}`, ts.Name, p, i),
					Value:     fmt.Appendf(nil, `{"seq":%d,"partition":%d}`, i, p),
				})
			}
		}
	}
	if len(rs) == 0 {
		return nil
	}
	c, err := s.client(ctx, "", true)
	if err != nil {
		return err
	}
	if err := c.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("fill data topics: %w", err)
	}
	return nil
}

// write produces one batch and applies it to Expected once it is acked
// (and committed, for a transaction).
func (s *seeder) write(ctx context.Context, b Batch) error {
	for _, r := range b.Records {
		if _, ok := s.parts[r.Topic]; !ok {
			n, err := partitionCounts(ctx, kadm.NewClient(s.cl), r.Topic)
			if err != nil {
				return err
			}
			s.parts[r.Topic] = n[r.Topic]
		}
	}
	if b.TransactionalID != "" {
		if err := s.flush(ctx); err != nil {
			return err
		}
		for _, r := range b.Records {
			if r.Forced {
				return fmt.Errorf("write batch of %q: forced partitions are not supported in transactions", b.TransactionalID)
			}
		}
		c, err := s.client(ctx, b.TransactionalID, false)
		if err != nil {
			return err
		}
		for attempt := 1; ; attempt++ {
			if err := c.BeginTransaction(); err != nil {
				return fmt.Errorf("begin transaction %q: %w", b.TransactionalID, err)
			}
			perr := s.produce(ctx, c, b.Records)
			commit := kgo.TransactionEndTry(perr == nil && !b.Abort)
			if err := c.EndTransaction(ctx, commit); err != nil {
				return fmt.Errorf("end transaction %q: %w", b.TransactionalID, err)
			}
			// kfake answers OUT_OF_ORDER_SEQUENCE_NUMBER now and then on
			// a loaded machine (seen once in about a hundred -race runs);
			// for a transactional producer it is abortable: the batch was
			// aborted above (its records stay in the log, as an aborted
			// batch's do) and is written again.
			if perr != nil && errors.Is(perr, kerr.OutOfOrderSequenceNumber) && attempt < 3 {
				s.exp.Records += len(b.Records)
				continue
			}
			if perr != nil {
				return perr
			}
			break
		}
		s.exp.Records += len(b.Records)
		if !b.Abort {
			s.apply(b.Records)
		}
		return nil
	}
	if b.Abort {
		return fmt.Errorf("write batch: Abort needs a TransactionalID")
	}
	for _, r := range b.Records {
		if r.Forced {
			// Order against the pending plain writes, then the kcat -p way.
			if err := s.flush(ctx); err != nil {
				return err
			}
			c, err := s.client(ctx, "", true)
			if err != nil {
				return err
			}
			if err := s.produce(ctx, c, []Record{r}); err != nil {
				return err
			}
		} else if err := s.produceAsync(ctx, r); err != nil {
			return err
		}
		s.exp.Records++
		s.apply([]Record{r})
	}
	return nil
}

// produceAsync hands r to the plain producer without waiting; flush waits
// and reports the first failure, including a record that did not land on
// its murmur2 partition. One producer keeps per-partition order.
func (s *seeder) produceAsync(ctx context.Context, r Record) error {
	c, err := s.client(ctx, "", false)
	if err != nil {
		return err
	}
	n := s.parts[r.Topic]
	c.Produce(ctx, &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value}, func(kr *kgo.Record, err error) {
		if err == nil {
			if want := Murmur2Partition(kr.Key, n); kr.Partition != want {
				err = fmt.Errorf("landed in partition %d, want %d", kr.Partition, want)
			}
		}
		if err != nil {
			s.mu.Lock()
			if s.asyncErr == nil {
				s.asyncErr = fmt.Errorf("produce key %q to %q: %w", kr.Key, kr.Topic, err)
			}
			s.mu.Unlock()
		}
	})
	return nil
}

// flush waits for every record produceAsync handed over.
func (s *seeder) flush(ctx context.Context) error {
	if s.plain == nil {
		return nil
	}
	if err := s.plain.Flush(ctx); err != nil {
		return fmt.Errorf("flush producer: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asyncErr
}

// produce writes rs with c and checks every record landed where it must.
func (s *seeder) produce(ctx context.Context, c *kgo.Client, rs []Record) error {
	krs := make([]*kgo.Record, len(rs))
	for i, r := range rs {
		krs[i] = &kgo.Record{Topic: r.Topic, Key: r.Key, Value: r.Value}
		if r.Forced {
			krs[i].Partition = r.Partition
		}
	}
	for _, res := range c.ProduceSync(ctx, krs...) {
		if res.Err != nil {
			return fmt.Errorf("produce to %q: %w", res.Record.Topic, res.Err)
		}
	}
	for i, r := range rs {
		want := s.partition(r)
		if got := krs[i].Partition; got != want {
			return fmt.Errorf("produce key %q to %q: landed in partition %d, want %d", r.Key, r.Topic, got, want)
		}
	}
	return nil
}

func (s *seeder) partition(r Record) int32 {
	if r.Forced {
		return r.Partition
	}
	return Murmur2Partition(r.Key, s.parts[r.Topic])
}

func (s *seeder) apply(rs []Record) {
	for _, r := range rs {
		if !s.tracked[r.Topic] {
			continue
		}
		if r.Connector == "" && r.Value != nil && !s.unparsed[string(r.Key)] && !parsesAsConnectKey(r.Key) {
			if s.unparsed == nil {
				s.unparsed = map[string]bool{}
			}
			s.unparsed[string(r.Key)] = true
		}
		p := s.partition(r)
		byPart := s.exp.Live[r.Topic]
		if byPart == nil {
			byPart = map[int32]map[string][]byte{}
			s.exp.Live[r.Topic] = byPart
		}
		m := byPart[p]
		if m == nil {
			m = map[string][]byte{}
			byPart[p] = m
		}
		if r.Value == nil {
			delete(m, string(r.Key))
			if len(m) == 0 {
				delete(byPart, p)
			}
			continue
		}
		m[string(r.Key)] = r.Value
	}
}

// commitGroup commits offsets for group as a non-member, with leader epoch
// -1 and empty metadata, as Connect's KIP-875 code does.
func commitGroup(ctx context.Context, adm *kadm.Client, group string, offs []GroupOffset) error {
	var os kadm.Offsets
	for _, o := range offs {
		os.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
	}
	resps, err := adm.CommitOffsets(ctx, group, os)
	if err != nil {
		return fmt.Errorf("commit offsets for group %q: %w", group, err)
	}
	if err := resps.Error(); err != nil {
		return fmt.Errorf("commit offsets for group %q: %w", group, err)
	}
	for _, o := range offs {
		if _, ok := resps.Lookup(o.Topic, o.Partition); !ok {
			return fmt.Errorf("commit offsets for group %q: no answer for %s/%d", group, o.Topic, o.Partition)
		}
	}
	return nil
}

// startMember joins g with a consumer that never commits and keeps polling
// until ctx ends or the returned stop is called; it returns once the member
// has its assignment.
func startMember(ctx context.Context, cl *kgo.Client, g Group) (func(), error) {
	var topics []string
	for _, o := range g.Offsets {
		topics = append(topics, o.Topic)
	}
	slices.Sort(topics)
	assigned := make(chan struct{})
	var once sync.Once
	c, err := newClient(cl,
		kgo.ConsumerGroup(g.Name),
		kgo.ConsumeTopics(slices.Compact(topics)...),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			once.Do(func() { close(assigned) })
		}),
	)
	if err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close() // leaves the group
		for mctx.Err() == nil {
			c.PollFetches(mctx)
		}
	}()
	stop := func() { cancel(); <-done }
	select {
	case <-assigned:
		return stop, nil
	case <-ctx.Done():
		stop()
		return nil, fmt.Errorf("join group %q: %w", g.Name, ctx.Err())
	case <-time.After(30 * time.Second):
		stop()
		return nil, fmt.Errorf("join group %q: no assignment after 30s", g.Name)
	}
}

// BulkSinkTopic is the data topic the ExtraSinkGroups sinks read.
const BulkSinkTopic = "bulk-sink-data"

// bulkSinkClass is the connector class of the ExtraSinkGroups sinks.
const bulkSinkClass = "io.confluent.connect.s3.S3SinkConnector"

// bulkConnectors are the ExtraFileConnectors and ExtraSinkGroups connectors.
func bulkConnectors(spec Spec) []Connector {
	state, tasks := StateStarted, 1
	if spec.BulkStopped {
		state, tasks = StateStopped, 0
	}
	out := make([]Connector, 0, spec.ExtraFileConnectors+spec.ExtraSinkGroups)
	for i := 0; i < spec.ExtraFileConnectors; i++ {
		out = append(out, Connector{
			Name: bulkName(i), Type: TypeSource, Class: "org.apache.kafka.connect.file.FileStreamSourceConnector",
			HasConfig: true, TargetState: state, Tasks: tasks, Counter: "position",
		})
	}
	for i := 0; i < spec.ExtraSinkGroups; i++ {
		name := bulkSinkName(i)
		out = append(out, Connector{
			Name: name, Type: TypeSink, Class: bulkSinkClass,
			HasConfig: true, TargetState: state, Tasks: tasks, Group: "connect-" + name,
		})
	}
	return out
}

func bulkName(i int) string { return fmt.Sprintf("file-bulk-%04d", i) }

func bulkSinkName(i int) string { return fmt.Sprintf("bulk-sink-%04d", i) }

// bulkGroups are the groups of the ExtraSinkGroups sinks, with offsets
// drawn from spec.Seed (apart from the bulk keys' draws).
func bulkGroups(spec Spec) []Group {
	if spec.ExtraSinkGroups <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x73696e6b73))
	out := make([]Group, spec.ExtraSinkGroups)
	for i := range out {
		name := bulkSinkName(i)
		g := Group{Name: "connect-" + name, Connector: name, Captured: true, Offsets: make([]GroupOffset, spec.GroupPartitions)}
		for p := range g.Offsets {
			g.Offsets[p] = GroupOffset{Topic: BulkSinkTopic, Partition: int32(p), Offset: 1 + rng.Int64N(1<<20)}
		}
		out[i] = g
	}
	return out
}

// commitGroups commits the offsets of gs, a few groups at a time.
func commitGroups(ctx context.Context, adm *kadm.Client, gs []Group) error {
	const parallel = 8
	work := make(chan Group)
	errs := make(chan error, parallel)
	for range parallel {
		go func() {
			var first error
			for g := range work {
				if first == nil {
					first = commitGroup(ctx, adm, g.Name, g.Offsets)
				}
			}
			errs <- first
		}()
	}
	for _, g := range gs {
		work <- g
	}
	close(work)
	var first error
	for range parallel {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// bulkKeyPosition is the last position of bulk key (i, j) with
// HistoryPerKey: a hash of the seed and the key's indexes.
func bulkKeyPosition(seed int64, i, j int) int64 {
	x := uint64(seed) ^ uint64(i)<<32 ^ uint64(j) + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return int64((x ^ x>>31) & (1<<30 - 1))
}

// bulkBatches yields the bulk connectors' config records (in leader
// transactions) and their offsets (plain), deterministically from
// spec.Seed.
func bulkBatches(spec Spec) iter.Seq[Batch] {
	const chunk = 10000
	return func(yield func(Batch) bool) {
		if spec.ExtraFileConnectors <= 0 {
			return
		}
		rng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x6f6666736574))
		cfgT, offT := spec.Topics.Configs, spec.Topics.Offsets
		b := Batch{TransactionalID: "connect-cluster-" + spec.WorkerGroupID}
		flush := func(next Batch) bool {
			if len(b.Records) > 0 && !yield(b) {
				return false
			}
			b = next
			return true
		}
		config := func(name, props, taskClass string) []Record {
			if spec.BulkStopped {
				return []Record{
					{Topic: cfgT, Key: []byte("connector-" + name), Value: []byte(`{"properties":{` + props + `}}`)},
					{Topic: cfgT, Key: []byte("target-state-" + name), Value: []byte(`{"state":"PAUSED","state.v2":"STOPPED"}`)},
					{Topic: cfgT, Key: []byte("commit-" + name), Value: []byte(`{"tasks":0}`)},
				}
			}
			return []Record{
				{Topic: cfgT, Key: []byte("connector-" + name), Value: []byte(`{"properties":{` + props + `}}`)},
				{Topic: cfgT, Key: []byte("task-" + name + "-0"), Value: []byte(`{"properties":{` + props + `,"task.class":"` + taskClass + `"}}`)},
				{Topic: cfgT, Key: []byte("commit-" + name), Value: []byte(`{"tasks":1}`)},
			}
		}
		for i := 0; i < spec.ExtraFileConnectors; i++ {
			name := bulkName(i)
			props := `"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","tasks.max":"1","file":"/data/bulk/` + name + `","topic":"bulk-lines","name":"` + name + `"`
			b.Records = append(b.Records, config(name, props, "org.apache.kafka.connect.file.FileStreamSourceTask")...)
			if len(b.Records) >= chunk && !flush(Batch{TransactionalID: b.TransactionalID}) {
				return
			}
		}
		for i := 0; i < spec.ExtraSinkGroups; i++ {
			name := bulkSinkName(i)
			props := `"connector.class":"` + bulkSinkClass + `","tasks.max":"1","topics":"` + BulkSinkTopic + `","s3.bucket.name":"bulk","flush.size":"1000","name":"` + name + `"`
			b.Records = append(b.Records, config(name, props, "io.confluent.connect.s3.S3SinkTask")...)
			if len(b.Records) >= chunk && !flush(Batch{TransactionalID: b.TransactionalID}) {
				return
			}
		}
		if !flush(Batch{}) {
			return
		}
		if spec.HistoryPerKey > 0 {
			for round := 0; round <= spec.HistoryPerKey; round++ {
				for i := 0; i < spec.ExtraFileConnectors; i++ {
					name := bulkName(i)
					for j := 0; j < spec.FilesPerConnector; j++ {
						pos := bulkKeyPosition(spec.Seed, i, j) * int64(round+1) / int64(spec.HistoryPerKey+1)
						b.Records = append(b.Records, Record{Topic: offT, Key: bulkKey(name, j), Value: positionJSON(pos), Connector: name})
						if len(b.Records) >= chunk && !flush(Batch{}) {
							return
						}
					}
				}
			}
			flush(Batch{})
			return
		}
		for i := 0; i < spec.ExtraFileConnectors; i++ {
			name := bulkName(i)
			for j := 0; j < spec.FilesPerConnector; j++ {
				key := bulkKey(name, j)
				pos := rng.Int64N(1 << 30)
				if rng.IntN(4) == 0 {
					b.Records = append(b.Records, Record{Topic: offT, Key: key, Value: positionJSON(pos / 2), Connector: name})
				}
				b.Records = append(b.Records, Record{Topic: offT, Key: key, Value: positionJSON(pos), Connector: name})
				if rng.IntN(50) == 0 {
					b.Records = append(b.Records, Record{Topic: offT, Key: key, Connector: name})
				}
				if len(b.Records) >= chunk && !flush(Batch{}) {
					return
				}
			}
		}
		flush(Batch{})
	}
}

// bulkKey is the key of source partition j of the bulk connector name.
func bulkKey(name string, j int) []byte {
	key := make([]byte, 0, 2*len(name)+48)
	key = append(key, `["`+name+`",{"filename":"/data/bulk/`+name+`/part-`...)
	key = append(key, zeroPad(j, 6)...)
	return append(key, `.log"}]`...)
}

func positionJSON(pos int64) []byte {
	v := make([]byte, 0, 24)
	v = append(v, `{"position":`...)
	v = strconv.AppendInt(v, pos, 10)
	return append(v, '}')
}

func zeroPad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}
