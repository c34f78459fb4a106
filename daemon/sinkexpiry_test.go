package daemon

import (
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestStampEmptySince: a snapshot run records when the expiry guard saw
// a group become Empty, for Empty groups only, and keeps a time the
// snapshot already has.
func TestStampEmptySince(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	had := at.Add(-time.Hour)
	x := &sinkExpiry{since: map[string]time.Time{"connect-a": at, "connect-b": at, "connect-c": at}}
	snap := &snapshot.Snapshot{SinkGroups: []snapshot.SinkGroup{
		{Group: "connect-a", State: "Empty"},
		{Group: "connect-b", State: "Stable", Members: 1},
		{Group: "connect-c", State: "Empty", EmptySince: &had},
		{Group: "connect-d", State: "Empty"},
	}}
	x.stamp(snap)
	g := snap.SinkGroups
	if g[0].EmptySince == nil || !g[0].EmptySince.Equal(at) || g[1].EmptySince != nil || !g[2].EmptySince.Equal(had) || g[3].EmptySince != nil {
		t.Fatalf("stamped %v %v %v %v", g[0].EmptySince, g[1].EmptySince, g[2].EmptySince, g[3].EmptySince)
	}
	if warnAhead(time.Minute) != 30*time.Second || warnAhead(7*24*time.Hour) != 24*time.Hour {
		t.Errorf("warnAhead: %v, %v", warnAhead(time.Minute), warnAhead(7*24*time.Hour))
	}
}
