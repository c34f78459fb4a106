package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/offsetkeeper/offsetkeeper/daemon"
	"github.com/offsetkeeper/offsetkeeper/daemon/web"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// serveCommand is the serve entry of the command table (main.go).
var serveCommand = commandInfo{
	name:    "serve",
	summary: "serve the page (connector board, timeline, connector plots, diff; docs/web.md) from the store alone, read-only; --brokers adds sink lag and the workers' states from the status topic",
	usage:   "[--listen 127.0.0.1:9465] [--web-config FILE] [--store URL] [--brokers B]",
	new:     func(e *env) command { return &serveCmd{env: e} },
}

type serveCmd struct {
	*env
	listen    string
	webConfig string
	refresh   time.Duration
	window    time.Duration
}

func (c *serveCmd) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.listen, "listen", "127.0.0.1:9465", "HTTP address of the page")
	fs.StringVar(&c.webConfig, "web-config", "", "Prometheus web config file (exporter-toolkit format) for TLS and basic auth of every path; see docs/web.md")
	fs.DurationVar(&c.refresh, "refresh", 30*time.Second, "how often the board and timeline reload in the browser; 0 never")
	fs.DurationVar(&c.window, "window", web.DefaultWindow, "how far back the sparklines and plots go")
}

func (c *serveCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	if c.refresh < 0 || c.window <= 0 {
		return usagef("--refresh must be 0 or positive, --window positive")
	}
	if err := daemon.ValidateWebConfig(c.webConfig); err != nil {
		return usagef("--web-config: %v", err)
	}
	store, err := c.g.openStore(ctx)
	if err != nil {
		return err
	}
	defer store.Close()
	src := web.Source{Store: store, Commands: c.g.commandSettings(), Refresh: c.refresh, Window: c.window, Logger: c.log, Links: []string{"/healthz", "/api/snapshots"}}
	if c.g.explicit("brokers") {
		cl, opts, err := c.g.kafkaClient(ctx)
		if err != nil {
			return err
		}
		defer cl.Close()
		src.LogEnd = web.LogEnds(cl, 0)
		src.SinkTopics = web.SinkTopicIDs(cl, 0)
		src.Status = func(ctx context.Context) (*capture.Statuses, error) {
			return capture.ReadWorkerStatuses(ctx, cl, opts)
		}
	}
	page, err := web.New(src)
	if err != nil {
		return fmt.Errorf("load page templates: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /api/snapshots", web.SnapshotList(store))
	page.Register(mux)
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.listen, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelDebug)}
	c.log.Info("serving the page", "addr", ln.Addr().String(), "store", c.g.store, "log_end", src.LogEnd != nil)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := daemon.ServeHTTP(srv, ln, c.webConfig, c.log); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", c.listen, err)
	}
	return nil
}
