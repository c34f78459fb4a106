package restore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
)

// waitHealthy waits, before the stopper stops or resumes connectors (what
// says which), until the Connect worker answers GET /health healthy
// (KIP-1017, Kafka 3.9+). A worker without the endpoint (404, before
// 3.9) is not waited for. While it answers 503 (starting) or 500
// (unhealthy) it says so once and polls, up to the stopper's timeout; a
// worker still not healthy then is an error naming its answer.
func (s *stopper) waitHealthy(ctx context.Context, what string) error {
	wctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	said := ""
	for {
		h, err := s.rc.Health(wctx)
		switch {
		case err == nil && (h.Status == connectrest.HealthHealthy || h.Status == connectrest.HealthUnknown):
			if said != "" {
				fmt.Fprintf(s.out, "connect: GET /health answers healthy: %s\n", what)
			}
			return nil
		case err == nil && h.Status != said:
			code := 500
			if h.Status == connectrest.HealthStarting {
				code = 503
			}
			fmt.Fprintf(s.out, "connect: GET /health answers %s (%d: %s): waiting before it %s (--stop-timeout %s)\n", h.Status, code, h.Message, what, s.timeout)
			said = h.Status
		}
		if ctx.Err() != nil {
			return ctx.Err() // interrupted: the caller says so, not "not healthy"
		}
		if err != nil && wctx.Err() == nil {
			return fmt.Errorf("ask the Connect worker whether it is ready (GET /health) before it %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wctx.Done():
			return fmt.Errorf("the Connect worker is not healthy (GET /health answers %s) after --stop-timeout %s: the restore %s only once it is; check the worker's log", said, s.timeout, what)
		case <-time.After(s.rc.PollInterval()):
		}
	}
}

// resumePaths says how to resume the connectors named once the worker is
// healthy: one PUT per connector.
func resumePaths(names []string) string {
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = "PUT /connectors/" + url.PathEscape(n) + "/resume"
	}
	return fmt.Sprintf("%s; once the worker is healthy, resume them: %s", strings.Join(names, ", "), strings.Join(paths, ", "))
}
