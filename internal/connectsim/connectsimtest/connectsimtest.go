// Package connectsimtest runs the Connect REST stand-in (package
// connectsim) with the faults tests inject and the record of what was
// asked: the stand-in ships in the binary (the demo's workers), this
// package does not. Only _test.go files import it; internal/layering checks
// that the binary links no package whose name ends in "test".
//
// The type to know is [Server]: a connectsim.Server served behind a
// handler that answers with a fault when one is asked for (InjectConflicts,
// InjectTimeouts), rewrites the status it answers (FailTasks, HideStatus,
// SetHealth), restarts the worker at another version (SetVersion) and
// records every request (Requests). Without a fault asked for, every
// request is the stand-in's, byte for byte.
package connectsimtest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// Server is a connectsim.Server behind the faults of a test. Make it with
// Start and Close it when done. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL, http://127.0.0.1:port (https:// with TLS).
	URL string

	cl  *kgo.Client
	srv *http.Server

	// mu guards the fields below.
	mu        sync.Mutex
	opts      connectsim.Options
	inner     *connectsim.Server
	conflicts int
	timeouts  int
	failed    map[string]string
	hidden    map[string]bool
	health    string
	requests  []string
}

// Start starts a Server over the cluster cl talks to, as connectsim.Start
// does (opts are connectsim's; Addr and TLS are served here).
func Start(cl *kgo.Client, opts connectsim.Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connectsimtest: listen on %s: %w", addr, err)
	}
	s := &Server{cl: cl, opts: opts, failed: map[string]string{}, hidden: map[string]bool{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 30 * time.Second}
	scheme := "http"
	if opts.TLS != nil {
		cfg := opts.TLS.Clone()
		if len(cfg.NextProtos) == 0 {
			cfg.NextProtos = []string{"http/1.1"}
		}
		s.srv.TLSConfig = cfg
		ln, scheme = tls.NewListener(ln, cfg), "https"
	}
	s.URL = scheme + "://" + ln.Addr().String()
	if s.inner, err = s.worker(opts); err != nil {
		ln.Close()
		return nil, err
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// worker makes the stand-in of opts, answering at s.URL.
func (s *Server) worker(opts connectsim.Options) (*connectsim.Server, error) {
	w, err := connectsim.New(s.cl, opts)
	if err != nil {
		return nil, err
	}
	w.URL = s.URL
	return w, nil
}

// Close stops the server and its worker.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if s.srv.Shutdown(ctx) != nil {
		s.srv.Close()
	}
	cancel()
	s.mu.Lock()
	w := s.inner
	s.mu.Unlock()
	w.Close()
}

// InjectConflicts makes the next n requests (other than GET / and status
// reads) fail with 409 and Connect's rebalance message.
func (s *Server) InjectConflicts(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conflicts = n
}

// InjectTimeouts makes the next n PUT, PATCH, POST and DELETE requests fail
// with 500 "Request timed out", without doing anything.
func (s *Server) InjectTimeouts(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timeouts = n
}

// FailTasks makes the tasks of connector report FAILED with trace while
// they would report RUNNING; "" undoes it.
func (s *Server) FailTasks(connector, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if trace == "" {
		delete(s.failed, connector)
		return
	}
	s.failed[connector] = trace
}

// HideStatus makes a connector's status unknown (404, and left out of GET
// /connectors?expand=status, as Connect leaves it) while GET
// /connectors/{name} still answers, as a worker does for a connector
// created a moment ago; false undoes it.
func (s *Server) HideStatus(connector string, hide bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !hide {
		delete(s.hidden, connector)
		return
	}
	s.hidden[connector] = true
}

// SetHealth sets what GET /health answers (KIP-1017, served when the
// version is 3.9 or later): "healthy" (200, the default), "starting" (503)
// or "unhealthy" (500).
func (s *Server) SetHealth(status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health = status
}

// SetVersion restarts the worker at version v, as an upgrade (or a
// downgrade) does: the new worker reads the connectors from the cluster,
// at the same URL.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	opts := s.opts
	s.mu.Unlock()
	opts.Version = v
	w, err := s.worker(opts)
	if err != nil {
		panic(fmt.Sprintf("connectsimtest: restart the worker at %s: %v", v, err))
	}
	s.mu.Lock()
	old := s.inner
	s.opts, s.inner = opts, w
	s.mu.Unlock()
	old.Close()
}

// Requests returns every request so far as "METHOD /path" (unescaped),
// the ones refused included.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// serve answers one request: a fault asked for, or the worker's answer,
// rewritten when a status is.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	inner, fault := s.inner, s.injected(r)
	rewrite := len(s.failed) > 0 || len(s.hidden) > 0 || s.health != ""
	s.mu.Unlock()
	if fault != nil {
		writeJSON(w, fault.status, map[string]any{"error_code": fault.status, "message": fault.msg})
		return
	}
	if !rewrite || r.Method != http.MethodGet || !isStatusRead(r.URL.Path) {
		inner.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	inner.ServeHTTP(rec, r)
	status, body := s.rewrite(r, rec.Code, rec.Body.Bytes())
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	w.Write(body)
}

// isStatusRead tells the reads whose answers the faults rewrite.
func isStatusRead(path string) bool {
	return path == "/connectors" || path == "/health" || strings.HasPrefix(path, "/connectors/") && strings.HasSuffix(path, "/status")
}

// fault is an answer with an error status.
type fault struct {
	status int
	msg    string
}

// injected is the fault InjectConflicts or InjectTimeouts asked for, if
// any is left for r; the caller holds s.mu. A request the worker refuses
// for its credentials is left to it, as a worker checks them first.
func (s *Server) injected(r *http.Request) *fault {
	if !s.authorized(r) {
		return nil
	}
	if s.conflicts > 0 && r.URL.Path != "/" && !strings.HasSuffix(r.URL.Path, "/status") {
		s.conflicts--
		return &fault{http.StatusConflict, connectsim.MsgRebalance}
	}
	if s.timeouts > 0 && r.Method != http.MethodGet {
		s.timeouts--
		return &fault{http.StatusInternalServerError, connectsim.MsgTimedOut}
	}
	return nil
}

// authorized tells whether r carries the credentials the worker asks for.
func (s *Server) authorized(r *http.Request) bool {
	switch {
	case s.opts.Username != "":
		u, p, ok := r.BasicAuth()
		return ok && u == s.opts.Username && p == s.opts.Password
	case s.opts.Token != "":
		return r.Header.Get("Authorization") == "Bearer "+s.opts.Token
	}
	return true
}

// statusJSON is a connector's status, in the order Connect writes it.
type statusJSON struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace,omitempty"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace,omitempty"`
	} `json:"tasks"`
	Type string `json:"type"`
}

// rewrite is the worker's answer to a status read with the faults asked
// for applied.
func (s *Server) rewrite(r *http.Request, status int, body []byte) (int, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status != http.StatusOK {
		return status, body
	}
	switch path := r.URL.Path; {
	case path == "/health":
		switch s.health {
		case "starting":
			return http.StatusServiceUnavailable, encode(map[string]string{"status": "starting", "message": "Worker is still starting up."})
		case "unhealthy":
			return http.StatusInternalServerError, encode(map[string]string{"status": "unhealthy",
				"message": "Worker was unable to handle this request and may be unable to handle other requests."})
		}
	case path == "/connectors":
		return status, s.rewriteList(r, body)
	default:
		name := strings.TrimSuffix(strings.TrimPrefix(path, "/connectors/"), "/status")
		if s.hidden[name] {
			return http.StatusNotFound, encode(map[string]any{"error_code": http.StatusNotFound, "message": "No status found for connector " + name})
		}
		var st statusJSON
		if json.Unmarshal(body, &st) == nil && s.fail(&st) {
			return status, encode(st)
		}
	}
	return status, body
}

// rewriteList is GET /connectors?expand=status with the hidden statuses
// left out and the failed tasks FAILED; the caller holds s.mu.
func (s *Server) rewriteList(r *http.Request, body []byte) []byte {
	if !slices.Contains(r.URL.Query()["expand"], "status") {
		return body
	}
	var all map[string]map[string]json.RawMessage
	if json.Unmarshal(body, &all) != nil {
		return body
	}
	for name, e := range all {
		if s.hidden[name] {
			delete(all, name) // Connect leaves out a connector it has no status for
			continue
		}
		var st statusJSON
		if json.Unmarshal(e["status"], &st) == nil && s.fail(&st) {
			e["status"] = json.RawMessage(encode(st))
		}
	}
	return encode(all)
}

// fail makes the RUNNING tasks of st FAILED if FailTasks asked for it,
// and reports whether it did; the caller holds s.mu.
func (s *Server) fail(st *statusJSON) bool {
	trace, ok := s.failed[st.Name]
	if !ok {
		return false
	}
	done := false
	for i := range st.Tasks {
		if st.Tasks[i].State == connectrest.StateRunning {
			st.Tasks[i].State, st.Tasks[i].Trace = connectrest.StateFailed, trace
			done = true
		}
	}
	return done
}

// encode is v as the worker writes JSON (Jackson does not escape <, >
// and &).
func encode(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(fmt.Sprintf(`{"error_code":500,"message":%q}`, err.Error()))
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encode(v))
}
