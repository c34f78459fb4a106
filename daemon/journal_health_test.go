package daemon

import (
	"testing"
	"time"
)

// TestEpochRetryBounded: while every epoch start fails (snapshot reads
// denied), the journal asked for a full snapshot at once each time: 798
// in 75 s on MinIO. Simulated over a day of the @hourly schedule, it now
// asks at most a few times an hour.
func TestEpochRetryBounded(t *testing.T) {
	var (
		now      time.Duration
		fails    int
		askAt    time.Duration
		perHour  = map[int]int{}
		schedule = time.Hour
	)
	take := func() { // a snapshot stored, its epoch start failed
		perHour[int(now/time.Hour)]++
		fails++
		askAt = now + epochRetry(fails)
	}
	take() // the first run
	for now = 0; now < 24*time.Hour; now += 10 * time.Second {
		switch {
		case now > 0 && now%schedule == 0:
			take()
		case now >= askAt:
			take()
		}
	}
	if perHour[0] > 6 {
		t.Errorf("%d snapshots in the first hour, want at most 6", perHour[0])
	}
	for h := 1; h < 24; h++ {
		if perHour[h] > 3 {
			t.Errorf("%d snapshots in hour %d, want at most 3", perHour[h], h)
		}
	}
	t.Logf("snapshots per hour with every epoch start failing: first %d, then %d", perHour[0], perHour[5])
	for n, want := range map[int]time.Duration{0: time.Minute, 1: 2 * time.Minute, 2: 4 * time.Minute, 5: 30 * time.Minute, 100: 30 * time.Minute} {
		if got := epochRetry(n); got != want {
			t.Errorf("epochRetry(%d) = %v, want %v", n, got, want)
		}
	}
}
