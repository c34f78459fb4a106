package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// OutcomePartial: every offset that could be written here was written
// and verified, but some could not be (their topic or partition does not
// exist here: Plan.NotRestored); Run returns an error wrapping
// ErrNotRestored. In a dry run: the real run would end so.
const OutcomePartial = "partial"

// ErrNotRestored: offsets of the snapshot cannot be written here because
// their topic or partition does not exist; the rest was restored (or, in
// a dry run, would be). Creating the topics and running the same restore
// again restores them. A restore ending so exits 1, as its dry run does.
var ErrNotRestored = errors.New("offsets not restored here")

// MissingTopic is a topic a restore would write to that does not exist
// here, or lacks partitions the snapshot's offsets are on.
type MissingTopic struct {
	Topic string
	// OffsetsTopic is set for an offsets topic (created compacted); else it
	// is a sink connector's topic.
	OffsetsTopic bool
	// Partitions is the partition count to give it: an offsets topic's in
	// the snapshot (25, Connect's default, when unknown), or one more than
	// the highest partition a sink offset is on. Have is its count here, 0
	// when it does not exist.
	Partitions, Have int32
	// ReplicationFactor is the one of the create command: the snapshot
	// does not record one, so 3, or the broker count here when smaller.
	ReplicationFactor int
	// Needed says what needs it: "the worker offsets topic", "the offsets
	// topic of connector \"c\"", "group \"g\" of connector \"c\"".
	Needed []string
	// Offsets counts the sink offsets it holds back (sink topics only).
	Offsets int
	// Bootstrap is the brokers of the command, when known; else the
	// command says <brokers>.
	Bootstrap string
}

// Command is the kafka-topics.sh command that makes the topic what the
// restore needs: --create, or --alter of a topic with too few partitions.
func (m MissingTopic) Command() string {
	bs := m.Bootstrap
	if bs == "" {
		bs = "<brokers>"
	}
	if m.Have > 0 {
		return fmt.Sprintf("kafka-topics.sh --bootstrap-server %s --alter --topic %s --partitions %d", bs, m.Topic, m.Partitions)
	}
	cmd := fmt.Sprintf("kafka-topics.sh --bootstrap-server %s --create --topic %s --partitions %d --replication-factor %d", bs, m.Topic, m.Partitions, m.ReplicationFactor)
	if m.OffsetsTopic {
		cmd += " --config cleanup.policy=compact"
	}
	return cmd
}

// line is the topic's entry in a list: what needs it, then the command.
func (m MissingTopic) line() string {
	what := strings.Join(m.Needed, ", ")
	if m.Offsets > 0 {
		what += ", " + plural(m.Offsets, "offset", "offsets")
	}
	if m.Have > 0 {
		what += fmt.Sprintf("; it has %d partitions here", m.Have)
	}
	return fmt.Sprintf("%s (%s):\n    %s", m.Topic, what, m.Command())
}

// MissingTopicsError is the error of a restore that needs topics that do
// not exist here: every one of them, offsets topics and sink topics, with
// the command that creates it. It matches ErrTopicMissing when an offsets
// topic is among them (nothing can be planned then, nothing was written);
// else ErrNotRestored (the rest was restored).
type MissingTopicsError struct {
	Topics []MissingTopic
	// DryRun words it for a dry run; Restored for a run that wrote the rest.
	DryRun, Restored bool
}

func (e *MissingTopicsError) offsets() bool {
	return slices.ContainsFunc(e.Topics, func(m MissingTopic) bool { return m.OffsetsTopic })
}

func (e *MissingTopicsError) Error() string {
	var b strings.Builder
	n := len(e.Topics)
	switch {
	case e.offsets():
		fmt.Fprintf(&b, "%s this restore writes to %s not exist here", plural(n, "topic", "topics"), pick(n == 1, "does", "do"))
	case e.DryRun:
		fmt.Fprintf(&b, "dry run: nothing written; the restore would write and verify everything else, but leave %s not restored here (%s not exist here)", plural(e.heldBack(), "sink offset", "sink offsets"), pick(n == 1, "its topic does", "their topics do"))
	default:
		fmt.Fprintf(&b, "everything else was written and verified, but %s %s not restored here (%s not exist here)", plural(e.heldBack(), "sink offset", "sink offsets"), pick(e.heldBack() == 1, "is", "are"), pick(n == 1, "its topic does", "their topics do"))
	}
	b.WriteString(":\n")
	for _, m := range e.Topics {
		fmt.Fprintf(&b, "  %s\n", m.line())
	}
	b.WriteString("create ")
	b.WriteString(pick(n == 1, "it", "them"))
	b.WriteString(", then run the same restore again")
	if !e.offsets() && e.Restored {
		b.WriteString(" (it writes only what is still missing)")
	}
	return b.String()
}

func (e *MissingTopicsError) heldBack() int {
	n := 0
	for _, m := range e.Topics {
		n += m.Offsets
	}
	return n
}

// Unwrap matches ErrTopicMissing or ErrNotRestored (see the type).
func (e *MissingTopicsError) Unwrap() error {
	if e.offsets() {
		return ErrTopicMissing
	}
	return ErrNotRestored
}

func pick(one bool, a, b string) string {
	if one {
		return a
	}
	return b
}

// NotRestored lists the sink topics whose offsets the plan skips because
// the topic or the partition does not exist here, sorted by topic; nil
// when it skips none.
func (p *Plan) NotRestored() []MissingTopic {
	byTopic := map[string]*MissingTopic{}
	for _, cp := range p.Connectors {
		if cp.Sink == nil {
			continue
		}
		for _, ch := range cp.Sink.Changes() {
			if ch.Action != Skipped {
				continue
			}
			m := byTopic[ch.Topic]
			if m == nil {
				m = &MissingTopic{Topic: ch.Topic, Have: p.sinkParts[ch.Topic], ReplicationFactor: p.replication, Bootstrap: p.bootstrap}
				byTopic[ch.Topic] = m
			}
			m.Partitions = max(m.Partitions, ch.Partition+1)
			m.Offsets++
			need := fmt.Sprintf("group %q of connector %q", cp.Sink.Group, cp.Name)
			if !slices.Contains(m.Needed, need) {
				m.Needed = append(m.Needed, need)
			}
		}
	}
	if len(byTopic) == 0 {
		return nil
	}
	out := make([]MissingTopic, 0, len(byTopic))
	for _, t := range sortedKeys(byTopic) {
		slices.Sort(byTopic[t].Needed)
		out = append(out, *byTopic[t])
	}
	return out
}

// NotRestoredError is the error of a plan that skips offsets (see
// NotRestored), nil when it skips none.
func (p *Plan) NotRestoredError(dryRun, restored bool) error {
	ms := p.NotRestored()
	if len(ms) == 0 {
		return nil
	}
	return &MissingTopicsError{Topics: ms, DryRun: dryRun, Restored: restored}
}

// replicationFactor is the replication factor of the create commands: 3,
// or the broker count when smaller.
func replicationFactor(brokers int) int {
	if brokers <= 0 || brokers >= 3 {
		return 3
	}
	return brokers
}

// missingTopics is the error of a plan that cannot be made because
// offsets topics it writes to do not exist: offsets are the missing
// offsets topics and what needs each (in order); the sink topics of the
// snapshot's groups in scope that are missing too are added, so that one
// message names every topic to create.
func missingTopics(ctx context.Context, adm *kadm.Client, snap *snapshot.Snapshot, opts Options, scope []string, offsets []MissingTopic) error {
	brokers := 0
	if md, err := adm.BrokerMetadata(ctx); err == nil {
		brokers = len(md.Brokers)
	}
	rf := replicationFactor(brokers)
	out := make([]MissingTopic, 0, len(offsets))
	for _, m := range offsets {
		m.OffsetsTopic, m.ReplicationFactor = true, rf
		if m.Partitions <= 0 {
			m.Partitions = 25
		}
		if i := slices.IndexFunc(out, func(x MissingTopic) bool { return x.Topic == m.Topic }); i >= 0 {
			out[i].Needed = append(out[i].Needed, m.Needed...)
			continue
		}
		out = append(out, m)
	}
	if !opts.SourceOnly && snap != nil {
		sinks, err := missingSinkTopics(ctx, adm, snap, scope, rf)
		if err != nil {
			return err
		}
		out = append(out, sinks...)
	}
	return &MissingTopicsError{Topics: out}
}

// missingSinkTopics lists the topics of the sink offsets snap holds for
// the connectors in scope (all when empty) that do not exist here or lack
// a partition.
func missingSinkTopics(ctx context.Context, adm *kadm.Client, snap *snapshot.Snapshot, scope []string, rf int) ([]MissingTopic, error) {
	type need struct {
		what string
		part int32
	}
	byTopic := map[string][]need{}
	for _, g := range snap.SinkGroups {
		if g.Connector == "" || len(scope) > 0 && !slices.Contains(scope, g.Connector) {
			continue
		}
		what := fmt.Sprintf("group %q of connector %q", g.Group, g.Connector)
		for _, o := range g.Offsets {
			byTopic[o.Topic] = append(byTopic[o.Topic], need{what, o.Partition})
		}
	}
	if len(byTopic) == 0 {
		return nil, nil
	}
	topics := sortedKeys(byTopic)
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("read metadata of sink topics %v: %w", topics, err)
	}
	var out []MissingTopic
	for _, t := range topics {
		m := MissingTopic{Topic: t, ReplicationFactor: rf}
		if d, ok := md.Topics[t]; ok && d.Err == nil {
			m.Have = int32(len(d.Partitions))
		}
		for _, n := range byTopic[t] {
			if n.part < m.Have {
				continue
			}
			m.Partitions = max(m.Partitions, n.part+1)
			m.Offsets++
			if !slices.Contains(m.Needed, n.what) {
				m.Needed = append(m.Needed, n.what)
			}
		}
		if m.Offsets > 0 {
			slices.Sort(m.Needed)
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out, nil
}
