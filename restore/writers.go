package restore

// This file answers, after a restore's verification failed, who wrote
// what differs: a restore knows its own records (snapshot.RestoreHeader),
// so a record written after its commit by anyone else means another
// writer (another restore, a connector's task, a tool) changed the offsets
// since, and restoring this restore's undo snapshot would undo that too.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// otherWriters reads the records written to the offsets topics of res
// after this restore's own (the last it wrote to each partition) and
// names who wrote them: "restore <undo ID>" for another restore of
// offsetkeeper, "a writer without offsetkeeper's header" for anyone else.
// It returns nil when no one else wrote, or when it cannot tell (a read
// that fails is no proof either way: the caller then advises as before).
func otherWriters(ctx context.Context, cl *kgo.Client, res *Result, own string) []string {
	if res == nil || len(res.Topics) == 0 {
		return nil
	}
	// Bounded: this only chooses the advice.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	offsets := map[string]map[int32]kgo.Offset{}
	want := 0
	ends := map[string]map[int32]int64{}
	var topics []string
	for _, t := range res.Topics {
		topics = append(topics, t.Topic)
	}
	eo, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil
	}
	for _, t := range res.Topics {
		for p, last := range t.Last {
			e, ok := eo.Lookup(t.Topic, p)
			if !ok || e.Err != nil || e.Offset <= last+2 { // its commit marker follows its last record
				continue
			}
			if offsets[t.Topic] == nil {
				offsets[t.Topic], ends[t.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
			}
			offsets[t.Topic][p] = kgo.NewOffset().At(last + 1)
			ends[t.Topic][p] = e.Offset
			want++
		}
	}
	if want == 0 {
		return nil
	}
	rcl, err := kgo.NewClient(append(slices.Clone(cl.Opts()), kgo.ConsumePartitions(offsets), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return nil
	}
	defer rcl.Close()
	seen := map[string]bool{}
	for want > 0 {
		fs := rcl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return nil
		}
		if fs.Err() != nil {
			return nil
		}
		fs.EachRecord(func(r *kgo.Record) {
			who := "a writer without offsetkeeper's header (a connector's task, or another tool)"
			for _, h := range r.Headers {
				if h.Key == snapshot.RestoreHeader {
					who = "restore " + string(h.Value)
				}
			}
			if who != "restore "+own {
				seen[who] = true
			}
		})
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if end, ok := ends[p.Topic][p.Partition]; ok && len(p.Records) > 0 && p.Records[len(p.Records)-1].Offset+1 >= end-1 {
				delete(ends[p.Topic], p.Partition)
				want--
			}
		})
		if len(seen) > 0 {
			break // one is enough to change the advice
		}
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// otherWriterAdvice is what a restore whose verification failed says
// when others wrote after it: not the roll back, which would undo them,
// but the diff that shows what differs now.
func (r *run) otherWriterAdvice(writers []string) string {
	var at time.Time
	if snap := r.req.Snapshot; snap.Reason == journal.ReasonAt {
		at = snap.CreatedAt
	}
	diff := r.req.Commands.Diff(r.req.Snapshot.ID, at, r.req.Connectors...)
	return fmt.Sprintf("%s wrote to the offsets topics after this restore committed: restoring its undo snapshot %s would undo that too, so do not; "+
		"see what differs now: %s", strings.Join(writers, " and "), r.report.Undo, diff)
}
