package daemon

// This file is the warm standby (restore/standby, docs/standby.md): while
// it leads, the daemon applies the journal's newest state from the store
// to a standby cluster every Standby.Interval, unless a failover fenced
// this primary.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/offsetkeeper/offsetkeeper/daemon/web"
	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/standby"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// DefaultStandbyInterval is how often the standby is brought in step.
const DefaultStandbyInterval = 5 * time.Second

// Standby keeps a standby cluster in step (Daemon.Standby).
type Standby struct {
	// Syncer writes to the standby. Required.
	Syncer *standby.Syncer
	// Interval is how often; default DefaultStandbyInterval.
	Interval time.Duration
	// Name names the standby in logs and on the page (its brokers).
	Name string
}

// standbyState is what the standby loop last found, for the metrics and
// the page; guarded by mu.
type standbyState struct {
	mu      sync.Mutex
	applied time.Time // moment of the state the standby holds (last good sync)
	since   time.Time // leading since, with no good sync yet
	last    *standby.Report
	err     string
	fenced  *standby.Fence
	// follow keeps the state read from the store between syncs (only the
	// journal segments written since are read); the standby loop's own.
	follow standby.Follower
	// wasFull: the last sync read the state or the standby whole (the
	// standby loop's own).
	wasFull bool
}

// standbyMetrics are the standby's series.
type standbyMetrics struct {
	applied    prometheus.Gauge
	connectors *prometheus.GaugeVec
	misses     prometheus.Gauge
	fenced     prometheus.Gauge
	syncs      *prometheus.CounterVec
	duration   prometheus.Histogram
}

func newStandbyMetrics(reg *prometheus.Registry, lag func() float64) *standbyMetrics {
	m := &standbyMetrics{
		applied: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_standby_last_applied_timestamp_seconds",
			Help: "Unix time of the primary's state (the journal's newest change) the standby was last brought in step with; 0 before the first.",
		}),
		connectors: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_standby_connectors",
			Help: "Connectors of the last standby sync by state: in_step, out_of_step, refused (running on the standby: nothing was written).",
		}, []string{"state"}),
		misses: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_standby_translation_misses",
			Help: "Sink partitions the last standby sync could not translate (left as the standby has them).",
		}),
		fenced: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_standby_fenced",
			Help: "1 when a failover fenced this primary: the daemon never writes to the standby again.",
		}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "offsetkeeper_standby_syncs_total",
			Help: "Standby syncs by result: success, refused (a connector runs on the standby, or a safety check), failure, fenced.",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "offsetkeeper_standby_sync_duration_seconds",
			Help:    "How long a standby sync took: the state read from the store, the standby read and written.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64},
		}),
	}
	reg.MustRegister(m.applied, m.connectors, m.misses, m.fenced, m.syncs, m.duration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "offsetkeeper_standby_lag_seconds",
			Help: "How far the standby is behind now: the age of the primary's state it last took; 0 while this daemon does not lead.",
		}, lag))
	for _, s := range []string{"in_step", "out_of_step", "refused"} {
		m.connectors.WithLabelValues(s)
	}
	return m
}

func (d *Daemon) standbyLog() *slog.Logger { return d.log().With("component", "standby") }

// standbyLag is offsetkeeper_standby_lag_seconds.
func (d *Daemon) standbyLag() float64 {
	s := &d.sb
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.applied.IsZero():
		return time.Since(s.applied).Seconds()
	case !s.since.IsZero():
		return time.Since(s.since).Seconds()
	}
	return 0
}

// standbyLoop syncs the standby every interval while this daemon leads.
func (d *Daemon) standbyLoop(ctx context.Context) {
	every := d.Standby.Interval
	if every <= 0 {
		every = DefaultStandbyInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		d.standbyTick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// standbyTick is one sync, when leading.
func (d *Daemon) standbyTick(ctx context.Context) {
	lctx, _, done, ok := d.lead.start()
	if !ok {
		d.sb.mu.Lock()
		d.sb.applied, d.sb.since = time.Time{}, time.Time{}
		d.sb.mu.Unlock()
		// Another daemon may write the standby now: leading again starts
		// from what the store and the standby hold, read whole.
		d.sb.follow.Reset()
		d.Standby.Syncer.Forget()
		d.sb.wasFull = false
		return
	}
	defer done()
	d.sb.mu.Lock()
	if d.sb.since.IsZero() {
		d.sb.since = time.Now()
	}
	d.sb.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, d.runTimeout())
	defer cancel()
	stop := context.AfterFunc(lctx, cancel)
	defer stop()
	began := time.Now()
	rep, err := d.standbySync(ctx)
	if rep != nil {
		d.sbm.duration.Observe(time.Since(began).Seconds())
	}
	d.standbyObserve(rep, err)
}

// standbySync reads the newest state from the store, checks the fence and
// applies the state.
func (d *Daemon) standbySync(ctx context.Context) (*standby.Report, error) {
	primary := ""
	if d.Kafka != nil {
		md, err := kadm.NewClient(d.Kafka).BrokerMetadata(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the primary's cluster id: %w; nothing was written to the standby", err)
		}
		primary = md.Cluster
	}
	// This daemon's primary's state: a store shared with the daemon of
	// another cluster (after a failover, the new primary's) holds its too.
	began := time.Now()
	state, at, read, err := d.sb.follow.Latest(ctx, d.Store, func(c string) bool { return primary == "" || c == primary })
	if errors.Is(err, snapshot.ErrNotFound) {
		return nil, nil // nothing stored yet: the first snapshot comes
	}
	if err != nil {
		return nil, err
	}
	stateRead := time.Since(began)
	if err := standby.CheckFence(ctx, d.Store, state.ClusterID); err != nil {
		return nil, err
	}
	rep, err := d.Standby.Syncer.Sync(ctx, state, at)
	if rep != nil {
		rep.StateRead = read
	}
	log, full := d.standbyLog().Debug, read == standby.ReadFull || rep.LiveRead == standby.ReadFull
	if full && !d.sb.wasFull {
		// The first sync after a start, a new journal epoch, an error:
		// rare, and each reads the store's state or the standby whole
		// (every sync does without a journal: said once).
		log = d.standbyLog().Info
	}
	d.sb.wasFull = full
	log("standby sync", "state_read", read, "state_read_duration", stateRead,
		"live_read", rep.LiveRead, "duration", time.Since(began), "phase_seconds", rep.Phases, "error", err)
	return rep, err
}

// standbyObserve records a sync in the metrics, the page's state and the log.
func (d *Daemon) standbyObserve(rep *standby.Report, err error) {
	m, log := d.sbm, d.standbyLog()
	s := &d.sb
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = ""
	if err != nil {
		s.err = err.Error()
	}
	if rep != nil {
		s.last = rep
		m.connectors.WithLabelValues("in_step").Set(float64(len(rep.InStep)))
		m.connectors.WithLabelValues("out_of_step").Set(float64(len(rep.OutOfStep)))
		m.connectors.WithLabelValues("refused").Set(float64(len(rep.Running)))
		m.misses.Set(float64(len(rep.Misses)))
	}
	var fe *standby.FencedError
	switch {
	case errors.As(err, &fe):
		if s.fenced == nil {
			log.Error("standby fenced: a failover moved the standby off this primary; this daemon never writes to it again", "error", err)
		}
		s.fenced = &fe.Fence
		m.fenced.Set(1)
		m.syncs.WithLabelValues("fenced").Inc()
	case errors.Is(err, standby.ErrRunning) || errors.Is(err, restore.ErrRefused):
		m.syncs.WithLabelValues("refused").Inc()
		log.Warn("standby not written", "standby", d.Standby.Name, "error", err)
	case err != nil:
		m.syncs.WithLabelValues(ResultFailure).Inc()
		log.Error("standby sync", "standby", d.Standby.Name, "error", err)
	case rep == nil:
	default:
		s.fenced = nil
		m.fenced.Set(0)
		s.applied = rep.At
		m.applied.Set(float64(rep.At.UnixNano()) / 1e9)
		m.syncs.WithLabelValues(ResultSuccess).Inc()
		if rep.Applied != nil {
			log.Info("standby in step", "standby", d.Standby.Name, "state_at", snapshot.FmtTime(rep.At),
				"source_writes", rep.Applied.SourceWrites, "tombstones", rep.Applied.Tombstones,
				"sink_commits", rep.Applied.SinkCommits, "misses", len(rep.Misses), "duration", rep.Applied.Duration)
		}
	}
}

// standbyLine is the board's standby line (web.Standby).
func (d *Daemon) standbyLine() *web.Standby {
	lag := d.standbyLag()
	s := &d.sb
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &web.Standby{Name: d.Standby.Name, AppliedAt: s.applied, LagSeconds: lag, Fenced: s.fenced != nil, Error: s.err}
	if r := s.last; r != nil {
		out.InStep, out.OutOfStep, out.Refused, out.Misses = len(r.InStep), len(r.OutOfStep), len(r.Running), len(r.Misses)
		for _, f := range r.Running {
			out.Running = append(out.Running, f.Connector)
		}
	}
	return out
}

// serveStandby is GET /api/standby: the standby line and the last sync's
// report (its connectors by name, the translation misses, the configs).
func (d *Daemon) serveStandby(w http.ResponseWriter, _ *http.Request) {
	line := d.standbyLine()
	d.sb.mu.Lock()
	doc := struct {
		*web.Standby
		Last *standby.Report `json:"last_sync,omitempty"`
	}{line, d.sb.last}
	w.Header().Set("Content-Type", "application/json")
	err := json.NewEncoder(w).Encode(doc)
	d.sb.mu.Unlock()
	if err != nil {
		d.standbyLog().Debug("write /api/standby", "error", err)
	}
}
