// Package restore writes a snapshot's Kafka Connect offsets back into a
// cluster, and compares snapshots with each other or with a live cluster.
//
// The types to know are [Request] and [Report], what [Run] takes and
// returns, and [Plan], the comparison of a snapshot with the live state of
// the connectors in scope (what a dry run prints). Run does a whole restore
// in one call: plan, every safety check (with a Connect REST client, the
// connectors' REST states too), stopping the connectors first if asked,
// the undo snapshot, fencing under Force, apply (into Kafka, or through
// Connect), verify and resume:
//
//	store, err := snapshot.OpenStore(ctx, "file:///var/lib/offsetkeeper")
//	snap, _, err := store.Get(ctx, "latest")
//	rep, err := restore.Run(ctx,
//		restore.Env{Client: cl, Store: store, Out: os.Stdout, Warn: os.Stderr},
//		restore.Request{Snapshot: snap, DryRun: false})
//	// errors.Is(err, restore.ErrRefused): a safety check refused, nothing written
//	// rep.Undo is the undo snapshot's id; restore it to roll back
//
// The steps are there on their own too: NewPlan, then [Plan.Check] (the
// safety checks), then [Apply], then [Verify]:
//
//	plan, err := restore.NewPlan(ctx, cl, snap, restore.Options{})
//	err = plan.Check(ctx, cl)          // errors.Is(err, restore.ErrRefused)
//	undo := plan.Live                  // store it before writing: the undo snapshot
//	res, err := restore.Apply(ctx, cl, plan)
//	v, err := restore.Verify(ctx, cl, plan) // errors.Is(err, restore.ErrVerifyFailed)
//
// [Diff] compares two snapshots (or a snapshot and [CaptureLive]) offset by
// offset, without writing anything.
//
// Through the Kafka Connect REST API instead of Kafka, [Plan.ConnectRequests]
// turns a plan into PATCH requests, [ApplyConnect] sends them and
// [VerifyConnect] reads them back (see ConnectRequests for what Connect
// cannot write byte for byte). Package restore/offsetsfile reads a Connect
// REST offsets body, kafka-consumer-groups CSV or a standalone worker's
// file into a snapshot to restore like any other.
//
// Guarantees:
//   - Apply writes source offset keys and values as the exact bytes the
//     snapshot holds; nothing is decoded and re-encoded. (Through the REST
//     API, Connect writes its own normalized bytes: see ConnectRequests.)
//   - Every source record is written to murmur2(key) % partitions of the
//     topic the connector reads (the partition the worker's producer
//     picks), by Apply's own partitioner; the one exception is the
//     tombstone that clears a stray copy of a key, which goes to the
//     partition that copy is on. Apply aborts a topic's transaction if any
//     record landed elsewhere.
//   - The records of one topic are written in one Kafka transaction: a
//     restore that fails part way leaves that topic as it was.
//   - A connector out of scope is never read for the safety checks and never
//     written. One in scope that the plan writes nothing for is not checked
//     either: a running connector whose offsets already match never blocks
//     ([ConnectorPlan.Writes], [ConnectorPlan.LeftAlone]).
//   - Planning and checking write nothing.
//
// [Report.Document] is a Report as restore --output json prints it.
package restore

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// Errors returned by this package. Callers compare with errors.Is.
var (
	// ErrRefused: a safety check refused the restore; nothing was written.
	// The error is a *RefusedError listing every reason.
	ErrRefused = errors.New("restore refused by a safety check")
	// ErrOtherCluster: the snapshot was taken from another Kafka cluster
	// (its cluster id differs) and Options.AllowOtherCluster is not set.
	ErrOtherCluster = errors.New("snapshot is from another Kafka cluster")
	// ErrEmptyScope: no connector of the snapshot is left to restore.
	ErrEmptyScope = errors.New("nothing to restore: the scope is empty")
	// ErrNotInSnapshot: a connector named in Options.Connectors is not in
	// the snapshot.
	ErrNotInSnapshot = errors.New("connector not in snapshot")
	// ErrTopicMissing: an offsets topic a restore must write to does not
	// exist; a restore never creates one.
	ErrTopicMissing = errors.New("offsets topic does not exist")
	// ErrVerifyFailed: after applying, the live state still differs from
	// the snapshot.
	ErrVerifyFailed = errors.New("restored state differs from the snapshot")
	// ErrApply: a write failed part way; what was committed before stays.
	ErrApply = errors.New("restore failed part way")
	// ErrFenced: another restore of the same offsets topic started while
	// this one was writing and took over its transactional id; the broker
	// aborted this one's transaction. It comes wrapped in ErrApply.
	ErrFenced = errors.New("another restore took over the offsets topic")
	// ErrNotStopped: Request.StopConnectors (or Resume) gave up waiting
	// before every connector reached the state wanted.
	ErrNotStopped = errors.New("connectors did not reach the state wanted in time")
	// ErrBadFile: an offsets file (see offsetsfile.ParseOffsetsFile) does not validate;
	// the error lists every problem, and nothing was written.
	ErrBadFile = errors.New("offsets file is not valid")
)

// TransactionalIDPrefix starts the transactional id of every restore
// producer: the id of the producer writing topic t is the prefix plus t. A
// second restore of the same topic therefore fences the first; Check
// refuses while another restore's transaction is open.
const TransactionalIDPrefix = "offsetkeeper-restore-"

// Options say what to restore and where the Connect topics are.
type Options struct {
	// Options name the worker topics and the sink group prefix (defaults
	// as in snapshot), the connectors of the snapshot in scope (empty:
	// every connector it holds) and the ProgramVersion recorded in the
	// live capture (the undo snapshot). A source key of the snapshot stored
	// in one of the OffsetsTopics is restored to the same topic, otherwise
	// to the first one (unless its connector has its own offsets topic).
	// Reason, ConfigTopicOptional and Incremental are the restore's to set
	// on its own captures; values given are ignored.
	capture.Options
	// SourceOnly restores only source offsets, SinkOnly only sink group
	// offsets; at most one may be set.
	SourceOnly, SinkOnly bool
	// AllowOtherCluster lets a snapshot taken from another Kafka cluster be
	// restored (a migration or disaster recovery into a new cluster).
	AllowOtherCluster bool
	// IncludeUnowned also restores the offsets topic keys no connector
	// owns (keys that are not [connector, {partition}], kept raw): Run
	// lists them with the plan and writes those that differ (see
	// unowned.go). Without it a plan says they are left alone.
	IncludeUnowned bool
	// Compression compresses the batches written to the offsets topics.
	// The zero value writes them uncompressed, as Connect's own offsets
	// producer does; a drill compresses them because its in-process
	// scratch cluster keeps every batch as it was sent. The records read
	// back are the same bytes either way.
	Compression kgo.CompressionCodec
}

// defaults fills in the worker topics and group prefix as a capture does.
func (o *Options) defaults() { o.Options.Defaults() }

func (o Options) captureOptions(scope []string, extraTopics []string) capture.Options {
	topics := append([]string(nil), o.OffsetsTopics...)
	for _, t := range extraTopics {
		if !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	c := o.Options
	c.OffsetsTopics = topics
	c.Connectors = scope
	c.Reason = snapshot.ReasonUndo
	// A new cluster in a disaster recovery may have no config topic yet:
	// then no connector has a config here, so none runs.
	c.ConfigTopicOptional = true
	c.Incremental = false
	// A layout's worker groups were found before the plan: its captures
	// read those, not what a connector created since would add.
	c.Layout = nil
	return c
}
