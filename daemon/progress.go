package daemon

import (
	"time"

	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// DefaultProgressEvery is how often the CLI's daemon logs the progress of
// a run still going (Config.ProgressEvery).
const DefaultProgressEvery = 30 * time.Second

// watchProgress logs, every Config.ProgressEvery of a run still going, one
// INFO line "snapshot run in progress" with the phase, the records and
// bytes fetched so far and the time since the run began, from
// Daemon.Progress (reset here). The returned stop ends it; a run shorter
// than ProgressEvery logs nothing. Without Progress or ProgressEvery it
// does nothing.
func (d *Daemon) watchProgress() (stop func()) {
	every := d.Config.ProgressEvery
	if d.Progress == nil || every <= 0 {
		return func() {}
	}
	d.Progress.Reset()
	tick := time.NewTicker(every)
	// The first tick comes every after the ticker began, a hair less
	// after Watch did: half of it is due.
	stopWatch := d.Progress.Watch(every/2, tick.C, time.Now, func(st capture.ProgressState, done bool) {
		if done {
			return // the run's summary line says the rest
		}
		d.log().Info("snapshot run in progress", "phase", st.Phase, "records", st.Read, "bytes", st.Bytes,
			"elapsed", st.Elapsed.Round(time.Second))
	})
	return func() {
		tick.Stop()
		stopWatch()
	}
}
