package capture

import (
	"sync/atomic"
	"testing"
	"time"
)

// Watch reports at each tick once after has passed, and once more at stop
// with done; a fake clock and ticks make it exact.
func TestProgressWatch(t *testing.T) {
	var p Progress
	var elapsed atomic.Int64
	now := func() time.Time { return time.Unix(0, elapsed.Load()) }
	ticks := make(chan time.Time)
	type call struct {
		st   ProgressState
		done bool
	}
	calls := make(chan call, 10)
	stop := p.Watch(2*time.Second, ticks, now, func(st ProgressState, done bool) { calls <- call{st, done} })

	p.SetPhase(PhaseOffsets)
	p.topic("connect-offsets").Add(10, 1000)
	elapsed.Add(int64(time.Second))
	ticks <- now() // before the threshold: nothing
	elapsed.Add(int64(1500 * time.Millisecond))
	ticks <- now()
	c := <-calls
	if c.done || c.st.Phase != PhaseOffsets || c.st.Read != 10 || c.st.Bytes != 1000 || c.st.Elapsed != 2500*time.Millisecond {
		t.Errorf("tick after 2.5s: %+v", c)
	}
	p.SetStage(PhaseApply)
	p.Written(7)
	p.GroupCommitted()
	stop()
	c = <-calls
	if !c.done || c.st.Phase != PhaseApply || c.st.Written != 7 || c.st.Groups != 1 {
		t.Errorf("at stop: %+v", c)
	}
	if len(calls) != 0 {
		t.Errorf("%d calls more", len(calls))
	}
}

// A run shorter than the threshold reports nothing, not even at stop; a
// nil Progress counts nothing and reads as starting.
func TestProgressWatchShortRun(t *testing.T) {
	var p *Progress
	p.SetPhase(PhaseOffsets)
	p.Written(1)
	p.topic("x").Add(1, 1)
	clock := time.Unix(0, 0)
	stop := p.Watch(2*time.Second, nil, func() time.Time { return clock }, func(ProgressState, bool) { t.Error("reported") })
	clock = clock.Add(time.Second)
	stop()
	if st := p.State(); st.Phase != "starting" || st.Read != 0 {
		t.Errorf("nil Progress: %+v", st)
	}
}
