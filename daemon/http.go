package daemon

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/offsetkeeper/offsetkeeper/daemon/web"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// probeTTL is how long /readyz reuses a store check, so frequent probes do
// not list the bucket each time.
const probeTTL = 10 * time.Second

// probeTimeout bounds each check /readyz makes.
const probeTimeout = 3 * time.Second

// probe caches the result of one reachability check.
type probe struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// check returns the cached result if younger than probeTTL, else runs fn.
// Concurrent callers share one check.
func (p *probe) check(ctx context.Context, fn func(context.Context) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && time.Since(p.at) < probeTTL {
		return p.err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	p.err = fn(ctx)
	p.at = time.Now()
	return p.err
}

// Handler serves the daemon's HTTP endpoints:
//
//	GET /healthz        200 while the process runs.
//	GET /livez          200 while the scheduler ticks on time and no run
//	                    outlives its timeouts by LivenessGrace; 503 with
//	                    the reason otherwise (a wedged daemon: restart it).
//	GET /readyz         200 when Kafka and the store are reachable and, if
//	                    this daemon leads, its last run succeeded; 503 with
//	                    the reasons otherwise (before the first success too).
//	                    A standby replica is ready when it can reach both.
//	                    A leader whose journal does not journal (its epoch
//	                    could not start, another writer fenced it) is not.
//	GET /metrics        Prometheus metrics (offsetkeeper_*, Go, process).
//	GET /api/snapshots  The stored snapshots as a JSON array of
//	                    snapshot.Info, oldest first.
//	GET /api/standby    With Daemon.Standby: the standby's lag and last
//	                    sync (standby.go).
//	GET /               The page (package web): the connector board,
//	                    /connectors/{name}, /timeline, /diff, and their
//	                    JSON twins under /api/ (docs/web.md).
func (d *Daemon) Handler() http.Handler {
	d.init()
	mux := http.NewServeMux()
	if d.Store != nil {
		src := web.Source{Store: d.Store, Commands: d.Config.Commands, Refresh: max(2*d.Config.Journal.Interval, 15*time.Second), Logger: d.log().With("component", "web"),
			Links: []string{"/healthz", "/livez", "/readyz", "/metrics", "/api/snapshots"}}
		src.Cluster = d.fromCluster
		if d.checkM != nil {
			src.StoreCheck = d.storeCheckLine
		}
		if d.Standby != nil {
			src.Standby = d.standbyLine
			src.Links = append(src.Links, "/api/standby")
		}
		if d.Kafka != nil {
			src.LogEnd = web.LogEnds(d.Kafka, probeTimeout)
			src.SinkTopics = web.SinkTopicIDs(d.Kafka, probeTimeout)
			src.Status = d.statuses
		}
		page, err := web.New(src)
		if err != nil {
			panic(err) // the embedded templates do not parse: a build defect
		}
		page.Register(mux)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /livez", d.serveLive)
	mux.HandleFunc("GET /readyz", d.serveReady)
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.m.reg, promhttp.HandlerOpts{Registry: d.m.reg}))
	mux.HandleFunc("GET /api/snapshots", web.SnapshotList(d.Store))
	if d.Standby != nil {
		mux.HandleFunc("GET /api/standby", d.serveStandby) // standby.go
	}
	return mux
}

func (d *Daemon) serveReady(w http.ResponseWriter, r *http.Request) {
	var lines []string
	ready := true
	fail := func(s string) { ready = false; lines = append(lines, s) }

	// Both checks run at once so /readyz answers within probeTimeout.
	var kafkaErr, storeErr error
	var wg sync.WaitGroup
	if d.Kafka != nil {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
			defer cancel()
			kafkaErr = d.Kafka.Ping(ctx)
		})
	}
	if d.Store != nil {
		wg.Go(func() {
			storeErr = d.storeOK.check(r.Context(), func(ctx context.Context) error {
				_, err := d.Store.Snapshots().List(ctx)
				return err
			})
		})
	}
	wg.Wait()
	if d.Kafka != nil {
		if kafkaErr != nil {
			fail("kafka: unreachable: " + kafkaErr.Error())
		} else {
			lines = append(lines, "kafka: ok")
		}
	}
	if d.Store != nil {
		if storeErr != nil {
			fail("store: unreachable: " + storeErr.Error())
		} else {
			lines = append(lines, "store: ok")
		}
	}
	d.mu.Lock()
	st := d.status
	d.mu.Unlock()
	switch {
	case !d.lead.isLeading():
		lines = append(lines, "leader: no, standing by")
	case st.lastResult == "":
		fail("last run: none succeeded yet")
	case st.lastResult == ResultFailure:
		fail("last run: failed: " + st.lastErr)
	default:
		lines = append(lines, fmt.Sprintf("last run: succeeded, snapshot %s at %s", st.lastID, st.lastSuccess.UTC().Format(time.RFC3339)))
	}
	if d.jr != nil && d.lead.isLeading() {
		// Snapshots that succeed while the journal cannot start its epoch
		// are no reason to call the daemon ready (restore --at is lost).
		if why := d.jr.troubled(); why != "" {
			fail("journal: " + why)
		}
	}

	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if ready {
		w.WriteHeader(http.StatusOK)
		lines = append(lines, "ready")
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
		lines = append(lines, "not ready")
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

// statuses reads the status topic for the page, within probeTimeout.
func (d *Daemon) statuses(ctx context.Context) (*capture.Statuses, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if d.Statuses != nil {
		return d.Statuses(ctx)
	}
	return capture.ReadStatuses(ctx, d.Kafka, cmp.Or(d.StatusTopic, capture.DefaultStatusTopic))
}
