package daemon

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// BuildInfo names the running program for offsetkeeper_build_info.
type BuildInfo struct {
	// Version and Revision (the commit) default to "unknown"; GoVersion to
	// the runtime's.
	Version, Revision, GoVersion string
}

// LivenessGrace is how late the scheduler's next tick, or a run past its
// RunTimeout and ShutdownTimeout, may be before /livez fails.
const LivenessGrace = 2 * time.Minute

// storeStatsTTL is how long the store gauges reuse one listing, so that
// scrapes do not list the bucket each time.
const storeStatsTTL = time.Minute

// opsMetrics are the series about the program and the store, besides the
// runs': build info, what the store holds, the last snapshot's warnings.
type opsMetrics struct {
	build    *prometheus.GaugeVec
	warnings prometheus.Gauge
	// unread counts the sink groups the last snapshot could not read.
	unread prometheus.Gauge
	store  *storeCollector
}

func newOpsMetrics(reg *prometheus.Registry, b BuildInfo, list func(context.Context) ([]snapshot.Info, error)) *opsMetrics {
	m := &opsMetrics{
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_build_info",
			Help: "Always 1; its labels name the version, commit and Go version of the running daemon.",
		}, []string{"version", "revision", "goversion"}),
		warnings: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_snapshot_warnings",
			Help: "Warnings of the last snapshot this daemon stored (keys in the wrong partition, say; see its warnings field).",
		}),
		unread: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_snapshot_unread_groups",
			Help: "Sink groups the last snapshot this daemon stored could not read (named in its unread_groups and the log); alert above 0.",
		}),
		store: &storeCollector{
			list: list,
			count: prometheus.NewDesc("offsetkeeper_store_snapshots",
				"Snapshots in the store, as a listing at most a minute old finds them (every replica's).", nil, nil),
			age: prometheus.NewDesc("offsetkeeper_store_newest_snapshot_age_seconds",
				"Age of the newest full snapshot in the store, in seconds, as a listing at most a minute old finds it; absent while the store is empty or cannot be listed.", nil, nil),
			errs: prometheus.NewDesc("offsetkeeper_store_list_errors",
				"1 when the last listing of the store for these gauges failed, else 0.", nil, nil),
		},
	}
	m.build.WithLabelValues(or(b.Version, "unknown"), or(b.Revision, "unknown"), or(b.GoVersion, runtime.Version())).Set(1)
	reg.MustRegister(m.build, m.warnings, m.unread, m.store)
	return m
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// storeCollector lists the store when scraped, at most once per
// storeStatsTTL.
type storeCollector struct {
	list             func(context.Context) ([]snapshot.Info, error)
	count, age, errs *prometheus.Desc

	mu     sync.Mutex
	at     time.Time
	n      int
	newest time.Time
	err    error
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.count
	ch <- c.age
	ch <- c.errs
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list == nil {
		return
	}
	if c.at.IsZero() || time.Since(c.at) >= storeStatsTTL {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		infos, err := c.list(ctx)
		cancel()
		c.at, c.err, c.n, c.newest = time.Now(), err, len(infos), time.Time{}
		for _, in := range infos {
			if in.Damaged == "" && in.CreatedAt.After(c.newest) {
				c.newest = in.CreatedAt
			}
		}
	}
	if c.err != nil {
		ch <- prometheus.MustNewConstMetric(c.errs, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.errs, prometheus.GaugeValue, 0)
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(c.n))
	if !c.newest.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, time.Since(c.newest).Seconds())
	}
}

// liveness is what /livez checks: when the scheduler's next tick is due
// and when the run going started (zero: none).
type liveness struct {
	mu       sync.Mutex
	nextTick time.Time
	runStart time.Time
}

func (l *liveness) scheduled(next time.Time) { l.mu.Lock(); l.nextTick = next; l.mu.Unlock() }

func (l *liveness) running(start time.Time) { l.mu.Lock(); l.runStart = start; l.mu.Unlock() }

// problem returns why the daemon is wedged at now, or "".
func (l *liveness) problem(now time.Time, runLimit time.Duration) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.nextTick.IsZero() && now.Sub(l.nextTick) > LivenessGrace {
		return fmt.Sprintf("scheduler: the tick due at %s has not fired %s later", l.nextTick.UTC().Format(time.RFC3339), now.Sub(l.nextTick).Round(time.Second))
	}
	if !l.runStart.IsZero() && now.Sub(l.runStart) > runLimit+LivenessGrace {
		return fmt.Sprintf("run: started at %s and still going %s later, past its --run-timeout and --shutdown-timeout",
			l.runStart.UTC().Format(time.RFC3339), now.Sub(l.runStart).Round(time.Second))
	}
	return ""
}

// serveLive answers /livez: 200 while the scheduler ticks on time and no
// run outlives its timeouts by LivenessGrace, 503 with the reason otherwise.
func (d *Daemon) serveLive(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if p := d.live.problem(time.Now(), d.runTimeout()+d.shutdownTimeout()); p != "" {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, p+"\nnot live")
		return
	}
	fmt.Fprintln(w, "ok")
}
