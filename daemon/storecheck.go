package daemon

// This file is the daemon's check of the whole store: on
// Config.VerifySchedule, the leader re-reads every stored snapshot and
// every journal epoch (Daemon.VerifyStore: the verify command, in a
// process of its own), so that damage to a snapshot no drill reads (an
// older one, a pinned one, the base of a journal epoch) or a journal
// segment deleted under the daemon (a bucket lifecycle rule) is found when
// it happens, not on the day a restore needs it.

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/offsetkeeper/offsetkeeper/daemon/web"
)

// DefaultVerifySchedule is the CLI's default --verify-schedule.
const DefaultVerifySchedule = "@daily"

// VerifyOff is the --verify-schedule that turns the store checks off.
const VerifyOff = "off"

// StoreCheck is one check of the whole store (Daemon.VerifyStore).
type StoreCheck struct {
	// Snapshots and Epochs are how many snapshots and journal epochs were
	// read.
	Snapshots, Epochs int
	// Failed are the snapshots and journal epochs that did not verify.
	Failed []StoreFailure
	// Command is the command that says why, as the operator runs it.
	Command string
}

// The kinds of a StoreFailure.
const (
	KindSnapshot     = "snapshot"
	KindJournalEpoch = "journal epoch"
)

// StoreFailure is one snapshot or journal epoch that did not verify.
type StoreFailure struct {
	// Kind is KindSnapshot or KindJournalEpoch; ID its snapshot ID or epoch.
	Kind, ID string
	// Err says why.
	Err string
}

// storeCheckMetrics are the store check series; their names are a
// contract (deploy/prometheus alerts on them).
type storeCheckMetrics struct {
	lastRun prometheus.Gauge
	failed  *prometheus.GaugeVec
	runs    *prometheus.CounterVec
}

func newStoreCheckMetrics(reg *prometheus.Registry) *storeCheckMetrics {
	m := &storeCheckMetrics{
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "offsetkeeper_store_verify_last_run_timestamp_seconds",
			Help: "Unix time of the last check of every stored snapshot and journal epoch that ran to its end; 0 before the first.",
		}),
		failed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "offsetkeeper_store_verify_failed",
			Help: "Stored snapshots (kind snapshot) and journal epochs (kind journal_epoch) that did not verify at the last check (offsetkeeper verify says why).",
		}, []string{"kind"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "offsetkeeper_store_verifies_total",
			Help: "Checks of the whole store by result: passed, failed, or error (could not run).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.lastRun, m.failed, m.runs)
	for _, r := range []string{"passed", "failed", "error"} {
		m.runs.WithLabelValues(r)
	}
	for _, k := range []string{KindSnapshot, KindJournalEpoch} {
		m.failed.WithLabelValues(metricKind(k))
	}
	return m
}

// storeChecks runs Daemon.VerifyStore on Config.VerifySchedule while ctx
// lasts, on the leader only: first once the daemon's first snapshot is
// stored, then at each tick.
func (d *Daemon) storeChecks(ctx context.Context) {
	sched, err := ParseSchedule(d.Config.VerifySchedule)
	if err != nil {
		d.log().Error("store checks off", "error", err)
		return
	}
	d.log().With("component", "verify").Info("store checks scheduled", "schedule", d.Config.VerifySchedule)
	if !d.waitFirstSnapshot(ctx) {
		return
	}
	failed, _ := d.storeCheckOnce(ctx)
	for {
		next := sched.Next(time.Now())
		if soon := time.Now().Add(storeRecheck); failed && next.After(soon) {
			next = soon
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			if f, ran := d.storeCheckOnce(ctx); ran {
				failed = f
			}
		}
	}
}

// storeRecheck is how soon the store is checked again after a check that
// failed, when the schedule is later: once the operator has deleted (or
// put back) the damaged object, the metric and the alert clear within it
// rather than at the next daily check.
var storeRecheck = time.Hour

// waitFirstSnapshot waits until the daemon has stored a snapshot; false
// when ctx ended first.
func (d *Daemon) waitFirstSnapshot(ctx context.Context) bool {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		d.mu.Lock()
		stored := !d.status.lastSuccess.IsZero()
		d.mu.Unlock()
		if stored {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// storeCheckOnce checks the store if this daemon leads, and records it; it
// reports whether something did not verify, and whether the check ran to
// its end (not when this daemon does not lead, or the check could not run).
func (d *Daemon) storeCheckOnce(ctx context.Context) (failed, ran bool) {
	d.leading(ctx, func(ctx context.Context) { failed, ran = d.storeCheck(ctx) })
	return failed, ran
}

// storeCheck checks the store and records it (storeCheckOnce).
func (d *Daemon) storeCheck(ctx context.Context) (failed, ran bool) {
	log := d.log().With("component", "verify")
	chk, err := d.VerifyStore(ctx)
	switch {
	case err != nil:
		d.checkM.runs.WithLabelValues("error").Inc()
		if !errors.Is(ctx.Err(), context.Canceled) {
			log.Error("store check could not run; the daemon checks again on --verify-schedule (within an hour while "+
				"the last check found damage)", "error", err)
		}
		return false, false
	case len(chk.Failed) == 0:
		d.checkM.runs.WithLabelValues("passed").Inc()
		log.Info("store checked", "snapshots", chk.Snapshots, "journal_epochs", chk.Epochs)
	default:
		d.checkM.runs.WithLabelValues("failed").Inc()
		for _, f := range chk.Failed {
			msg := "stored snapshot does not verify: do not restore from it"
			if f.Kind == KindJournalEpoch {
				// The segments before the damage still read: list shows the
				// epoch "broken after" the last moment they reach.
				msg = "stored journal epoch does not verify: restore --at reaches only moments before the damage " +
					"('offsetkeeper list' shows where it is broken)"
			}
			log.Error(msg, "id", f.ID, "error", f.Err)
		}
		log.Error("store check failed", "failed", len(chk.Failed), "snapshots", chk.Snapshots,
			"journal_epochs", chk.Epochs, "why", chk.Command, "runbook", "docs/runbook.md#offsetkeeperstoredamaged")
	}
	line := &web.StoreCheck{At: time.Now(), Snapshots: chk.Snapshots, Epochs: chk.Epochs, Command: chk.Command}
	for _, f := range chk.Failed {
		line.Failed = append(line.Failed, f.Kind+" "+f.ID)
	}
	d.mu.Lock()
	d.lastCheck = line
	d.mu.Unlock()
	n := map[string]int{}
	for _, f := range chk.Failed {
		n[f.Kind]++
	}
	for _, k := range []string{KindSnapshot, KindJournalEpoch} {
		d.checkM.failed.WithLabelValues(metricKind(k)).Set(float64(n[k]))
	}
	d.checkM.lastRun.Set(float64(time.Now().Unix()))
	return len(chk.Failed) > 0, true
}

// metricKind is a StoreFailure kind as the kind label of
// offsetkeeper_store_verify_failed.
func metricKind(kind string) string { return strings.ReplaceAll(kind, " ", "_") }

// storeCheckLine is the board's line on the last store check; nil before
// the first (or on a replica that does not lead).
func (d *Daemon) storeCheckLine() *web.StoreCheck {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastCheck
}
