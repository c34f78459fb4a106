// Package web is the page served at / by the daemon and by `offsetkeeper
// serve`: a connector board, a timeline of snapshots, journal epochs and
// resets with the restore plan for a moment, a page per connector with a
// plot per partition, and a diff of two moments. Each view is
// server-rendered HTML (html/template, inline SVG, one small script) and
// has a JSON twin under /api/. It reads the store only and never writes.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"
)

// Defaults of a Source.
const (
	DefaultWindow     = 24 * time.Hour
	DefaultStallAfter = 10 * time.Minute
	// cacheTTL is how long one read of the store serves the views.
	cacheTTL = 2 * time.Second
)

// Source is what the page reads.
type Source struct {
	// Store holds the snapshots and the journal. Required.
	Store *store.Store
	// LogEnd, when set, returns the log end offset of each partition of
	// the topics named; it gives sinks their lag. The daemon reads Kafka;
	// serve without brokers leaves it nil and the page says so.
	LogEnd func(ctx context.Context, topics []string) (map[string]map[int32]int64, error)
	// Status, when set, reads Connect's status topic (snapshot.ReadStatuses)
	// for the workers' reported states; it is read once per Refresh (at
	// least cacheTTL). A snapshot.ErrTopicMissing says "no status topic".
	Status func(ctx context.Context) (*capture.Statuses, error)
	// SinkTopics, when set, reads the live IDs of the named topics and a
	// warning for each it could not read (SinkTopicIDs): the page's plan
	// compares them with the state's, as a restore does, so that a sink
	// topic recreated since is caught there too. Nil: not compared.
	SinkTopics func(ctx context.Context, names []string) ([]snapshot.SinkTopic, []string)
	// Cluster, when set, is the ID of the cluster whose journal the
	// page's moments and printed --at commands read, "" for none: the
	// daemon's own in a store shared with another cluster's daemon.
	Cluster func(ctx context.Context) string
	// Window is how far back the plots go (DefaultWindow).
	Window time.Duration
	// StallAfter is how long a sink with lag may go without a commit
	// before it is STALLED (DefaultStallAfter).
	StallAfter time.Duration
	// Refresh, when positive, reloads the board and timeline this often.
	Refresh time.Duration
	// Links are the listener's other endpoints (/healthz, /metrics, ...),
	// linked at the foot of every view.
	Links []string
	// Logger receives the errors of views; nil discards them.
	Logger *slog.Logger
	// Now is the clock (time.Now).
	Now func() time.Time
	// Standby, when set, reports the warm standby for the board.
	Standby func() *Standby
	// StoreCheck, when set, reports the daemon's last check of the whole
	// store for the board (nil before the first).
	StoreCheck func() *StoreCheck
	// Commands are what the restore commands the page prints carry, as
	// the CLI prints them: the settings of the daemon's (or serve's)
	// command line and whether a Connect URL is known.
	Commands restore.CommandSettings
}

// Server serves the page.
type Server struct {
	src   Source
	tmpl  *template.Template
	snaps snapCache
	segs  segCache

	mu     sync.Mutex
	cached *world
	at     time.Time
	sw     statusWorld
	swAt   time.Time
}

//go:embed templates/*.html static/*
var files embed.FS

// New returns the page over src.
func New(src Source) (*Server, error) {
	t, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	return &Server{src: src, tmpl: t}, nil
}

func (s *Server) now() time.Time {
	if s.src.Now != nil {
		return s.src.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Server) window() time.Duration {
	if s.src.Window > 0 {
		return s.src.Window
	}
	return DefaultWindow
}

func (s *Server) stallAfter() time.Duration {
	if s.src.StallAfter > 0 {
		return s.src.StallAfter
	}
	return DefaultStallAfter
}

func (s *Server) log() *slog.Logger {
	if s.src.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.src.Logger
}

// Register adds the page's routes to mux: /, /connectors/{name},
// /timeline, /diff, /static/ and their JSON twins /api/connectors,
// /api/connectors/{name}, /api/timeline and /api/diff.
func (s *Server) Register(mux *http.ServeMux) {
	static, _ := fs.Sub(files, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.view("board", s.serveBoard))
	mux.HandleFunc("GET /connectors/{name}", s.view("connector", s.serveConnector))
	mux.HandleFunc("GET /timeline", s.view("timeline", s.serveTimeline))
	mux.HandleFunc("GET /diff", s.view("diff", s.serveDiff))
	mux.HandleFunc("GET /api/connectors", s.api(s.serveBoard))
	mux.HandleFunc("GET /api/connectors/{name}", s.api(s.serveConnector))
	mux.HandleFunc("GET /api/timeline", s.api(s.serveTimeline))
	mux.HandleFunc("GET /api/diff", s.api(s.serveDiff))
}

// world returns the store as read at most cacheTTL ago.
func (s *Server) world(ctx context.Context) (*world, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached != nil && time.Since(s.at) < cacheTTL {
		return s.cached, nil
	}
	w, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	s.cached, s.at = w, time.Now()
	return w, nil
}

// httpError is an error with the status to answer it with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// viewFunc computes a view's data: the same value is rendered as HTML and
// as JSON.
type viewFunc func(r *http.Request) (any, error)

func (s *Server) api(fn viewFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			code := errCode(err)
			s.log().Warn("serve page api", "path", r.URL.Path, "error", err)
			w.WriteHeader(code)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(v)
	}
}

func errCode(err error) int {
	if he, ok := err.(*httpError); ok {
		return he.code
	}
	return http.StatusBadGateway
}

// page is what every template gets.
type page struct {
	Title   string
	View    string
	Now     time.Time
	Refresh int // seconds; 0 for none
	Links   []string
	Data    any
	Error   string
}

func (s *Server) view(name string, fn viewFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		p := page{Title: name, View: name, Now: s.now(), Links: s.src.Links, Data: v}
		if name == "board" || (name == "timeline" && r.URL.Query().Get("at") == "") {
			p.Refresh = int(s.src.Refresh / time.Second)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err != nil {
			s.log().Warn("serve page", "path", r.URL.Path, "error", err)
			w.WriteHeader(errCode(err))
			p.Error, p.View = err.Error(), "error"
		}
		if err := s.tmpl.ExecuteTemplate(w, p.View+".html", p); err != nil {
			s.log().Error("render page", "view", p.View, "error", err)
		}
	}
}

func (s *Server) serveBoard(r *http.Request) (any, error) {
	w, err := s.world(r.Context())
	if err != nil {
		return nil, err
	}
	b := s.board(w)
	b.LastDrill = s.lastDrill(r.Context())
	if s.src.Standby != nil {
		b.Standby = s.src.Standby()
	}
	if s.src.StoreCheck != nil {
		b.StoreCheck = s.src.StoreCheck()
		if n := storeCheckNote(b.StoreCheck); n != "" {
			b.Notes = append([]string{n}, b.Notes...)
		}
	}
	return b, nil
}

func (s *Server) serveConnector(r *http.Request) (any, error) {
	w, err := s.world(r.Context())
	if err != nil {
		return nil, err
	}
	p, ok := s.connectorPage(w, r.PathValue("name"))
	if !ok {
		return nil, &httpError{http.StatusNotFound, "no connector " + r.PathValue("name") + " in the newest state or the window's events"}
	}
	return p, nil
}

func (s *Server) serveTimeline(r *http.Request) (any, error) {
	w, err := s.world(r.Context())
	if err != nil {
		return nil, err
	}
	t := s.timeline(w)
	if at := r.URL.Query().Get("at"); at != "" {
		when, err := snapshot.ParseMoment(at, w.now)
		if err != nil {
			return nil, &httpError{http.StatusBadRequest, "at=" + at + ": " + err.Error()}
		}
		t.Plan = s.plan(r.Context(), when, r.URL.Query().Get("connector"))
	}
	return t, nil
}

func (s *Server) serveDiff(r *http.Request) (any, error) {
	q := r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	if from == "" {
		// What changed since the newest snapshot.
		w, err := s.world(r.Context())
		if err != nil {
			return nil, err
		}
		if len(w.infos) == 0 {
			return nil, &httpError{http.StatusNotFound, "the store holds no snapshot yet"}
		}
		from = w.infos[len(w.infos)-1].ID
	}
	a, err := s.resolve(r.Context(), from)
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, err.Error()}
	}
	b, err := s.resolve(r.Context(), to)
	if err != nil {
		return nil, &httpError{http.StatusBadRequest, err.Error()}
	}
	return diff(a, b, q.Get("connector")), nil
}
