package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// ErrNotReadable: the restore's transactions committed and every offset
// was written, but an open transaction of another producer holds the last
// stable offset of a partition below them, so read_committed readers (a
// worker, Verify) do not see them yet. Rolling back would not help: wait
// for that transaction to end, or abort it (the error says how). It comes
// wrapped in ErrApply.
var ErrNotReadable = errors.New("restored offsets not readable yet")

// Blocker is another producer's open transaction on a partition the
// restore wrote: it holds the partition's last stable offset.
type Blocker struct {
	Topic     string
	Partition int32
	// ProducerID and ProducerEpoch are the producer's; TxnID its
	// transactional id, "" when the brokers did not say.
	ProducerID    int64
	ProducerEpoch int16
	TxnID         string
	// StartOffset is the first offset of its open transaction; Started
	// when it began, zero when unknown.
	StartOffset int64
	Started     time.Time
	// Bootstrap is the brokers the commands name (the restore's seeds).
	Bootstrap string
}

func (b Blocker) String() string {
	who := fmt.Sprintf("producer %d (epoch %d)", b.ProducerID, b.ProducerEpoch)
	if b.TxnID != "" {
		who = fmt.Sprintf("transactional id %q, %s", b.TxnID, who)
	}
	s := fmt.Sprintf("%s/%d: an open transaction of %s, from offset %d", b.Topic, b.Partition, who, b.StartOffset)
	if !b.Started.IsZero() {
		s += fmt.Sprintf(", open since %s", b.Started.UTC().Format(time.RFC3339))
	}
	return s
}

// AbortCommand is the kafka-transactions.sh command that aborts it,
// against the brokers of the restore when known (Bootstrap).
func (b Blocker) AbortCommand() string {
	return fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s abort --topic %s --partition %d --start-offset %d", orBrokers(b.Bootstrap), b.Topic, b.Partition, b.StartOffset)
}

// orBrokers is bootstrap, or "<brokers>" when it is not known.
func orBrokers(bootstrap string) string {
	if bootstrap == "" {
		return "<brokers>"
	}
	return bootstrap
}

// describeBlockers finds the open transactions on the partitions of topic
// given, leaving out the restore's own (ownTxnID): DescribeProducers names
// the producers and where their transactions start, ListTransactions and
// DescribeTransactions their transactional ids and start times (best
// effort: a broker that answers only the first still names the producer).
func describeBlockers(ctx context.Context, adm *kadm.Client, topic string, parts []int32, ownTxnID string) ([]Blocker, error) {
	described, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: toSet(parts)})
	if err != nil {
		return nil, fmt.Errorf("describe producers of %s: %w", topic, err)
	}
	var out []Blocker
	var ids []int64
	for _, d := range described[topic].Partitions.Sorted() {
		if d.Err != nil {
			return nil, fmt.Errorf("describe producers of %s/%d: %w", topic, d.Partition, d.Err)
		}
		for _, p := range d.ActiveProducers.Sorted() {
			if p.CurrentTxnStartOffset < 0 {
				continue
			}
			out = append(out, Blocker{Topic: topic, Partition: d.Partition, ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch, StartOffset: p.CurrentTxnStartOffset})
			if !slices.Contains(ids, p.ProducerID) {
				ids = append(ids, p.ProducerID)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	txnOf := map[int64]string{}
	if listed, err := adm.ListTransactions(ctx, ids, nil); err == nil {
		for _, l := range listed.Sorted() {
			txnOf[l.ProducerID] = l.TxnID
		}
	}
	var txnIDs []string
	for _, id := range txnOf {
		txnIDs = append(txnIDs, id)
	}
	started := map[string]time.Time{}
	if len(txnIDs) > 0 {
		if dt, err := adm.DescribeTransactions(ctx, txnIDs...); err == nil {
			for _, d := range dt.Sorted() {
				if d.Err == nil && d.StartTimestamp > 0 {
					started[d.TxnID] = time.UnixMilli(d.StartTimestamp)
				}
			}
		}
	}
	kept := out[:0]
	for _, b := range out {
		b.TxnID = txnOf[b.ProducerID]
		b.Started = started[b.TxnID]
		if b.TxnID != "" && b.TxnID == ownTxnID {
			continue // this restore's, its markers on the way
		}
		kept = append(kept, b)
	}
	return kept, nil
}

func toSet(parts []int32) map[int32]struct{} {
	m := make(map[int32]struct{}, len(parts))
	for _, p := range parts {
		m[p] = struct{}{}
	}
	return m
}

// notReadableError is the error of a restore whose committed records a
// transaction of another producer keeps from read_committed readers.
func notReadableError(topic string, waited time.Duration, behind []string, blockers []Blocker, derr error, bootstrap string) error {
	for i := range blockers {
		blockers[i].Bootstrap = bootstrap
	}
	var b strings.Builder
	var cmds []string // on lines of their own when printed (english.Advice)
	fmt.Fprintf(&b, "the restore's transaction on offsets topic %q committed, but after %s its records are not readable with read_committed on %s", topic, waited, strings.Join(behind, ", "))
	switch {
	case len(blockers) > 0:
		b.WriteString("; held by:")
		for _, x := range blockers {
			fmt.Fprintf(&b, "\n  - %s", x)
		}
		b.WriteString("\nthis restore wrote what it had to: do not roll it back. Wait for that transaction to end (the broker aborts it after its transaction.timeout.ms), or abort it:")
		seen := map[string]bool{}
		for _, x := range blockers {
			if cmd := x.AbortCommand(); !seen[cmd] {
				seen[cmd] = true
				cmds = append(cmds, cmd)
				fmt.Fprintf(&b, "\n  %s", cmd)
			}
		}
	default:
		why := "the brokers name no open transaction there now"
		if derr != nil {
			why = fmt.Sprintf("the brokers could not say whose (%v)", derr)
		}
		find := fmt.Sprintf("kafka-transactions.sh --bootstrap-server %s find-hanging --topic %s", orBrokers(bootstrap), topic)
		cmds = append(cmds, find)
		fmt.Fprintf(&b, " (an open transaction of another producer holds the last stable offset below them; %s)\nthis restore wrote what it had to: do not roll it back. Wait for that transaction to end, or find and abort it: %s", why, find)
	}
	b.WriteString("\nthen run the same restore again: it finds nothing to do once its records are readable")
	return advise(fmt.Errorf("%w: %s", ErrNotReadable, b.String()), cmds...)
}
