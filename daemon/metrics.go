package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/journal"
)

// Run results, the values of the result label of offsetkeeper_runs_total.
const (
	ResultSuccess = "success"
	ResultFailure = "failure"
	ResultSkipped = "skipped"
)

// metrics are the daemon's Prometheus series, on a registry of their own
// (with the Go and process collectors) rather than the global one. Their
// names are a contract: dashboards and alerts are written against them.
type metrics struct {
	reg         *prometheus.Registry
	runs        *prometheus.CounterVec
	lastSuccess prometheus.Gauge
	duration    prometheus.Histogram
	size        prometheus.Gauge
	source      *prometheus.GaugeVec
	sink        *prometheus.GaugeVec
	deletions   prometheus.Counter
	backwards   *prometheus.GaugeVec
	// sourceBack counts source offsets reset between runs (journal on).
	sourceBack *prometheus.GaugeVec
	leader     prometheus.Gauge

	journalFlush  prometheus.Gauge
	journalBytes  prometheus.Counter
	journalErrors prometheus.Counter
	// journalStartFails counts failed epoch starts; journalNotRunning is
	// 1 while the leader's journal writes nothing (see journal_health.go).
	journalStartFails prometheus.Counter
	journalNotRunning prometheus.Gauge
	resetEvents       *prometheus.CounterVec
	// journalLagFn reads the journal's lag; nil while there is no journal.
	journalLagFn func() float64
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "offsetkeeper_runs_total",
			Help: "Scheduled snapshot runs by result: success, failure, or skipped (the previous run was still going, or leadership was lost mid-run).",
		}, []string{"result"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_last_success_timestamp_seconds",
			Help: "Unix time of the last snapshot this daemon stored successfully; 0 before the first.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "offsetkeeper_run_duration_seconds",
			Help:    "Duration of snapshot runs (capture, store and retention), whatever their result.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}),
		size: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_snapshot_size_bytes",
			Help: "Stored size of the last snapshot, in bytes.",
		}),
		source: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_source_partitions",
			Help: "Source partitions (live offsets-topic keys) per source connector in the last snapshot.",
		}, []string{"connector"}),
		sink: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_sink_partitions",
			Help: "Committed topic partitions per sink connector group in the last snapshot.",
		}, []string{"connector"}),
		deletions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "offsetkeeper_retention_deletions_total",
			Help: "Snapshots deleted by retention.",
		}),
		backwards: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_sink_offsets_moved_backwards",
			Help: "Sink offsets (same group, topic and partition) that decreased or vanished between the previous snapshot and the last one, per connector.",
		}, []string{"connector"}),
		sourceBack: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_source_offsets_moved_backwards",
			Help: "Source offsets the journal saw tombstoned (kind source-tombstoned) or rewritten to a position behind (kind source-rewound) between the previous snapshot and the last one, per connector; absent while the journal is off.",
		}, []string{"connector", "kind"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_leader",
			Help: "1 while this daemon is the leader that takes snapshots, 0 while it stands by.",
		}),
	}
	m.journalFlush = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "offsetkeeper_journal_last_flush_timestamp_seconds",
		Help: "Unix time of the last journal segment this daemon wrote; 0 before the first.",
	})
	m.journalBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "offsetkeeper_journal_written_bytes_total",
		Help: "Bytes of journal segments written.",
	})
	m.journalErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "offsetkeeper_journal_errors_total",
		Help: "Journal flushes that failed (the next one continues from the store).",
	})
	m.journalStartFails = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "offsetkeeper_journal_epoch_start_failures_total",
		Help: "Journal epochs that could not start from the full snapshot just stored (it could not be read back, or the cluster's topics not read); the journal asks for the next snapshot after a backoff doubling from 2m to 30m.",
	})
	m.journalNotRunning = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "offsetkeeper_journal_stopped",
		Help: "1 while this daemon leads and its journal writes nothing: its epoch could not start, or another writer fenced it (/readyz says why); 0 otherwise.",
	})
	m.resetEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "offsetkeeper_reset_events_total",
		Help: "Resets the journal saw, by kind: source-tombstoned, source-rewound, sink-deleted, sink-rewound, connector-deleted, offsets-topic-deleted, config-topic-deleted, sink-expired.",
	}, []string{"kind"})
	for _, k := range journal.EventKinds {
		m.resetEvents.WithLabelValues(k)
	}
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "offsetkeeper_journal_lag_seconds",
		Help: "Seconds since the moment up to which the journal is in the store (the last flush's read); before the first flush, since this daemon began to lead; 0 while the journal is off or this daemon stands by.",
	}, func() float64 {
		if m.journalLagFn == nil {
			return 0
		}
		return m.journalLagFn()
	})
	m.reg.MustRegister(m.journalFlush, m.journalBytes, m.journalErrors, m.journalStartFails, m.journalNotRunning, m.resetEvents, lag)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.runs, m.lastSuccess, m.duration, m.size, m.source, m.sink, m.deletions, m.backwards, m.sourceBack, m.leader,
	)
	// Every result series exists from the start, so rate() and absent()
	// alerts work before the first failure.
	for _, r := range []string{ResultSuccess, ResultFailure, ResultSkipped} {
		m.runs.WithLabelValues(r)
	}
	return m
}

// observeSnapshot sets the per-connector partition gauges from snap,
// dropping the series of connectors no longer in it.
func (m *metrics) observeSnapshot(snap *snapshot.Snapshot, size int64) {
	m.size.Set(float64(size))
	m.source.Reset()
	m.sink.Reset()
	for _, c := range snap.Connectors {
		switch c.Type {
		case snapshot.TypeSource:
			m.source.WithLabelValues(c.Name).Set(0)
		case snapshot.TypeSink:
			m.sink.WithLabelValues(c.Name).Set(0)
		}
	}
	for name, n := range snap.SourceKeysByConnector() {
		m.source.WithLabelValues(name).Add(float64(n))
	}
	for _, g := range snap.SinkGroups {
		m.sink.WithLabelValues(sinkConnector(g)).Add(float64(len(g.Offsets)))
	}
}

// observeBackwards replaces the moved-backwards gauges with counts.
func (m *metrics) observeBackwards(counts map[string]int) {
	m.backwards.Reset()
	for c, n := range counts {
		m.backwards.WithLabelValues(c).Set(float64(n))
	}
}

// observeSourceResets replaces the source moved-backwards gauges: every
// source connector of snap and every kind, 0 unless r counts some.
func (m *metrics) observeSourceResets(snap *snapshot.Snapshot, r *sourceResets) {
	m.sourceBack.Reset()
	for _, c := range snap.Connectors {
		if c.Type == snapshot.TypeSource {
			m.sourceBack.WithLabelValues(c.Name, snapshot.EventSourceTombstoned).Set(0)
			m.sourceBack.WithLabelValues(c.Name, snapshot.EventSourceRewound).Set(0)
		}
	}
	for conn, kinds := range r.byConnector {
		for kind, n := range kinds {
			m.sourceBack.WithLabelValues(conn, kind).Set(float64(n))
		}
	}
}
