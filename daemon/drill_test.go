package daemon

import (
	"context"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// drillableSnapshot is fakeSnapshot with its offsets topic described and
// its key on its murmur2 partition, as a capture stores it.
func drillableSnapshot(context.Context) (*snapshot.Snapshot, error) {
	s := fakeSnapshot(map[int32]int64{0: 10, 1: 20})
	parts := make([]snapshot.TopicPartition, 5)
	for i := range parts {
		parts[i].Partition = int32(i)
	}
	s.Topics = []snapshot.Topic{{Name: "connect-offsets", Role: snapshot.RoleOffsets, Partitions: parts}}
	offs := s.SourceTable().Collect()
	offs[0].Partition = snapshot.PartitionFor(offs[0].Key, 5)
	s.SetSourceOffsets(offs)
	return s, nil
}

// The leader drills the newest full snapshot once its first snapshot is
// stored, stores the report and sets the drill metrics.
func TestDaemonDrillsNewestFullSnapshot(t *testing.T) {
	sto := memStore(t)
	d := &Daemon{
		Config:   Config{Schedule: "@every 1h", DrillSchedule: "@every 1h"},
		Store:    sto,
		Snapshot: drillableSnapshot,
	}
	d.Drill = func(ctx context.Context) (*drill.Report, error) {
		rep, err := drill.NewestFull(ctx, drill.Env{Store: sto}, drill.Request{SkipComplete: "test: no Connect"})
		if err != nil {
			return nil, err
		}
		_, err = drill.Save(ctx, sto, rep, nil)
		return rep, err
	}
	if got := metric(t, d, "offsetkeeper_drill_last_success_timestamp_seconds"); got != 0 {
		t.Fatalf("offsetkeeper_drill_last_success_timestamp_seconds before the first drill = %v, want 0", got)
	}
	r := start(t, d)
	waitFor(t, "a drill", func() bool {
		return metric(t, d, "offsetkeeper_drills_total", "result", drill.Passed)+metric(t, d, "offsetkeeper_drills_total", "result", drill.Failed)+
			metric(t, d, "offsetkeeper_drills_total", "result", "error") > 0
	})
	r.stop(t)
	if n := metric(t, d, "offsetkeeper_drills_total", "result", drill.Passed); n != 1 {
		t.Fatalf("passed drills %v, want 1; logs:\n%s", n, r.logs)
	}
	if metric(t, d, "offsetkeeper_drill_last_success_timestamp_seconds") <= 0 || metric(t, d, "offsetkeeper_drill_failed_checks") != 0 || metric(t, d, "offsetkeeper_drill_rto_seconds") < 0 {
		t.Errorf("drill metrics: last success %v, failed checks %v, rto %v", metric(t, d, "offsetkeeper_drill_last_success_timestamp_seconds"),
			metric(t, d, "offsetkeeper_drill_failed_checks"), metric(t, d, "offsetkeeper_drill_rto_seconds"))
	}
	rep, n, err := drill.Last(context.Background(), sto)
	if err != nil || n != 1 || rep.Result != drill.Passed || rep.State.SnapshotID != listIDs(t, sto)[0] {
		t.Fatalf("stored drill: %v, %d reports, %+v", err, n, rep)
	}
}
