package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Connect's defaults for the partition counts of its internal topics
// (offset.storage.partitions, status.storage.partitions; the config topic
// must have exactly one).
const (
	connectOffsetsPartitions = 25
	connectStatusPartitions  = 5
)

// ConnectTopic is a Connect internal topic --create-topics makes.
type ConnectTopic struct {
	Name string
	// Role is "offsets", "config" or "status".
	Role       string
	Partitions int32
	// From says where the partition count comes from.
	From string
}

// internalTopics are the Connect internal topics of the restore (see
// ConnectTopics).
func (r *run) internalTopics() []ConnectTopic {
	return ConnectTopics(r.req.Snapshot, r.req.Options)
}

// ConnectTopics are the Connect internal topics of a restore of snap with
// opts: the offsets and config topics the snapshot recorded (their
// partition counts as they were), those the options name that it did not,
// and the status topic, which a snapshot does not record (Connect's
// default count).
func ConnectTopics(snap *snapshot.Snapshot, opts Options) []ConnectTopic {
	var out []ConnectTopic
	add := func(name, role string, parts int32, from string) {
		if name == "" || slices.ContainsFunc(out, func(t ConnectTopic) bool { return t.Name == name }) {
			return
		}
		if n := snap.PartitionCount(name); n > 0 {
			parts, from = n, "as in the snapshot"
		}
		out = append(out, ConnectTopic{Name: name, Role: role, Partitions: parts, From: from})
	}
	for _, t := range snap.Topics {
		add(t.Name, t.Role, int32(len(t.Partitions)), "as in the snapshot")
	}
	offsets := opts.OffsetsTopics
	if len(offsets) == 0 {
		offsets = []string{snapshot.DefaultOffsetsTopic}
	}
	for _, t := range offsets {
		add(t, snapshot.RoleOffsets, connectOffsetsPartitions, "Connect's default")
	}
	config := opts.ConfigTopic
	if config == "" {
		config = snapshot.DefaultConfigTopic
	}
	add(config, snapshot.RoleConfig, 1, "Connect's")
	status := opts.StatusTopic
	if status == "" {
		status = capture.DefaultStatusTopic
	}
	add(status, "status", connectStatusPartitions, "Connect's default; a snapshot does not record it")
	return out
}

// createTopics creates, for Request.CreateTopics, the Connect internal
// topics of the restore that do not exist here (internalTopics), each
// cleanup.policy=compact, with Request.ReplicationFactor (0: the broker's
// default.replication.factor), before the plan: DR onto an empty cluster
// is one command. A dry run says what it would create. Nothing is created
// for a snapshot of another cluster without AllowOtherCluster (the plan
// refuses it).
func (r *run) createTopics(ctx context.Context) error {
	if !r.req.CreateTopics || r.Client == nil {
		return nil
	}
	adm := kadm.NewClient(r.Client)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("--create-topics: read cluster metadata: %w; nothing was written", err)
	}
	snap := r.req.Snapshot
	if snap.ClusterID != "" && md.Cluster != snap.ClusterID && !r.req.AllowOtherCluster {
		return nil
	}
	names, err := CreateConnectTopics(ctx, r.Client, r.internalTopics(), r.req.ReplicationFactor, r.req.DryRun, func(t ConnectTopic, what string) {
		if r.req.DryRun {
			fmt.Fprintln(r.Out, english.Wrap("dry run: --create-topics would create "+what, 120, "  "))
			return
		}
		fmt.Fprintln(r.Out, english.Wrap("created "+what, 120, "  "))
		r.Log.Info("topic created", "topic", t.Name, "partitions", t.Partitions)
	})
	if r.req.DryRun {
		r.wouldCreate = append(r.wouldCreate, names...)
		r.planAsCreated(names)
	} else {
		r.createdTopics = append(r.createdTopics, names...)
	}
	if err != nil {
		return fmt.Errorf("--create-topics: %w", err)
	}
	return nil
}

// planAsCreated lets a dry run plan as if the offsets topics among names,
// which the real run creates first, existed empty with the partition
// counts they would be created with (capture.Options.AbsentOffsetsTopics):
// it shows every write into them instead of failing on their absence.
func (r *run) planAsCreated(names []string) {
	for _, t := range r.internalTopics() {
		if t.Role != snapshot.RoleOffsets || !slices.Contains(names, t.Name) {
			continue
		}
		if r.req.Options.AbsentOffsetsTopics == nil {
			r.req.Options.AbsentOffsetsTopics = map[string]int32{}
		}
		r.req.Options.AbsentOffsetsTopics[t.Name] = t.Partitions
	}
}

// printWouldCreate ends a dry run's plan that --create-topics made
// possible with what the real run does first.
func (r *run) printWouldCreate() {
	if len(r.wouldCreate) == 0 {
		return
	}
	fmt.Fprintln(r.Out, english.Wrap(fmt.Sprintf("the real run (the same restore without --dry-run) creates %s first, then writes this plan",
		strings.Join(r.wouldCreate, ", ")), 120, "  "))
}

// wouldCreate reports whether offsets topic t does not exist and the dry
// run plans as if --create-topics had created it (planAsCreated).
func (p *Plan) wouldCreate(t string) bool { return p.opts.AbsentOffsetsTopics[t] > 0 }

// CreateConnectTopics creates those of topics that do not exist on cl's
// cluster, each cleanup.policy=compact with its partition count and
// replication factor rf (0: the broker's default.replication.factor), in
// order; with dryRun it creates none. each is told of every topic created
// (with dryRun: that would be) and its description. It returns their
// names; on an error, those created before it.
func CreateConnectTopics(ctx context.Context, cl *kgo.Client, topics []ConnectTopic, rf int, dryRun bool, each func(t ConnectTopic, what string)) ([]string, error) {
	adm := kadm.NewClient(cl)
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	have, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w; nothing was written", err)
	}
	rf16 := int16(rf)
	rfText := fmt.Sprint(rf16)
	if rf16 <= 0 {
		rf16, rfText = -1, "the broker's default"
	}
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	var created []string
	// kadm's requests read metadata cached for a few seconds: the plan
	// would find the topics created still missing.
	defer func() { cl.PurgeTopicsFromClient(created...) }()
	var out []string
	for _, t := range topics {
		if d, ok := have[t.Name]; ok && d.Err == nil {
			continue
		}
		what := fmt.Sprintf("topic %s (Connect %s topic, %s %s, cleanup.policy=compact, replication factor %s)", t.Name, t.Role, plural(int(t.Partitions), "partition", "partitions"), t.From, rfText)
		if dryRun {
			each(t, what)
			out = append(out, t.Name)
			continue
		}
		resp, err := adm.CreateTopic(ctx, t.Partitions, rf16, compact, t.Name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return out, fmt.Errorf("create %s: %w; the topics listed before it were created, no offset was written", what, err)
		}
		created = append(created, t.Name)
		out = append(out, t.Name)
		each(t, what)
	}
	return out, nil
}

// createTopicsAdvice adds to the error of a plan that found offsets
// topics missing what to do about it: with --create-topics in a dry run,
// that the real run creates them first; without it, the exact command
// that does.
func (r *run) createTopicsAdvice(err error) error {
	var missing *MissingTopicsError
	if !errors.As(err, &missing) || !missing.offsets() {
		return err
	}
	if r.req.CreateTopics {
		if r.req.DryRun && len(r.wouldCreate) > 0 {
			return fmt.Errorf("dry run: nothing written; --create-topics creates %s first, then every offset of the snapshot written to %s is added: %w",
				strings.Join(r.wouldCreate, ", "), pick(len(r.wouldCreate) == 1, "it", "them"), err)
		}
		return err
	}
	again := r.req.Again
	if r.req.Snapshot.Reason == journal.ReasonAt && again.Run == "" {
		again = r.req.Commands.At(r.req.Snapshot.CreatedAt, r.req.Connectors...)
	}
	if again.Run == "" {
		return fmt.Errorf("%w\nor run this restore again with --create-topics, which creates the Connect topics (offsets, config, status) missing here as the snapshot had them (compacted, its partition counts)", err)
	}
	return advise(fmt.Errorf("%w\nor let the restore create the Connect topics (offsets, config, status) missing here as the snapshot had them (compacted, its partition counts): %s --create-topics (check first: %s --create-topics --dry-run)",
		err, again.Run, again.Run), again.Run+" --create-topics", again.Run+" --create-topics --dry-run")
}

// withBrokers fills in the brokers of the kafka-topics.sh commands of a
// MissingTopicsError (before it is wrapped: the text is made then), so
// that every command printed runs as printed.
func (r *run) withBrokers(err error) {
	var missing *MissingTopicsError
	if r.Client == nil || !errors.As(err, &missing) {
		return
	}
	if seeds := seedsOf(r.Client); seeds != "" {
		for i := range missing.Topics {
			missing.Topics[i].Bootstrap = seeds
		}
	}
}

// seedsOf is the seed brokers of cl, comma-separated, as a printed
// command's --bootstrap-server; "" when unknown.
func seedsOf(cl *kgo.Client) string {
	if cl == nil {
		return ""
	}
	seeds, _ := cl.OptValue(kgo.SeedBrokers).([]string)
	return strings.Join(seeds, ",")
}

// topicsStay adds to the error of a restore that created topics
// (--create-topics) and then failed or was refused that the topics stay:
// "nothing was written" is about the offsets, and the topics it created,
// empty, are what the same restore run again uses.
func (r *run) topicsStay(err error) error {
	if err == nil || len(r.createdTopics) == 0 || !r.nothingWritten() {
		// Written into (a restore that ended "not restored here", or
		// failed after a topic committed): they are not empty, and the
		// error says what was written.
		return err
	}
	return fmt.Errorf("%w\n--create-topics created %s before this; %s, empty, and the same restore run again uses %s",
		err, strings.Join(r.createdTopics, ", "), pick(len(r.createdTopics) == 1, "it stays", "they stay"), pick(len(r.createdTopics) == 1, "it", "them"))
}
