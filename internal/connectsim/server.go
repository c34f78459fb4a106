// Package connectsim is an in-process stand-in for the Kafka Connect REST
// API: the workers `offsetkeeper demo` runs, and the REST API the tests
// drive. It is kept honest by the Kafka cluster it serves: every answer is
// read from, and every change written to, the cluster's Connect topics, the
// way a Connect worker (its herder) reads and writes them. A test that
// writes the config topic directly and a test that calls the REST API see
// the same connectors in the same states.
//
// The type to know is [Server]. Like internal/connectdemo, the demo's
// cluster, and unlike the rest of internal/, it imports snapshot
// (ConnectorConfig, ReadConfigs and ConnectorType: the config topic read
// as the worker reads it). What it implements, after Kafka's Connect REST API reference and KIP-875:
//
//	GET    /                                   {"version","commit","kafka_cluster_id"}
//	GET    /connectors[?expand=status&expand=info]
//	POST   /connectors                         201 ConnectorInfo: connector-<c> (after target-state-<c> for
//	                                           "initial_state" STOPPED or PAUSED); a RUNNING one gets its tasks
//	GET    /connectors/{name}                  ConnectorInfo
//	GET    /connectors/{name}/config           the config, "name" included
//	GET    /connectors/{name}/status           ConnectorStateInfo; STOPPED has "tasks":[]
//	PUT    /connectors/{name}/stop             204: commit-<c> {"tasks":0}, then target-state STOPPED
//	PUT    /connectors/{name}/pause            202: target-state PAUSED
//	PUT    /connectors/{name}/resume           202: target-state STARTED, then task configs and commit-<c>
//	GET    /connectors/{name}/offsets          the offsets as Connect renders them
//	PATCH  /connectors/{name}/offsets          400 unless STOPPED with no tasks; writes as Connect does
//	DELETE /connectors/{name}/offsets          likewise, removing every offset
//
// Errors are {"error_code":N,"message":"..."}. Source offsets are written
// the way Worker.modifySourceConnectorOffsets writes them: each partition
// normalized through Connect's JsonConverter round trip (key bytes in
// HashMap order, connectjson.CanonicalKey; values as connectjson.RESTMap
// renders them), a null offset as a tombstone, to murmur2(key) of the
// connector's offsets topic (its own offsets.storage.topic, with the
// worker topic as secondary store). Sink offsets go through the group
// admin API, as a non-member, so the broker refuses them while the group
// has members. Unlike a real worker it writes without transactions, runs
// no connector code (but for the FileStreamSource's own offset checks,
// answered 500 as Connect answers a connector's exception) and elects no
// leader. TestRESTTable holds it to a real worker, exchange by exchange.
//
// Options model the workers: their version, Options.StopLag (the status
// topic lags behind a stop), Options.SinkMembers (a running sink keeps a
// consumer in its group, which leaves some time after a stop),
// Options.FrameworkOnly (a connector whose alterOffsets hook does not
// confirm), Options.ResumeLag (a resumed connector RUNNING before its
// tasks). The faults tests inject (409 during a rebalance, 500 "Request
// timed out", FAILED tasks, a status not there yet, an unhealthy worker, a
// worker upgraded) and the record of the requests asked are not here: they
// wrap a Server's handler in internal/connectsim/connectsimtest, which
// only tests import, so that none of it ships in the binary.
package connectsim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/offsetkeeper/offsetkeeper/internal/connectjson"
	"github.com/offsetkeeper/offsetkeeper/internal/connectrest"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/capture"
)

// Messages Connect answers with, verbatim where the doc quotes them.
const (
	MsgRebalance    = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
	MsgTimedOut     = "Request timed out"
	MsgNoOffsets    = "Partitions / offsets need to be provided for an alter offsets request"
	MsgAltered      = "The offsets for this connector have been altered successfully"
	MsgReset        = "The offsets for this connector have been reset successfully"
	MsgFrameworkFmt = "The Connect framework-managed offsets for this connector have been %s successfully. However, if this connector manages offsets externally, they will need to be manually %s in the system that the connector uses."
)

// Options configure a Server. Zero fields take the defaults.
type Options struct {
	// ConfigTopic and OffsetsTopic are the worker's config.storage.topic
	// and offset.storage.topic; default connect-configs and connect-offsets.
	ConfigTopic, OffsetsTopic string
	// Version, Commit and WorkerID are reported by GET / and the status;
	// default "3.7.0", "0123456789abcdef" and "connect-1:8083".
	Version, Commit, WorkerID string
	// KafkaWait, when set, bounds how long a request waits for the
	// config topic: past it, the request answers from the connectors last
	// read, as a worker answers GET /connectors and the statuses from
	// memory while its Kafka is down (AbstractHerder.connectors reads
	// configBackingStore.snapshot(), never Kafka); writes still need
	// Kafka. 0 waits as long as the request does.
	KafkaWait time.Duration
	// StopLag is how many status reads after a stop still report the
	// connector and its tasks as they were, as a status topic does while
	// tasks shut down.
	StopLag int
	// SinkMembers keeps a consumer in the group of every sink connector
	// whose tasks run (STARTED or PAUSED with tasks), as its tasks would;
	// after a stop it leaves the group MemberLeaveDelay later (default
	// 200ms). Start waits until each has joined.
	SinkMembers      bool
	MemberLeaveDelay time.Duration
	// Username and Password, or Token, make the server require HTTP basic
	// auth or a bearer token (401 otherwise).
	Username, Password, Token string
	// TLS serves HTTPS with this configuration.
	TLS *tls.Config
	// Addr is the address to listen on, host:port; default a free
	// loopback port.
	Addr string
	// FrameworkOnly names connectors whose alterOffsets hook returns false:
	// Connect then says it altered only the framework-managed offsets.
	FrameworkOnly []string
	// ResumeLag is how many status reads after a resume report the
	// connector RUNNING with no task yet, as a real worker does while its
	// tasks start.
	ResumeLag int
	// Plugins are the connector plugins GET /connector-plugins lists and
	// validate accepts; nil means DefaultPlugins(Version).
	Plugins []Plugin
	// OverridePolicy is the workers' connector.client.config.override.policy
	// (PolicyAll by default); OverrideAllowlist the allowlist of
	// PolicyAllowlist (connector.client.config.override.allowlist).
	OverridePolicy    string
	OverrideAllowlist []string
	// ExactlyOnceSource is the workers' exactly.once.source.support
	// ("disabled" when empty): validate refuses a source config with
	// exactly.once.support=required unless it is "enabled" (eos.go).
	ExactlyOnceSource string
}

// Server is a fake Connect REST API over a Kafka cluster. Make it with
// Start and Close it when done.
//
// It serves requests as a distributed worker does (Kafka 3.8): what
// DistributedHerder queues for its tick thread (creating a connector,
// writing its config, stopping it, altering or resetting its offsets) runs
// one at a time; what the REST thread does itself runs concurrently: reads,
// validation, and pause and resume, which AbstractHerder answers with one
// target-state write to the config topic. Like the worker's
// KafkaBasedLog, it keeps its view of the config topic and reads only the
// records written since, to the topic's end, before each request: a record
// written there directly is seen by the next request.
type Server struct {
	// URL is the base URL, http://127.0.0.1:port (https:// with TLS).
	URL string

	opts    Options
	mux     *http.ServeMux
	cl      *kgo.Client // reads
	prod    *kgo.Client // writes, murmur2 partitioner
	adm     *kadm.Client
	srv     *http.Server
	configs *capture.ConfigReader

	// herder serializes the requests a herder's tick thread handles.
	herder sync.Mutex

	// mu guards lag, changed and last; it is never held across a request
	// to Kafka.
	mu      sync.Mutex
	lag     map[string]*lagged
	changed map[string]bool
	// last are the connectors the last view read (Options.KafkaWait).
	last connectors

	// memMu guards members: sink members join while it is held.
	memMu   sync.Mutex
	members map[string]func()
	leaving sync.WaitGroup
}

type lagged struct {
	reads  int
	status statusJSON
}

// New makes a Server over the cluster cl talks to, not listening: serve
// it as an http.Handler (its URL, for the Location of a created
// connector, is the caller's to set) or use Start. Options.Addr and
// Options.TLS are Start's. cl must not be configured to consume; the
// server makes its own clients from cl.Opts().
func New(cl *kgo.Client, opts Options) (*Server, error) {
	if opts.ConfigTopic == "" {
		opts.ConfigTopic = snapshot.DefaultConfigTopic
	}
	if opts.OffsetsTopic == "" {
		opts.OffsetsTopic = snapshot.DefaultOffsetsTopic
	}
	if opts.Version == "" {
		opts.Version = "3.7.0"
	}
	if opts.Commit == "" {
		opts.Commit = "0123456789abcdef"
	}
	if opts.WorkerID == "" {
		opts.WorkerID = "connect-1:8083"
	}
	if opts.MemberLeaveDelay <= 0 {
		opts.MemberLeaveDelay = 200 * time.Millisecond
	}
	prod, err := kgo.NewClient(append(slices.Clone(cl.Opts()),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.RequiredAcks(kgo.AllISRAcks()),
	)...)
	if err != nil {
		return nil, fmt.Errorf("connectsim: create producer: %w", err)
	}
	s := &Server{opts: opts, cl: cl, prod: prod, adm: kadm.NewClient(cl), configs: capture.NewConfigReader(cl, opts.ConfigTopic),
		lag: map[string]*lagged{}, changed: map[string]bool{}, members: map[string]func(){}}
	mux := http.NewServeMux()
	s.mux = mux
	mux.HandleFunc("GET /{$}", s.handle(s.root))
	mux.HandleFunc("GET /connectors", s.handle(s.list))
	mux.HandleFunc("GET /connectors/{name}", s.handle(s.info))
	mux.HandleFunc("POST /connectors", s.handle(s.serial(s.create)))
	mux.HandleFunc("GET /connectors/{name}/config", s.handle(s.config))
	mux.HandleFunc("PUT /connectors/{name}/config", s.handle(s.serial(s.putConfig))) // putconfig.go
	mux.HandleFunc("GET /connectors/{name}/status", s.handle(s.status))
	mux.HandleFunc("PUT /connectors/{name}/stop", s.handle(s.since(5, http.StatusNotFound, s.serial(s.stop))))
	mux.HandleFunc("PUT /connectors/{name}/pause", s.handle(s.pause))
	mux.HandleFunc("PUT /connectors/{name}/resume", s.handle(s.resume))
	mux.HandleFunc("GET /connectors/{name}/offsets", s.handle(s.since(5, http.StatusNotFound, s.getOffsets))) // versions.go
	mux.HandleFunc("PATCH /connectors/{name}/offsets", s.handle(s.since(6, http.StatusMethodNotAllowed, s.serial(s.patchOffsets))))
	mux.HandleFunc("DELETE /connectors/{name}/offsets", s.handle(s.since(6, http.StatusMethodNotAllowed, s.serial(s.deleteOffsets))))
	mux.HandleFunc("GET /connector-plugins", s.handle(s.plugins))
	mux.HandleFunc("PUT /connector-plugins/{class}/config/validate", s.handle(s.validate))
	mux.HandleFunc("GET /health", s.handle(s.healthAnswer))
	mux.HandleFunc("/", s.handle(func(ctx context.Context, r *http.Request) (int, any, error) {
		return 0, nil, apiError(http.StatusNotFound, "HTTP 404 Not Found")
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err = s.reconcile(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("connectsim: %w", err)
	}
	return s, nil
}

// ServeHTTP answers a request of the Connect REST API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Start starts a Server over the cluster cl talks to, listening on
// Options.Addr (with Options.TLS, HTTPS). cl must not be configured to
// consume; the server makes its own clients from cl.Opts().
func Start(cl *kgo.Client, opts Options) (*Server, error) {
	s, err := New(cl, opts)
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("connectsim: listen on %s: %w", addr, err)
	}
	// Refused TLS handshakes are expected (a client that does not trust
	// the server's certificate): not worth a log line.
	srv := &http.Server{Handler: s.mux, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 30 * time.Second}
	scheme := "http"
	if opts.TLS != nil {
		cfg := opts.TLS.Clone()
		if len(cfg.NextProtos) == 0 {
			cfg.NextProtos = []string{"http/1.1"}
		}
		srv.TLSConfig = cfg
		ln, scheme = tls.NewListener(ln, cfg), "https"
	}
	s.URL = scheme + "://" + ln.Addr().String()
	s.srv = srv
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

// Close stops the server and its sink members.
func (s *Server) Close() {
	if s.srv != nil {
		// As a worker shutting down: the requests under way finish first.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if s.srv.Shutdown(ctx) != nil {
			s.srv.Close()
		}
		cancel()
	}
	s.memMu.Lock()
	for name, stop := range s.members {
		stop()
		delete(s.members, name)
	}
	s.memMu.Unlock()
	s.leaving.Wait()
	s.prod.Close()
}

// Changed returns the connectors a request has stopped, paused, resumed
// or whose offsets it has altered or reset: any request but a GET that
// names a connector (the demo's churner leaves them alone).
func (s *Server) Changed() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.changed)
}

// noteChange records the connector r changes, if any (Changed).
func (s *Server) noteChange(r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/connectors/")
	if r.Method == http.MethodGet || !ok {
		return
	}
	if i := strings.LastIndex(rest, "/"); i > 0 {
		rest = rest[:i]
	}
	s.mu.Lock()
	s.changed[rest] = true
	s.mu.Unlock()
}

// version is the version GET / reports.
func (s *Server) version() string { return s.opts.Version }

// httpError is an answer with an error status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.status, e.msg) }

func apiError(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// handler answers one request: a status and a value to encode as JSON
// (a []byte is written as it is; nil writes no body).
type handler func(ctx context.Context, r *http.Request) (int, any, error)

func (s *Server) handle(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.noteChange(r)
		status, v, err := s.serve(r, h)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) {
				he = &httpError{status: http.StatusInternalServerError, msg: err.Error()}
			}
			status, v = he.status, map[string]any{"error_code": he.status, "message": he.msg}
		}
		if v == nil {
			w.WriteHeader(status)
			return
		}
		body, ok := v.([]byte)
		if !ok {
			body = encode(v)
		}
		w.Header().Set("Content-Type", "application/json")
		if info, ok := v.(infoJSON); ok && status == http.StatusCreated {
			w.Header().Set("Location", s.URL+"/connectors/"+url.PathEscape(info.Name))
		}
		w.WriteHeader(status)
		w.Write(body)
	}
}

func (s *Server) serve(r *http.Request, h handler) (int, any, error) {
	if err := s.authorize(r); err != nil {
		return 0, nil, err
	}
	return h(r.Context(), r)
}

// serial runs h as a herder runs a request it queues for its tick thread:
// one at a time.
func (s *Server) serial(h handler) handler {
	return func(ctx context.Context, r *http.Request) (int, any, error) {
		s.herder.Lock()
		defer s.herder.Unlock()
		return h(ctx, r)
	}
}

func (s *Server) authorize(r *http.Request) error {
	switch {
	case s.opts.Username != "":
		u, p, ok := r.BasicAuth()
		if !ok || u != s.opts.Username || p != s.opts.Password {
			return apiError(http.StatusUnauthorized, "Credentials authentication failed")
		}
	case s.opts.Token != "":
		if r.Header.Get("Authorization") != "Bearer "+s.opts.Token {
			return apiError(http.StatusUnauthorized, "Credentials authentication failed")
		}
	}
	return nil
}

func encode(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Jackson does not escape <, > and &
	if err := enc.Encode(v); err != nil {
		return []byte(fmt.Sprintf(`{"error_code":500,"message":%q}`, err.Error()))
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// connector is one configured connector as the server sees it.
type connector struct {
	snapshot.ConnectorConfig
	typ          string
	group        string
	offsetsTopic string
	topics       []string
	topicsRegex  string
}

// connectors is a view of the config topic: every configured connector,
// by name. It is shared by the requests that see the same view: never
// changed.
type connectors map[string]snapshot.ConnectorConfig

// get is the named connector as the server sees it; each request derives
// only the connectors it looks at.
func (m connectors) get(name string) (connector, bool) {
	c, ok := m[name]
	if !ok {
		return connector{}, false
	}
	conn := connector{ConnectorConfig: c, typ: snapshot.ConnectorType(c.Config), offsetsTopic: c.Config["offsets.storage.topic"]}
	if conn.typ == snapshot.TypeSink {
		conn.group = c.Config["consumer.override.group.id"]
		if conn.group == "" {
			conn.group = snapshot.DefaultGroupPrefix + name
		}
		for _, t := range strings.Split(c.Config["topics"], ",") {
			if t = strings.TrimSpace(t); t != "" {
				conn.topics = append(conn.topics, t)
			}
		}
		conn.topicsRegex = c.Config["topics.regex"]
	}
	return conn, true
}

// at is get without the flag.
func (m connectors) at(name string) connector {
	c, _ := m.get(name)
	return c
}

// view reads the config topic to its end (what was written since the last
// view) and returns every configured connector.
func (s *Server) view(ctx context.Context) (connectors, error) {
	if s.opts.KafkaWait <= 0 {
		configs, _, err := s.configs.Read(ctx)
		if err != nil {
			return nil, err
		}
		return connectors(configs), nil
	}
	rctx, cancel := context.WithTimeout(ctx, s.opts.KafkaWait)
	defer cancel()
	configs, _, err := s.configs.Read(rctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.last == nil || ctx.Err() != nil {
			return nil, err
		}
		return s.last, nil // from memory, as a worker whose Kafka is down
	}
	s.last = connectors(configs)
	return s.last, nil
}

// lookup reads the config topic and returns the named connector, or 404.
func (s *Server) lookup(ctx context.Context, r *http.Request) (connector, connectors, error) {
	name := r.PathValue("name")
	all, err := s.reconcile(ctx)
	if err != nil {
		return connector{}, nil, err
	}
	c, ok := all.get(name)
	if !ok {
		return connector{}, nil, apiError(http.StatusNotFound, "Connector %s not found", name)
	}
	return c, all, nil
}

// lookupUnknown is lookup with the 404 message of the herder's stop, pause
// and resume ("Unknown connector X").
func (s *Server) lookupUnknown(ctx context.Context, r *http.Request) (connector, connectors, error) {
	c, all, err := s.lookup(ctx, r)
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusNotFound {
		return c, all, apiError(http.StatusNotFound, "Unknown connector %s", r.PathValue("name"))
	}
	return c, all, err
}

// reconcile reads the config topic and starts or stops sink members to
// match it.
func (s *Server) reconcile(ctx context.Context) (connectors, error) {
	all, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	if !s.opts.SinkMembers {
		return all, nil
	}
	s.memMu.Lock()
	defer s.memMu.Unlock()
	for name, stop := range s.members {
		c, ok := all.get(name)
		if !ok || !runsTasks(c) {
			s.leave(name, stop)
		}
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := all.at(name)
		if c.typ != snapshot.TypeSink || !runsTasks(c) || s.members[name] != nil {
			continue
		}
		stop, err := s.join(ctx, c)
		if err != nil {
			return nil, err
		}
		s.members[name] = stop
	}
	return all, nil
}

// syncMembers is reconcile after a write whose answer needs no view: with
// no sink members to keep, nothing.
func (s *Server) syncMembers(ctx context.Context) error {
	if !s.opts.SinkMembers {
		return nil
	}
	_, err := s.reconcile(ctx)
	return err
}

func runsTasks(c connector) bool { return c.TargetState != snapshot.StateStopped && c.Tasks > 0 }

// leave makes a sink member leave its group MemberLeaveDelay from now. The
// caller holds s.memMu.
func (s *Server) leave(name string, stop func()) {
	delete(s.members, name)
	s.leaving.Add(1)
	go func() {
		defer s.leaving.Done()
		time.Sleep(s.opts.MemberLeaveDelay)
		stop()
	}()
}

// join starts a consumer in the sink's group and waits for its assignment.
func (s *Server) join(ctx context.Context, c connector) (func(), error) {
	opts := append(slices.Clone(s.cl.Opts()), kgo.ConsumerGroup(c.group), kgo.DisableAutoCommit())
	if c.Config["consumer.override.group.protocol"] == "consumer" {
		// KIP-848 (Kafka 4.0+): the task's consumer joins with
		// ConsumerGroupHeartbeat, the assignment made by the broker.
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
	}
	switch {
	case c.topicsRegex != "":
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(c.topicsRegex))
	case len(c.topics) > 0:
		opts = append(opts, kgo.ConsumeTopics(c.topics...))
	default:
		return func() {}, nil
	}
	assigned := make(chan struct{})
	var once sync.Once
	opts = append(opts, kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
		once.Do(func() { close(assigned) })
	}))
	member, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("start a member of group %q: %w", c.group, err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer member.Close() // leaves the group
		for mctx.Err() == nil {
			member.PollFetches(mctx)
		}
	}()
	stop := func() { cancel(); <-done }
	select {
	case <-assigned:
		return stop, nil
	case <-ctx.Done():
	case <-time.After(20 * time.Second):
	}
	stop()
	return nil, fmt.Errorf("start a member of group %q: no assignment", c.group)
}

// ---- JSON shapes (§9), written independently of package connectrest ----

type stateJSON struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

type taskStateJSON struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

type statusJSON struct {
	Name      string          `json:"name"`
	Connector stateJSON       `json:"connector"`
	Tasks     []taskStateJSON `json:"tasks"`
	Type      string          `json:"type"`
}

type taskIDJSON struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

type infoJSON struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []taskIDJSON      `json:"tasks"`
	Type   string            `json:"type"`
}

// statusOf derives a connector's status from its config topic state, or
// the lagging one a recent stop left.
func (s *Server) statusOf(c connector) statusJSON {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked(c)
}

// statusLocked is statusOf; the caller holds s.mu.
func (s *Server) statusLocked(c connector) statusJSON {
	if l := s.lag[c.Name]; l != nil {
		if l.reads > 0 {
			l.reads--
			return l.status
		}
		delete(s.lag, c.Name)
	}
	st := statusJSON{Name: c.Name, Type: c.typ, Tasks: []taskStateJSON{}}
	taskState := ""
	switch c.TargetState {
	case snapshot.StateStarted:
		st.Connector.State, taskState = connectrest.StateRunning, connectrest.StateRunning
	case snapshot.StatePaused:
		st.Connector.State, taskState = connectrest.StatePaused, connectrest.StatePaused
	default:
		st.Connector.State, taskState = connectrest.StateStopped, connectrest.StateUnassigned
	}
	st.Connector.WorkerID = s.opts.WorkerID
	for i := 0; i < c.Tasks; i++ {
		st.Tasks = append(st.Tasks, taskStateJSON{ID: i, State: taskState, WorkerID: s.opts.WorkerID})
	}
	return st
}

func (s *Server) infoOf(c connector) infoJSON {
	info := infoJSON{Name: c.Name, Config: c.Config, Tasks: []taskIDJSON{}, Type: c.typ}
	for i := 0; i < c.Tasks; i++ {
		info.Tasks = append(info.Tasks, taskIDJSON{Connector: c.Name, Task: i})
	}
	return info
}

// ---- handlers ----

func (s *Server) root(ctx context.Context, r *http.Request) (int, any, error) {
	md, err := s.adm.BrokerMetadata(ctx)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"version": s.version(), "commit": s.opts.Commit, "kafka_cluster_id": md.Cluster}, nil
}

func (s *Server) list(ctx context.Context, r *http.Request) (int, any, error) {
	all, err := s.reconcile(ctx)
	if err != nil {
		return 0, nil, err
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	expand := r.URL.Query()["expand"]
	withStatus, withInfo := slices.Contains(expand, "status"), slices.Contains(expand, "info")
	if !withStatus && !withInfo {
		return http.StatusOK, names, nil
	}
	out := map[string]map[string]any{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		e := map[string]any{}
		if withStatus {
			e["status"] = s.statusLocked(all.at(n))
		}
		if withInfo {
			e["info"] = s.infoOf(all.at(n))
		}
		out[n] = e
	}
	return http.StatusOK, out, nil
}

func (s *Server) info(ctx context.Context, r *http.Request) (int, any, error) {
	c, _, err := s.lookup(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.infoOf(c), nil
}

func (s *Server) config(ctx context.Context, r *http.Request) (int, any, error) {
	c, _, err := s.lookup(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.Config, nil
}

// create is POST /connectors as DistributedHerder.putConnectorConfig does
// it for a new connector: the target state first when initial_state asks
// for one, then the config; a connector that starts RUNNING gets its task
// configs and commit, as its first task reconfiguration writes them.
func (s *Server) create(ctx context.Context, r *http.Request) (int, any, error) {
	var req struct {
		Name         string            `json:"name"`
		Config       map[string]string `json:"config"`
		InitialState string            `json:"initial_state"`
	}
	data, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(data, &req) != nil {
		return 0, nil, apiError(http.StatusBadRequest, "Cannot deserialize the request body")
	}
	if req.Name == "" && req.Config != nil {
		req.Name = req.Config["name"]
	}
	if strings.TrimSpace(req.Name) == "" {
		return 0, nil, apiError(http.StatusBadRequest, "Connector name cannot be empty")
	}
	if req.Config == nil {
		return 0, nil, apiError(http.StatusBadRequest, "Connector config cannot be empty")
	}
	if n, ok := req.Config["name"]; ok && n != req.Name {
		return 0, nil, apiError(http.StatusBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", n, req.Name)
	}
	all, err := s.reconcile(ctx)
	if err != nil {
		return 0, nil, err
	}
	if _, ok := all[req.Name]; ok {
		return 0, nil, apiError(http.StatusConflict, "Connector %s already exists", req.Name)
	}
	cfg := make(map[string]string, len(req.Config)+1)
	for k, v := range req.Config {
		cfg[k] = v
	}
	cfg["name"] = req.Name
	if s.kafkaMinor() < 7 {
		req.InitialState = "" // not a field before 3.7: ignored (versions.go)
	}
	var recs []*kgo.Record
	switch strings.ToUpper(req.InitialState) {
	case "", "RUNNING":
	case "STOPPED":
		recs = append(recs, s.configRecord("target-state-"+req.Name, `{"state":"PAUSED","state.v2":"STOPPED"}`))
	case "PAUSED":
		recs = append(recs, s.configRecord("target-state-"+req.Name, `{"state":"PAUSED","state.v2":"PAUSED"}`))
	default:
		return 0, nil, apiError(http.StatusBadRequest, "Cannot deserialize the request body: unknown initial_state %q", req.InitialState)
	}
	recs = append(recs, s.configRecord("connector-"+req.Name, string(encode(map[string]any{"properties": cfg}))))
	if req.InitialState == "" || strings.EqualFold(req.InitialState, "RUNNING") {
		recs = append(recs, s.taskRecords(connector{ConnectorConfig: snapshot.ConnectorConfig{Name: req.Name, Config: cfg}})...)
	}
	if err := s.produce(ctx, recs...); err != nil {
		return 0, nil, err
	}
	all, err = s.reconcile(ctx)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.infoOf(all.at(req.Name)), nil
}

func (s *Server) status(ctx context.Context, r *http.Request) (int, any, error) {
	name := r.PathValue("name")
	all, err := s.reconcile(ctx)
	if err != nil {
		return 0, nil, err
	}
	c, ok := all.get(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		return 0, nil, apiError(http.StatusNotFound, "No status found for connector %s", name)
	}
	return http.StatusOK, s.statusLocked(c), nil
}

// produce writes records to the config topic, in order (its one
// partition keeps the order of one idempotent producer's records), and
// waits until each is written.
func (s *Server) produce(ctx context.Context, recs ...*kgo.Record) error {
	for _, res := range s.prod.ProduceSync(ctx, recs...) {
		if res.Err != nil {
			return fmt.Errorf("write %s to %s: %w", res.Record.Key, res.Record.Topic, res.Err)
		}
	}
	return nil
}

func (s *Server) configRecord(key, value string) *kgo.Record {
	return &kgo.Record{Topic: s.opts.ConfigTopic, Key: []byte(key), Value: []byte(value)}
}

// stop is DistributedHerder.stopConnector: an empty task list, then the
// target state STOPPED.
func (s *Server) stop(ctx context.Context, r *http.Request) (int, any, error) {
	c, _, err := s.lookupUnknown(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	before := s.statusOf(c)
	if err := s.produce(ctx,
		s.configRecord("commit-"+c.Name, `{"tasks":0}`),
		s.configRecord("target-state-"+c.Name, `{"state":"PAUSED","state.v2":"STOPPED"}`),
	); err != nil {
		return 0, nil, err
	}
	if s.opts.StopLag > 0 && before.Connector.State != connectrest.StateStopped {
		s.mu.Lock()
		s.lag[c.Name] = &lagged{reads: s.opts.StopLag, status: before}
		s.mu.Unlock()
	}
	if err := s.syncMembers(ctx); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// taskRecords are the task configs and the commit a connector that starts
// (or is paused from STOPPED) generates: tasks.max tasks, at least one.
func (s *Server) taskRecords(c connector) []*kgo.Record {
	n, err := strconv.Atoi(c.Config["tasks.max"])
	if err != nil || n < 1 {
		n = 1
	}
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		props := map[string]string{}
		for k, v := range c.Config {
			props[k] = v
		}
		props["task.index"] = strconv.Itoa(i)
		recs = append(recs, s.configRecord(fmt.Sprintf("task-%s-%d", c.Name, i), string(encode(map[string]any{"properties": props}))))
	}
	return append(recs, s.configRecord("commit-"+c.Name, fmt.Sprintf(`{"tasks":%d}`, n)))
}

func (s *Server) pause(ctx context.Context, r *http.Request) (int, any, error) {
	return s.setTargetState(ctx, r, "PAUSED")
}

func (s *Server) resume(ctx context.Context, r *http.Request) (int, any, error) {
	return s.setTargetState(ctx, r, "STARTED")
}

// setTargetState writes the connector's target state (both forms), plus
// its task configs and commit when it has none (a stopped connector coming
// back), as the herder does for PUT .../pause and .../resume; 202.
func (s *Server) setTargetState(ctx context.Context, r *http.Request, state string) (int, any, error) {
	c, _, err := s.lookupUnknown(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	recs := []*kgo.Record{s.configRecord("target-state-"+c.Name, `{"state":"`+state+`","state.v2":"`+state+`"}`)}
	if c.Tasks <= 0 {
		recs = append(recs, s.taskRecords(c)...)
	}
	if err := s.produce(ctx, recs...); err != nil {
		return 0, nil, err
	}
	s.mu.Lock()
	delete(s.lag, c.Name)
	if state == "STARTED" && s.opts.ResumeLag > 0 {
		running := statusJSON{Name: c.Name, Type: c.typ, Tasks: []taskStateJSON{},
			Connector: stateJSON{State: connectrest.StateRunning, WorkerID: s.opts.WorkerID}}
		s.lag[c.Name] = &lagged{reads: s.opts.ResumeLag, status: running}
	}
	s.mu.Unlock()
	if err := s.syncMembers(ctx); err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, nil, nil
}

// capture reads the connector's offsets as Connect's stores hold them.
func (s *Server) capture(ctx context.Context, c connector) (*snapshot.Snapshot, error) {
	return capture.Capture(ctx, s.cl, capture.Options{
		OffsetsTopics: []string{s.opts.OffsetsTopic},
		ConfigTopic:   s.opts.ConfigTopic,
		Connectors:    []string{c.Name},
	})
}

func (s *Server) getOffsets(ctx context.Context, r *http.Request) (int, any, error) {
	c, _, err := s.lookup(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	snap, err := s.capture(ctx, c)
	if err != nil {
		return 0, nil, err
	}
	body, err := snap.ConnectREST(c.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, body, nil
}

// checkStopped is the herder's precondition for altering offsets.
func checkStopped(c connector) error {
	if !c.Stopped() {
		return apiError(http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", c.Name)
	}
	return nil
}

func (s *Server) patchOffsets(ctx context.Context, r *http.Request) (int, any, error) {
	entries, err := parseBody(r)
	if err != nil {
		return 0, nil, err
	}
	c, _, err := s.lookup(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	if err := checkStopped(c); err != nil {
		return 0, nil, err
	}
	if c.typ == snapshot.TypeSink {
		err = s.alterSink(ctx, c, entries)
	} else {
		err = s.alterSource(ctx, c, entries)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]string{"message": s.message(c, "altered")}, nil
}

func (s *Server) message(c connector, verb string) string {
	if slices.Contains(s.opts.FrameworkOnly, c.Name) {
		return fmt.Sprintf(MsgFrameworkFmt, verb, verb)
	}
	if verb == "reset" {
		return MsgReset
	}
	return MsgAltered
}

// parseBody reads {"offsets":[{"partition":{...},"offset":{...}|null}]}
// as Connect's Jackson mapper does: unknown fields are an error, an empty
// or missing list is 400.
func parseBody(r *http.Request) ([]connectjson.OffsetEntry, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apiError(http.StatusBadRequest, "Cannot deserialize the request body: %v", err)
	}
	entries, err := connectjson.DecodeOffsets(data, connectjson.DecodeOptions{DisallowUnknownFields: true})
	var oe *connectjson.OffsetsError
	switch {
	case errors.As(err, &oe) && oe.Index < 0:
		return nil, apiError(http.StatusBadRequest, "Cannot deserialize the request body: %v", oe.Err)
	case errors.Is(err, connectjson.ErrNoPartition):
		return nil, apiError(http.StatusBadRequest, "Partitions cannot be null or missing (entry %d)", oe.Index)
	case errors.As(err, &oe) && oe.Field == "partition":
		return nil, apiError(http.StatusBadRequest, "Partition %d is not a JSON object: %v", oe.Index, oe.Err)
	case errors.As(err, &oe):
		return nil, apiError(http.StatusBadRequest, "Offset %d is not a JSON object or null: %v", oe.Index, oe.Err)
	case err != nil:
		return nil, apiError(http.StatusBadRequest, "Cannot deserialize the request body: %v", err)
	}
	if len(entries) == 0 {
		return nil, apiError(http.StatusBadRequest, MsgNoOffsets)
	}
	return entries, nil
}

func (s *Server) alterSource(ctx context.Context, c connector, entries []connectjson.OffsetEntry) error {
	if err := fileSourceAlterOffsets(c, entries); err != nil {
		return err
	}
	var recs []*kgo.Record
	for i, e := range entries {
		if connectjson.Nested(e.Partition) || connectjson.Nested(e.Offset) {
			return apiError(http.StatusBadRequest, "Partition / offset %d: values must be primitive (no objects or arrays)", i)
		}
		rec := &kgo.Record{Key: connectjson.CanonicalKey(c.Name, e.Partition)}
		if e.Offset != nil {
			rec.Value = connectjson.RESTMap(e.Offset)
		}
		recs = append(recs, rec)
	}
	return s.writeSource(ctx, c, recs)
}

// fileSourceAlterOffsets is FileStreamSourceConnector.alterOffsets, the
// connector's own check: Connect answers what it throws with 500.
func fileSourceAlterOffsets(c connector, entries []connectjson.OffsetEntry) error {
	class := c.Config["connector.class"]
	if class != "org.apache.kafka.connect.file.FileStreamSourceConnector" && class != "FileStreamSourceConnector" && class != "FileStreamSource" {
		return nil
	}
	for _, e := range entries {
		if e.Offset == nil {
			continue // tombstones are allowed for anything
		}
		pos, ok := e.Offset.Get("position")
		if !ok {
			return errors.New("Offset objects should either be null or contain the key 'position'")
		}
		if pos.Kind() != connectjson.KindLong && pos.Kind() != connectjson.KindBigInt {
			return errors.New("The value for the 'position' key in the offset is expected to be a Long value")
		}
		if strings.HasPrefix(pos.String(), "-") {
			return errors.New("The value for the 'position' key in the offset should be a non-negative value")
		}
		if _, ok := e.Partition.Get("filename"); !ok {
			return errors.New("Partition objects should contain the key 'filename'")
		}
	}
	return nil
}

func (s *Server) writeSource(ctx context.Context, c connector, recs []*kgo.Record) error {
	primary, secondary := s.opts.OffsetsTopic, ""
	if c.offsetsTopic != "" && c.offsetsTopic != s.opts.OffsetsTopic {
		primary, secondary = c.offsetsTopic, s.opts.OffsetsTopic
	}
	var out []*kgo.Record
	to := func(topic string, tombstones bool) {
		for _, r := range recs {
			if tombstones == (r.Value == nil) {
				out = append(out, &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value})
			}
		}
	}
	if secondary != "" {
		to(secondary, true)
	}
	to(primary, true)
	to(primary, false)
	if secondary != "" {
		to(secondary, false)
	}
	if err := s.prod.ProduceSync(ctx, out...).FirstErr(); err != nil {
		return fmt.Errorf("failed to write offsets of connector %s: %w", c.Name, err)
	}
	return nil
}

// alterSink is SinkUtils.parseSinkConnectorOffsets, then alter and delete
// of the group's offsets through the admin API.
func (s *Server) alterSink(ctx context.Context, c connector, entries []connectjson.OffsetEntry) error {
	commits, deletes := kadm.Offsets{}, kadm.TopicsSet{}
	for _, e := range entries {
		topic, ok := e.Partition.Get(connectjson.SinkTopicKey)
		part, ok2 := e.Partition.Get(connectjson.SinkPartitionKey)
		if !ok || !ok2 {
			return apiError(http.StatusBadRequest, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'")
		}
		if topic.Kind() != connectjson.KindString {
			return apiError(http.StatusBadRequest, "Kafka topic names must be valid strings")
		}
		p, err := strconv.ParseInt(javaText(part), 10, 32)
		if err != nil {
			return apiError(http.StatusBadRequest, "Failed to parse the following Kafka partition value in the provided offsets: '%s'. Partition values for sink connectors need to be integers.", javaText(part))
		}
		if e.Offset == nil {
			deletes.Add(topic.Str(), int32(p))
			continue
		}
		off, ok := e.Offset.Get(connectjson.SinkOffsetKey)
		if !ok {
			return apiError(http.StatusBadRequest, "The offset for a sink connector should either be null or contain the key 'kafka_offset'")
		}
		o, err := strconv.ParseInt(javaText(off), 10, 64)
		if err != nil {
			return apiError(http.StatusBadRequest, "Failed to parse the following Kafka offset value in the provided offsets: '%s'. Offset values for sink connectors need to be integers.", javaText(off))
		}
		if o < 0 {
			// The admin client's OffsetAndMetadata throws; Connect wraps it: 500.
			return fmt.Errorf("Failed to modify offsets for sink connector %s", c.Name)
		}
		commits.Add(kadm.Offset{Topic: topic.Str(), Partition: int32(p), At: o, LeaderEpoch: -1})
	}
	notEmpty := fmt.Sprintf("Failed to alter consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", c.Name)
	if len(commits) > 0 {
		resp, err := s.adm.CommitOffsets(ctx, c.group, commits)
		if err != nil {
			return err
		}
		if err := resp.Error(); err != nil {
			if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.RebalanceInProgress) {
				return errors.New(notEmpty)
			}
			return err
		}
	}
	if len(deletes) > 0 {
		resp, err := s.adm.DeleteOffsets(ctx, c.group, deletes)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return err
		}
		for _, ps := range resp {
			for _, perr := range ps {
				if errors.Is(perr, kerr.GroupSubscribedToTopic) {
					return errors.New(notEmpty)
				}
				if perr != nil {
					return perr
				}
			}
		}
	}
	return nil
}

// javaText is value.toString() as SinkUtils uses it before parsing.
func javaText(v connectjson.Value) string {
	if v.Kind() == connectjson.KindString {
		return v.Str()
	}
	return v.String()
}

func (s *Server) deleteOffsets(ctx context.Context, r *http.Request) (int, any, error) {
	c, _, err := s.lookup(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	if err := checkStopped(c); err != nil {
		return 0, nil, err
	}
	if c.typ == snapshot.TypeSink {
		resp, err := s.adm.DeleteGroups(ctx, c.group)
		if err != nil {
			return 0, nil, err
		}
		if err := resp.Error(); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			if errors.Is(err, kerr.NonEmptyGroup) {
				return 0, nil, fmt.Errorf("Failed to reset consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to reset its offsets could be successfully completed.", c.Name)
			}
			return 0, nil, err
		}
		return http.StatusOK, map[string]string{"message": s.message(c, "reset")}, nil
	}
	snap, err := s.capture(ctx, c)
	if err != nil {
		return 0, nil, err
	}
	seen := map[string]bool{}
	var recs []*kgo.Record
	for _, o := range snap.SourceOffsetsOf(c.Name) {
		name, m, _, err := connectjson.ParseKey(o.Key)
		if err != nil || name != c.Name {
			continue
		}
		k := connectjson.CanonicalKey(name, m)
		if !seen[string(k)] {
			seen[string(k)] = true
			recs = append(recs, &kgo.Record{Key: k})
		}
	}
	if len(recs) > 0 {
		if err := s.writeSource(ctx, c, recs); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, map[string]string{"message": s.message(c, "reset")}, nil
}
