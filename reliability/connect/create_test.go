package connect

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/realconnect"
)

// TestRealWorkerCreateConnectors is a disaster recovery on real workers:
// the old cluster's worker is gone, a new cluster holds a copy of the
// topics the sink reads (at the same offsets, as a mirror would), and
// restore --create-connectors --resume brings the source and the sink back
// on the new cluster's worker with the snapshot's configs, STOPPED until
// their offsets are written. They carry on exactly where the snapshot left
// them: the source writes only the lines after it, the sink delivers every
// record once (out.txt holds each value fed exactly once, in order).
func TestRealWorkerCreateConnectors(t *testing.T) {
	realconnect.Dir(t)
	t.Parallel()
	p := newPipeline(t, realconnect.Options{}, t.TempDir()+"/store")
	p.feed(5)
	p.createSource("")
	p.createSink()
	p.settle()
	id := p.snapshot()
	oldConfigs := map[string]string{srcName: string(p.rest.Must(200, "GET", "/connectors/"+srcName+"/config", nil).Body), sinkName: string(p.rest.Must(200, "GET", "/connectors/"+sinkName+"/config", nil).Body)}
	p.w.Stop() // the old cluster's Connect is gone

	dr := realconnect.NewCluster(t, kfake.ClusterID("offsetkeeper-dr-create"))
	drp := newPipelineOn(t, dr, realconnect.Options{}, p.store)
	copyTopics(t, p.c, dr, linesT, eventsT)
	drp.in, drp.out, drp.lines, drp.events, drp.fed = p.in, p.out, p.lines, p.events, p.fed

	r := drp.bin(0, "restore", id, "--allow-other-cluster", "--create-connectors", "--resume")
	for _, want := range []string{"created: 2 connectors STOPPED", "connectors match the snapshot", "resumed: connector " + srcName, "resumed: connector " + sinkName} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("restore output lacks %q:\n%s", want, r)
		}
	}
	for name, was := range oldConfigs {
		got := string(drp.rest.Must(200, "GET", "/connectors/"+name+"/config", nil).Body)
		var g, w map[string]string
		if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(was), &w) != nil || !maps.Equal(g, w) {
			t.Errorf("GET /connectors/%s/config on the new worker: %s, the old one's: %s", name, got, was)
		}
	}
	drp.feed(4)
	drp.settle() // every record exactly once, in order
	done := strings.Count(strings.Join(realconnect.ReadTopic(t, dr, linesT, drp.lines), "\n"), "line-")
	if done != drp.lines {
		t.Errorf("the new cluster's lines holds %d lines, want %d (the copy and the 4 after the snapshot, none twice)", done, drp.lines)
	}
}

// copyTopics copies every record of topics from one cluster to the other,
// partition by partition, in order, and checks that each landed at the
// offset it had.
func copyTopics(t *testing.T, from, to *realconnect.Cluster, topics ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends := ends(t, kadm.NewClient(from.Client), topics...)
	cl, err := kgo.NewClient(kgo.SeedBrokers(from.KC.ListenAddrs()...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	total := int64(0)
	for _, n := range ends {
		total += n
	}
	var recs []*kgo.Record
	for int64(len(recs)) < total && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Offset: r.Offset})
		})
	}
	prod := producer(t, to)
	for _, r := range recs {
		want := r.Offset
		res, err := prod.ProduceSync(ctx, r).First()
		if err != nil {
			t.Fatal(err)
		}
		if res.Offset != want {
			t.Fatalf("copy of %s/%d@%d landed at offset %d", r.Topic, r.Partition, want, res.Offset)
		}
	}
}
