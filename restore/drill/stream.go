package drill

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// readBatch is how many partitions of the scratch cluster the read-back
// holds at once, as a restore's verification reads.
const readBatch = 4

// topicPart names one partition of a topic.
type topicPart struct {
	topic string
	part  int32
}

// compareScratch reads the scratch cluster's offsets topics back a few
// partitions at a time (read_committed, to the last stable offset, as
// Connect's workers read them with exactly-once support) and compares
// each partition with the keys it must hold (want, of state table tab),
// byte for byte: each key on its partition with its value, and nothing
// else but the keys of ignore. It holds one batch of partitions at a
// time, not the whole read-back; and the embedded scratch cluster drops
// each partition's records once they are compared (DeleteRecords), so
// that its copy of the state shrinks as the read-back goes.
func compareScratch(ctx context.Context, sc *scratch, tab *snapshot.SourceTable, want []expect, ignore map[string]bool, topics []string, f *findings) error {
	byPart := map[topicPart][]int32{} // indices into want
	for wi, e := range want {
		tp := topicPart{tab.Topic(e.i), e.part}
		byPart[tp] = append(byPart[tp], int32(wi))
	}
	adm := kadm.NewClient(sc.cl)
	for _, t := range topics {
		_, err := capture.ReadPartitions(ctx, sc.cl, t, readBatch, func(pk *capture.PartitionKeys) error {
			tp := topicPart{t, pk.Partition}
			comparePartition(tab, want, byPart[tp], ignore, pk, f)
			delete(byPart, tp)
			if sc.cluster == nil {
				return nil
			}
			resp, err := adm.DeleteRecords(ctx, kadm.Offsets{t: {pk.Partition: kadm.Offset{Topic: t, Partition: pk.Partition, At: -1}}})
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				return fmt.Errorf("drop the records of %s/%d compared from the scratch cluster: %w", t, pk.Partition, err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, capture.ErrTopicMissing) { // a topic missing: each of its keys is missing below
			return fmt.Errorf("read back topic %q from the scratch cluster: %w", t, err)
		}
	}
	// Partitions that were not read: every key wanted there is missing.
	left := make([]topicPart, 0, len(byPart))
	for tp := range byPart {
		left = append(left, tp)
	}
	slices.SortFunc(left, func(a, b topicPart) int {
		if a.topic != b.topic {
			return cmp.Compare(a.topic, b.topic)
		}
		return int(a.part - b.part)
	})
	for _, tp := range left {
		for _, wi := range byPart[tp] {
			missing(tab, want[wi], f)
		}
	}
	return nil
}

// comparePartition compares one partition read back (pk) with the keys
// it must hold (the want entries at idx).
func comparePartition(tab *snapshot.SourceTable, want []expect, idx []int32, ignore map[string]bool, pk *capture.PartitionKeys, f *findings) {
	found := 0
	for _, wi := range idx {
		e := want[wi]
		v, ok := pk.Lookup(tab.Key(e.i))
		switch {
		case !ok:
			missing(tab, e, f)
		case !bytes.Equal(tab.Value(e.i), v):
			found++
			f.fail(Failure{Cause: CauseValueDiffers, Connector: tab.Connector(e.i), Topic: tab.Topic(e.i), Partition: e.part,
				Detail: fmt.Sprintf("key %q reads back %q, the state holds %q", tab.Key(e.i), v, tab.Value(e.i))})
		default:
			found++
		}
	}
	if pk.Len() == found {
		return
	}
	wanted := make(map[string]bool, len(idx))
	for _, wi := range idx {
		wanted[string(tab.Key(want[wi].i))] = true
	}
	for k := range pk.All() {
		if wanted[string(k)] || ignore[pk.Topic+"\x00"+string(k)] {
			continue
		}
		conn := ""
		if name, ok := capture.KeyConnector(k); ok {
			conn = string(name)
		}
		f.fail(Failure{Cause: CauseUnexpectedKey, Connector: conn, Topic: pk.Topic, Partition: pk.Partition,
			Detail: fmt.Sprintf("key %q is in the scratch cluster, and not in the state", k)})
	}
}

// missing fails a key wanted that the scratch cluster does not hold.
func missing(tab *snapshot.SourceTable, e expect, f *findings) {
	f.fail(Failure{Cause: CauseKeyMissing, Connector: tab.Connector(e.i), Topic: tab.Topic(e.i), Partition: e.part,
		Detail: fmt.Sprintf("key %q is not in the scratch cluster after the restore", tab.Key(e.i))})
}
