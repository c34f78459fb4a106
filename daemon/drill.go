package daemon

// This file is the daemon's restore drills (restore/drill): on
// Config.DrillSchedule, the leader drills the newest full snapshot
// (Daemon.Drill), and the results are metrics. The first drill runs once
// the daemon's first snapshot is stored, so a daemon just started proves
// its backups without waiting a day.

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/offsetkeeper/offsetkeeper/restore/drill"
)

// DefaultDrillSchedule is the CLI's default --drill-schedule.
const DefaultDrillSchedule = "@daily"

// DrillsOff is the --drill-schedule that turns the drills off.
const DrillsOff = "off"

// drillMetrics are the drill series; their names are a contract
// (deploy/prometheus alerts on them).
type drillMetrics struct {
	lastSuccess prometheus.Gauge
	rto         prometheus.Gauge
	failed      prometheus.Gauge
	runs        *prometheus.CounterVec
}

func newDrillMetrics(reg *prometheus.Registry) *drillMetrics {
	m := &drillMetrics{
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_drill_last_success_timestamp_seconds",
			Help: "Unix time of the last restore drill that passed; 0 before the first.",
		}),
		rto: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_drill_rto_seconds",
			Help: "How long the last drill's restore into the scratch cluster took (restore.Run: plan, write, verify).",
		}),
		failed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_drill_failed_checks",
			Help: "Failures the last drill found (0 when it passed); a drill that could not run counts 1.",
		}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "offsetkeeper_drills_total",
			Help: "Restore drills by result: passed, failed, or error (could not run).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.lastSuccess, m.rto, m.failed, m.runs)
	for _, r := range []string{drill.Passed, drill.Failed, "error"} {
		m.runs.WithLabelValues(r)
	}
	return m
}

// drills runs Daemon.Drill on Config.DrillSchedule while ctx lasts, on the
// leader only: first once the daemon's first snapshot is stored, then at
// each tick.
func (d *Daemon) drills(ctx context.Context) {
	sched, err := ParseSchedule(d.Config.DrillSchedule)
	if err != nil {
		d.log().Error("drills off", "error", err)
		return
	}
	log := d.log().With("component", "drill")
	log.Info("drills scheduled", "schedule", d.Config.DrillSchedule)
	if !d.waitFirstSnapshot(ctx) {
		return
	}
	d.drillOnce(ctx)
	for {
		next := sched.Next(time.Now())
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			d.drillOnce(ctx)
		}
	}
}

// drillOnce runs one drill if this daemon leads, and records it.
func (d *Daemon) drillOnce(ctx context.Context) { d.leading(ctx, d.runDrill) }

// leading runs fn, a drill or a store check, if this daemon leads, with a
// ctx that ends when the lead does, and never beside the other: each is a
// process of its own beside the daemon, and the memory limit is for the
// daemon and one of them (docs/drills.md).
func (d *Daemon) leading(ctx context.Context, fn func(ctx context.Context)) {
	lctx, _, done, ok := d.lead.start()
	if !ok {
		return
	}
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(lctx, cancel)
	defer stop()
	d.oneAtATime.Lock()
	defer d.oneAtATime.Unlock()
	fn(ctx)
}

// runDrill runs one drill and records it.
func (d *Daemon) runDrill(ctx context.Context) {
	log := d.log().With("component", "drill")
	rep, err := d.Drill(ctx)
	switch {
	case err != nil:
		d.drillM.runs.WithLabelValues("error").Inc()
		d.drillM.failed.Set(1)
		if !errors.Is(ctx.Err(), context.Canceled) {
			log.Error("drill could not run", "error", err)
		}
	case rep.Result == drill.Passed:
		d.drillM.runs.WithLabelValues(drill.Passed).Inc()
		d.drillM.failed.Set(0)
		d.drillM.lastSuccess.Set(float64(rep.StartedAt.Unix()))
		d.drillM.rto.Set(time.Duration(rep.RTO.Restore).Seconds())
	default:
		d.drillM.runs.WithLabelValues(drill.Failed).Inc()
		d.drillM.failed.Set(float64(max(rep.FailedChecks(), 1)))
		d.drillM.rto.Set(time.Duration(rep.RTO.Restore).Seconds())
		log.Error("drill failed", "drill_id", rep.ID, "failed_checks", rep.FailedChecks(), "checks", rep.Failed())
	}
}
