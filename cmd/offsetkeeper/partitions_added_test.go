package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestOffsetsTopicPartitionsAdded: partitions added to the offsets topic
// (kafka-topics.sh --alter --partitions 30 where it had 25) lose nothing,
// but the snapshot after it warned "deleted and created again?" and told
// to restore the earlier snapshot instead of latest, which would rewind
// every offset committed since. It now says partitions were added, what
// that does to Connect's reads, and that the restore's plan gives the
// tombstone of each stale copy: once a connector commits on its key's
// partition of 30, a restore of it prints the kcat tombstone for the copy
// left on its partition of 25.
func TestOffsetsTopicPartitionsAdded(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	c.snapshot()
	ctx := context.Background()
	topic := connectdemo.DefaultOffsetsTopic
	if _, err := c.adm.UpdatePartitions(ctx, 30, topic); err != nil {
		t.Fatal(err)
	}
	_, stderr := c.mustRun(exitOK, "snapshot")
	fits(t, "snapshot", stderr)
	said := flat(stderr)
	if strings.Contains(said, "created again") || !strings.Contains(said, `offsets topic "`+topic+`" has 30 partitions, it had 25: partitions were added`) {
		t.Fatalf("the snapshot after partitions were added:\n%s", stderr)
	}

	// The connector commits on its key's partition of 30, as Connect's
	// producer does once its metadata has the new count.
	key := []byte(`["` + connectdemo.ConnFile + `",{"filename":"/data/testdata.txt"}]`)
	newPart, oldPart := snapshot.PartitionFor(key, 30), snapshot.PartitionFor(key, 25)
	if newPart == oldPart {
		t.Fatalf("key %s is on partition %d of both counts: pick another", key, newPart)
	}
	rec := &kgo.Record{Topic: topic, Partition: newPart, Key: key, Value: []byte(`{"position":424242}`)}
	pcl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(c.brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	if err := pcl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	id := c.snapshot()
	out, _ := c.mustRun(exitOK, "restore", id, "--connector", connectdemo.ConnFile, "--dry-run")
	cmd := pasted(out, "printf ")
	if !strings.Contains(cmd, "| kcat -P ") || !strings.Contains(cmd, " -p "+strconv.Itoa(int(oldPart))+" ") {
		t.Fatalf("no tombstone for the copy on partition %d in:\n%s", oldPart, out)
	}
}
