package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"

	toolkit "github.com/prometheus/exporter-toolkit/web"
)

// ValidateWebConfig checks a Prometheus web config file (TLS and basic
// auth, the exporter-toolkit format) as serving it would.
func ValidateWebConfig(path string) error {
	if path == "" {
		return nil
	}
	if err := toolkit.Validate(path); err != nil {
		return fmt.Errorf("read web config %s: %w", path, err)
	}
	return nil
}

// ServeHTTP serves srv on ln, through the web config file when one is
// given: TLS, client certificates and basic auth for every path, the file
// re-read as exporter-toolkit does (certificates on each new connection,
// users on each request).
func ServeHTTP(srv *http.Server, ln net.Listener, webConfig string, log *slog.Logger) error {
	return serveHTTP(srv, ln, webConfig, log)
}

func serveHTTP(srv *http.Server, ln net.Listener, webConfig string, log *slog.Logger) error {
	if webConfig == "" {
		return srv.Serve(ln)
	}
	return toolkit.Serve(ln, srv, &toolkit.FlagConfig{WebConfigFile: &webConfig}, log.With("component", "http"))
}
