package restore_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// TestIncludeUnowned: the keys no connector owns are not restored unless
// --include-unowned, and the plan says so naming the flag; with it the dry
// run lists them and writes nothing, the run writes them exact bytes to
// their partitions and verifies them, and a second run finds nothing to do.
func TestIncludeUnowned(t *testing.T) {
	ctx := t.Context()
	old, _ := oldCluster(t)
	raw := []*kgo.Record{
		{Topic: snapshot.DefaultOffsetsTopic, Partition: 3, Key: []byte{0xff, 0x00, 'x'}, Value: []byte{0xc3, 0x28}},
		{Topic: snapshot.DefaultOffsetsTopic, Partition: 1, Key: []byte(`{"not":"a list"}`), Value: []byte(`{"position":1}`)},
	}
	manual, err := kgo.NewClient(append(old.cl.Opts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	if err := manual.ProduceSync(ctx, raw...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	snap, err := capture.Capture(ctx, old.cl, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	snap.ID = "20261202T000000.000000Z-0a0a0a"
	if snap.Unparsed() != 2 {
		t.Fatalf("snapshot holds %d unowned keys", snap.Unparsed())
	}
	dst := newConnectCluster(t, "new-cluster")
	st, err := store.OpenStore(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out bytes.Buffer
	env := restore.Env{Client: dst.cl, Store: st, Out: &out, Warn: &out}
	opts := restore.Options{AllowOtherCluster: true}

	rep, err := restore.Run(ctx, env, restore.Request{Snapshot: snap, Options: opts, DryRun: true})
	if err != nil || len(rep.Unowned) != 0 || !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "holds 2 offsets topic keys that are not [connector, {partition}]; no connector owns them and they are not restored (restore --include-unowned writes them too)") {
		t.Fatalf("without --include-unowned: %v\n%s", err, out.String())
	}
	opts.IncludeUnowned = true
	out.Reset()
	rep, err = restore.Run(ctx, env, restore.Request{Snapshot: snap, Options: opts, DryRun: true})
	if err != nil || len(rep.Unowned) != 2 || !strings.Contains(out.String(), "unowned keys (no connector owns them; --include-unowned): 2 keys, 2 to write") ||
		strings.Contains(out.String(), "they are not restored") {
		t.Fatalf("dry run: %v, %+v\n%s", err, rep.Unowned, out.String())
	}
	checkUnowned := func(want int) {
		t.Helper()
		live, err := capture.Capture(ctx, dst.cl, capture.Options{ConfigTopicOptional: true})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range live.SourceTable().Collect() {
			if o.Connector != "" {
				continue
			}
			n++
			found := false
			for _, r := range raw {
				found = found || (bytes.Equal(o.Key, r.Key) && bytes.Equal(o.Value, r.Value) && o.Partition == r.Partition)
			}
			if !found {
				t.Errorf("live unowned key %q = %q on partition %d", o.Key, o.Value, o.Partition)
			}
		}
		if n != want {
			t.Errorf("%d unowned keys live, want %d", n, want)
		}
	}
	checkUnowned(0)

	out.Reset()
	rep, err = restore.Run(ctx, env, restore.Request{Snapshot: snap, Options: opts})
	if err != nil || !strings.Contains(out.String(), "applied and verified: 2 unowned keys no connector owns") || rep.Undo == "" {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkUnowned(2)
	out.Reset()
	rep, err = restore.Run(ctx, env, restore.Request{Snapshot: snap, Options: opts})
	if err != nil || !strings.Contains(out.String(), "nothing to do") || rep.Unowned[0].Action != restore.Unchanged {
		t.Errorf("again: %v %+v\n%s", err, rep.Unowned, out.String())
	}
}
