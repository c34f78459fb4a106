package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// TestDaemonTopicGone: a worker topic missing while the store holds
// snapshots of it is reported as gone (deleted, or another cluster) with the
// restore that brings it back, not as a setting to check.
func TestDaemonTopicGone(t *testing.T) {
	t.Parallel()
	store := memStore(t)
	snap := fakeSnapshot(map[int32]int64{0: 1})
	snap.Topics = []snapshot.Topic{{Name: "connect-offsets", Role: snapshot.RoleOffsets}}
	info, err := store.Snapshots().Put(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	st := make(steps)
	d := &Daemon{Config: Config{Schedule: "@every 1s"}, Store: store, Snapshot: st.snapshot}
	r := start(t, d)
	st <- returns(nil, &capture.MissingTopicError{Topic: "connect-offsets", What: "offsets topic", Flag: "--offsets-topic (offset.storage.topic of the worker)"})
	waitFor(t, "the failed run", func() bool { return runs(t, d, ResultFailure) == 1 })
	logs := r.logs.String()
	for _, want := range []string{`offsets topic \"connect-offsets\" is gone, but the store holds its history`, "offsetkeeper restore " + info.ID + " --allow-other-cluster --dry-run"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "restore latest") {
		t.Errorf("the advice restores latest, the snapshot taken after the deletion once the topic is back:\n%s", logs)
	}
	if strings.Contains(logs, "check --offsets-topic") {
		t.Errorf("a deleted topic blamed on configuration:\n%s", logs)
	}
	// A topic the store never read is a setting to check, not a deletion.
	st <- returns(nil, &capture.MissingTopicError{Topic: "connect-offsetz", What: "offsets topic", Flag: "--offsets-topic (offset.storage.topic of the worker)"})
	waitFor(t, "the second failed run", func() bool { return runs(t, d, ResultFailure) == 2 })
	if logs := r.logs.String(); !strings.Contains(logs, `read offsets topic \"connect-offsetz\": topic does not exist: check --offsets-topic`) {
		t.Errorf("a topic the store never read is not blamed on the setting:\n%s", logs)
	}
}
