package journal

import (
	"testing"
	"time"
)

// A reset seen at the first observation after an epoch's base snapshot
// goes back to the first millisecond after the snapshot, which is
// restorable; any later one to its own moment just before.
func TestUndoMoment(t *testing.T) {
	epoch := "20261202T061854.241904Z-912883"
	base := time.Date(2026, 12, 2, 6, 18, 54, 241904000, time.UTC)
	ms := func(d time.Duration) time.Time { return base.Truncate(time.Millisecond).Add(d) }
	for _, tc := range []struct {
		before, at, want time.Time
	}{
		{ms(0), ms(time.Second), ms(time.Millisecond)},                  // truncated before the snapshot
		{ms(2 * time.Second), ms(3 * time.Second), ms(2 * time.Second)}, // later: as recorded
		{ms(-time.Second), ms(0), ms(-time.Second)},                     // not after the floor: as recorded
		{ms(time.Millisecond), ms(time.Second), ms(time.Millisecond)},   // at the floor
	} {
		if got := UndoMoment(epoch, tc.before, tc.at); !got.Equal(tc.want) {
			t.Errorf("UndoMoment(%v, %v) = %v, want %v", tc.before, tc.at, got, tc.want)
		}
		if got := UndoMoment("not-an-id", tc.before, tc.at); !got.Equal(tc.before) {
			t.Errorf("UndoMoment of a bad epoch = %v, want %v", got, tc.before)
		}
	}
	if !base.Before(ms(time.Millisecond)) {
		t.Fatal("the floor is not after the snapshot")
	}
}
