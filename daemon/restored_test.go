package daemon

import (
	"maps"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// TestRestoredSince: a sink connector whose offsets an offsetkeeper
// restore rolled back between two snapshot runs is no reset for the
// moved-backwards gauge (issue 40: the alert fired on every rollback); one
// restored before the previous run, or not at all, still counts.
func TestRestoredSince(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	undo := func(id string, at time.Time, scope ...string) snapshot.Info {
		return snapshot.Info{ID: id, Kind: snapshot.KindUndo, CreatedAt: at, Scope: scope}
	}
	infos := []snapshot.Info{
		undo("u1", t0.Add(-time.Minute), "old"),
		undo("u2", t0.Add(30*time.Second), "rolled", "zero"),
		{ID: "f1", Kind: snapshot.KindFull, CreatedAt: t0.Add(40 * time.Second)},
		undo("u3", t0.Add(2*time.Minute), "later"),
	}
	counts := map[string]int{"rolled": 3, "old": 2, "later": 1, "zero": 0, "other": 4}
	got := restoredSince(counts, infos, t0, t0.Add(time.Minute))
	if want := map[string]string{"rolled": "u2"}; !maps.Equal(got, want) {
		t.Errorf("restoredSince = %v, want %v", got, want)
	}
	if want := map[string]int{"rolled": 0, "old": 2, "later": 1, "zero": 0, "other": 4}; !maps.Equal(counts, want) {
		t.Errorf("counts = %v, want %v", counts, want)
	}
}
