// Package cloudfake is an in-process fake of the Confluent Cloud Connect
// v1 API (fully-managed connectors) for tests. The type to know is
// [Server]: make it with New, point a client at Server.URL, and set or read
// each connector's offsets with SetSourceOffsets, SetSinkOffsets and
// Offsets. Connectors and their offsets live in memory.
//
// What it implements, under /connect/v1/environments/{env}/clusters/{cluster},
// after Confluent's API reference
// (https://docs.confluent.io/cloud/current/api.html#tag/Managed-Connectors-(connectv1))
// and "Manage Offsets for Fully-Managed Connectors in Confluent Cloud"
// (https://docs.confluent.io/cloud/current/connectors/offsets.html):
//
//	every request                      HTTP basic auth with a Cloud API key and secret; 401 otherwise
//	GET  /connectors[?expand=status,info,id]  ["name",...], or {name:{"id","info","status"}} with expand
//	GET  /connectors/{name}            {"name","config","tasks","type"}
//	GET  /connectors/{name}/config     the config, "name" included
//	GET  /connectors/{name}/status     {"name","connector":{"state","worker_id","trace"},"tasks":[...],"type"}
//	PUT  /connectors/{name}/pause      202
//	PUT  /connectors/{name}/resume     202
//	GET  /connectors/{name}/offsets    {"name","id","offsets":[...],"metadata":{"observed_at"}}
//	POST /connectors/{name}/offsets/request   {"type":"PATCH"|"DELETE","offsets":[...]}: 202 with the
//	                                   request {"id","name","offsets","requested_at","type"}; 400 for an
//	                                   unknown type or a PATCH without offsets; 409 while one is in
//	                                   progress ("You can only make one alter offsets request at a time")
//	GET  /connectors/{name}/offsets/request/status   {"request","status":{"phase","message"},
//	                                   "previous_offsets","applied_at"} of the latest request; 404 if none
//
// As the offsets guide says, a connector is PAUSED while its request is
// in progress and resumes by itself once the offsets are altered (a
// connector paused before stays paused). A request moves from PENDING to
// APPLIED once Options.PendingPolls status reads and Options.ApplyDelay
// have passed. Errors are the Cloud API's Failure body,
// {"errors":[{"status","detail"}]}. The API reference does not give the
// status code of a second request while one is in progress; the fake
// answers 409.
//
// Knobs for failure paths: FailNext (the next request FAILS on the
// server, with a message), StayPending (requests stay PENDING forever),
// Options.StatusLag (the status endpoint shows the previous request for a
// few reads after a new one) and Options.StaleReads (GET offsets shows
// offsets observed before the last request for a few reads). Requests
// lists what was asked.
//
// A Server is safe for concurrent use.
package cloudfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
)

// Connector types.
const (
	TypeSource = "source"
	TypeSink   = "sink"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Environment and Cluster are the ids in the URL; default env-1 and
	// lkc-1.
	Environment, Cluster string
	// APIKey and APISecret are the credentials accepted; default "key"
	// and "secret".
	APIKey, APISecret string
	// PendingPolls is how many status reads of a request answer PENDING
	// before it is APPLIED; default 1.
	PendingPolls int
	// ApplyDelay is the least time from a request to APPLIED.
	ApplyDelay time.Duration
	// StatusLag is how many status reads after a new request still show
	// the request before it.
	StatusLag int
	// StaleReads is how many GET offsets after a request is applied still
	// show the offsets before it, observed before it.
	StaleReads int
}

// SinkOffset is one partition's offset of a sink connector.
type SinkOffset struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Request is one request the server answered.
type Request struct {
	Method string
	// Path is relative to the connector API base (Server.URL), such as
	// /connectors/x/offsets/request; Query is the raw query.
	Path, Query string
	Body        string
}

// Server is the fake. Make it with New.
type Server struct {
	opts Options
	srv  *httptest.Server

	mu         sync.Mutex
	connectors map[string]*connector
	requests   []Request
}

type connector struct {
	name, typ, id string
	config        map[string]string
	state         string // RUNNING or PAUSED, as the user set it
	offsets       []connectjson.OffsetEntry
	observedAt    time.Time

	// The latest offsets request.
	req        *offsetRequest
	failNext   string
	stayPend   bool
	staleLeft  int
	staleOff   []connectjson.OffsetEntry
	staleAt    time.Time
	statusLag  int
	prevStatus []byte // the status answer of the request before req
}

type offsetRequest struct {
	typ         string
	offsets     []connectjson.OffsetEntry
	raw         json.RawMessage
	requestedAt time.Time
	polls       int
	phase       string
	message     string
	previous    []connectjson.OffsetEntry
	appliedAt   time.Time
}

// New starts a Server, closed when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Environment == "" {
		opts.Environment = "env-1"
	}
	if opts.Cluster == "" {
		opts.Cluster = "lkc-1"
	}
	if opts.APIKey == "" {
		opts.APIKey = "key"
	}
	if opts.APISecret == "" {
		opts.APISecret = "secret"
	}
	if opts.PendingPolls <= 0 {
		opts.PendingPolls = 1
	}
	s := &Server{opts: opts, connectors: map[string]*connector{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// BaseURL is the API's root, http://127.0.0.1:PORT (as
// https://api.confluent.cloud).
func (s *Server) BaseURL() string { return s.srv.URL }

// URL is the connector API base of the environment and cluster,
// http://127.0.0.1:PORT/connect/v1/environments/ENV/clusters/LKC.
func (s *Server) URL() string { return s.srv.URL + s.prefix() }

// Environment and Cluster are the ids the server answers for.
func (s *Server) Environment() string { return s.opts.Environment }

// Cluster is the Kafka cluster id (lkc-...).
func (s *Server) Cluster() string { return s.opts.Cluster }

// Credentials are the API key and secret it accepts.
func (s *Server) Credentials() (key, secret string) { return s.opts.APIKey, s.opts.APISecret }

func (s *Server) prefix() string {
	return "/connect/v1/environments/" + url.PathEscape(s.opts.Environment) + "/clusters/" + url.PathEscape(s.opts.Cluster)
}

// AddConnector adds or replaces a RUNNING connector of type typ
// (TypeSource or TypeSink) with config (its "name" set to name) and no
// offsets.
func (s *Server) AddConnector(name, typ string, config map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.add(name, typ, config)
}

func (s *Server) add(name, typ string, config map[string]string) {
	cfg := map[string]string{}
	for k, v := range config {
		cfg[k] = v
	}
	cfg["name"] = name
	s.connectors[name] = &connector{name: name, typ: typ, id: fmt.Sprintf("lcc-%d", len(s.connectors)+1), config: cfg, state: "RUNNING", observedAt: time.Now()}
}

func (s *Server) ensure(name, typ string) *connector {
	c, ok := s.connectors[name]
	if !ok {
		s.add(name, typ, map[string]string{"connector.class": "Fake" + strings.ToUpper(typ[:1]) + typ[1:]})
		c = s.connectors[name]
	}
	return c
}

// SetSourceOffsets sets a source connector's offsets (adding the
// connector when it is not there).
func (s *Server) SetSourceOffsets(name string, entries []connectjson.OffsetEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ensure(name, TypeSource)
	c.offsets, c.observedAt = slices.Clone(entries), time.Now()
}

// SetSinkOffsets sets a sink connector's offsets (adding the connector
// when it is not there).
func (s *Server) SetSinkOffsets(name string, offsets []SinkOffset) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ensure(name, TypeSink)
	c.offsets = nil
	for _, o := range offsets {
		c.offsets = append(c.offsets, connectjson.OffsetEntry{Partition: connectjson.SinkPartition(o.Topic, o.Partition), Offset: connectjson.SinkOffset(o.Offset)})
	}
	c.observedAt = time.Now()
}

// Offsets returns a connector's offsets as they are now (nil for an
// unknown connector).
func (s *Server) Offsets(name string) []connectjson.OffsetEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.connectors[name]; ok {
		return slices.Clone(c.offsets)
	}
	return nil
}

// State returns a connector's state as its status shows it ("" for an
// unknown connector).
func (s *Server) State(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.connectors[name]; ok {
		return c.shownState()
	}
	return ""
}

// FailNext makes the connector's next offsets request FAIL on the server
// with msg, leaving its offsets as they are.
func (s *Server) FailNext(name, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.connectors[name]; ok {
		c.failNext = msg
	}
}

// StayPending makes the connector's offsets requests stay PENDING
// forever (and the connector PAUSED).
func (s *Server) StayPending(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.connectors[name]; ok {
		c.stayPend = true
	}
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// shownState is the state the status shows: PAUSED while a request is in
// progress.
func (c *connector) shownState() string {
	if c.req != nil && c.req.phase == "PENDING" {
		return "PAUSED"
	}
	return c.state
}
