package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestRestoreRepartitionedDiffAgreesWithVerify: after a bad reset and the
// offsets topic growing from 25 to 32 partitions (most keys' murmur2
// partition moves; their old copies stay behind), a restore writes every
// key on its new partition and gives the copies left behind that the reset
// changed the snapshot's value again. Its own verification and diff --live
// then agree: nothing differs, whichever copy a worker reads last.
func TestRestoreRepartitionedDiffAgreesWithVerify(t *testing.T) {
	spec := connectdemo.DefaultSpec()
	c := newCluster(t, &spec)
	c.stopAll()
	id := c.snapshot()
	c.badReset()
	if _, err := c.adm.CreatePartitions(context.Background(), 7, connectdemo.DefaultOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	if n := c.partitions(connectdemo.DefaultOffsetsTopic); n != 32 {
		t.Fatalf("offsets topic has %d partitions, want 32", n)
	}
	moved := 0
	snap := c.capture()
	for _, o := range snap.SourceTable().Collect() {
		if o.Topic == connectdemo.DefaultOffsetsTopic && snapshot.PartitionFor(o.Key, 32) != o.Partition {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no key is off its murmur2 partition after the topic grew: nothing tested")
	}

	out, _ := c.mustRun(0, "restore", id, "--output", "json")
	var doc restore.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Verified == nil || !doc.Verified.OK || len(doc.Verified.Differences) != 0 {
		t.Fatalf("the restore's verification: %+v", doc.Verified)
	}
	code, dout, derr := c.run("diff", id, "--live", "--exit-code", "--output", "json")
	if code != 0 {
		t.Fatalf("diff --live after a verified restore: exit %d\n%s\n%s", code, dout, derr)
	}
	// The copies the topic's growth left behind stay (a tombstone there
	// could be read after the value on the new partition and remove the
	// key), but every copy a worker may read holds the snapshot's value.
	st, err := store.OpenStore(context.Background(), c.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want, _, err := st.Snapshots().GetWith(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	type place struct {
		part int32
		key  string
	}
	held := map[place]string{}
	for _, o := range want.SourceTable().Collect() {
		if o.Topic == connectdemo.DefaultOffsetsTopic {
			held[place{o.Partition, string(o.Key)}] = string(o.Value)
		}
	}
	left := 0
	for _, o := range c.capture().SourceTable().Collect() {
		if o.Topic != connectdemo.DefaultOffsetsTopic || o.Connector == "" || snapshot.PartitionFor(o.Key, 32) == o.Partition {
			continue
		}
		left++
		if v, ok := held[place{o.Partition, string(o.Key)}]; !ok || v != string(o.Value) {
			t.Errorf("the copy of %s on partition %d holds %s; the snapshot held %q there", o.Key, o.Partition, o.Value, v)
		}
	}
	if left == 0 {
		t.Error("no copy off its new murmur2 partition is left: the test no longer covers a grown topic")
	}
}
