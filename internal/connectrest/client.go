package connectrest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/offsetkeeper/offsetkeeper/internal/kafkaconf"
)

// Defaults for Config.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultRetries      = 8
	DefaultBackoff      = 250 * time.Millisecond
	DefaultPollInterval = 500 * time.Millisecond
	// OffsetsTimeout is the least time an offsets alteration or reset
	// request is given: Connect bounds them with its own 90 s request
	// timeout and then answers 500 "Request timed out".
	OffsetsTimeout = 95 * time.Second
	// maxBackoff caps the wait between two 409 retries.
	maxBackoff = 5 * time.Second
	// maxBody bounds a response body read.
	maxBody = 256 << 20
)

// Errors returned by this package. Callers compare with errors.Is.
var (
	// ErrNotFound: Connect answered 404 (no such connector, or no status
	// for it). The error is an *Error.
	ErrNotFound = errors.New("not found in Kafka Connect")
	// ErrConflict: Connect answered 409 (a rebalance is pending or the
	// leader is unknown) to every retry. The error is an *Error.
	ErrConflict = errors.New("kafka connect is rebalancing")
	// ErrUnreachable: no worker URL answered.
	ErrUnreachable = errors.New("no Kafka Connect worker answered")
	// ErrUnsupported: the workers run a Kafka version without the API a
	// request needs (PATCH and DELETE of offsets need 3.6).
	ErrUnsupported = errors.New("kafka connect version too old")
	// ErrConfig: the Config is not usable.
	ErrConfig = errors.New("invalid Kafka Connect REST configuration")
)

// Config says how to reach a Kafka Connect cluster's REST API.
type Config struct {
	// URLs are the base URLs of one or more workers of one Connect
	// cluster, http:// or https://, such as http://connect-1:8083 (a path
	// prefix behind a proxy is kept). At least one is required.
	URLs []string
	// Username and Password authenticate with HTTP basic auth; Token with
	// a bearer token. Give one or the other.
	Username string
	Password kafkaconf.Secret
	Token    kafkaconf.Secret
	// CAFile holds the PEM certificates that may sign the workers'
	// certificates (default the system roots); CertFile and KeyFile a PEM
	// client certificate and key for mutual TLS.
	CAFile, CertFile, KeyFile string
	// Timeout bounds one attempt of one request; default DefaultTimeout.
	// Offsets alterations and resets get at least OffsetsTimeout.
	Timeout time.Duration
	// Retries is how many times a 409 is retried; default DefaultRetries.
	// Backoff is the first wait, doubled after each retry up to 5 s;
	// default DefaultBackoff.
	Retries int
	Backoff time.Duration
	// PollInterval is how often a caller waiting for connectors to reach
	// a state looks again (see Client.PollInterval); default
	// DefaultPollInterval.
	PollInterval time.Duration
	// Transport, when set, replaces the HTTP transport built from the TLS
	// settings (tests).
	Transport http.RoundTripper
	// Platform is PlatformConnect (a Kafka Connect cluster, the default) or
	// PlatformConfluentCloud: the Confluent Cloud Connect v1 API of
	// Environment (env-...) and Cluster (lkc-...), at URLs (default
	// DefaultCloudURL). A single URL whose path is
	// /connect/v1/environments/ENV/clusters/LKC is cloud mode too. In cloud
	// mode Username and Password are a Cloud API key and secret, and
	// Timeout also bounds the whole wait for an offsets request to be
	// applied (see cloud.go).
	Platform             string
	Environment, Cluster string
}

// Client talks to one Kafka Connect cluster. Make it with New.
type Client struct {
	cfg   Config
	bases []*url.URL
	http  *http.Client
	cloud *cloud // nil for a Kafka Connect cluster

	mu   sync.Mutex
	next int // index of the worker to try first
}

// New checks cfg and returns a Client. It reads the TLS files now.
func New(cfg Config) (*Client, error) {
	cl, err := cloudConfig(&cfg)
	if err != nil {
		return nil, err
	}
	if len(cfg.URLs) == 0 {
		return nil, fmt.Errorf("%w: no worker URL (--connect-url)", ErrConfig)
	}
	if cfg.Username == "" && cfg.Password != "" {
		return nil, fmt.Errorf("%w: a password without a user name (--connect-user)", ErrConfig)
	}
	if cfg.Username != "" && cfg.Token != "" {
		return nil, fmt.Errorf("%w: give basic auth (--connect-user) or a bearer token (--connect-token), not both", ErrConfig)
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both --connect-tls-cert and --connect-tls-key", ErrConfig)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	} else if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	c := &Client{cfg: cfg, cloud: cl}
	for _, raw := range cfg.URLs {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: worker URL %q: want http://host:port or https://host:port", ErrConfig, raw)
		}
		if u.User != nil {
			return nil, fmt.Errorf("%w: worker URL %s holds credentials: give them with --connect-user and OFFSETKEEPER_CONNECT_PASSWORD instead", ErrConfig, u.Redacted())
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%w: worker URL %q: no query or fragment, please", ErrConfig, raw)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		c.bases = append(c.bases, u)
	}
	rt := cfg.Transport
	if rt == nil {
		tc, err := cfg.tlsConfig()
		if err != nil {
			return nil, err
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tc
		// Callers send a few requests at once (failover's resumes): keep
		// their connections for the next, not two of them.
		t.MaxIdleConnsPerHost = 16
		rt = t
	}
	c.http = &http.Client{Transport: rt}
	return c, nil
}

func (cfg Config) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: read --connect-tls-ca: %w", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: --connect-tls-ca %s holds no PEM certificate", ErrConfig, cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: load client certificate --connect-tls-cert %s / --connect-tls-key %s: %w", ErrConfig, cfg.CertFile, cfg.KeyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// PollInterval is Config.PollInterval.
func (c *Client) PollInterval() time.Duration { return c.cfg.PollInterval }

// URLs returns the worker base URLs, as given.
func (c *Client) URLs() []string {
	out := make([]string, len(c.bases))
	for i, u := range c.bases {
		out[i] = u.String()
	}
	return out
}

// Error is a request Connect answered with an error status. Message is
// Connect's own text ({"error_code":...,"message":...}), or the start of
// the body when it is not Connect's error form (a proxy's page, say).
type Error struct {
	Method string
	// Path is the request path, such as /connectors/x/stop.
	Path string
	// Worker is the base URL that answered.
	Worker string
	// Status is the HTTP status; Code the error_code Connect sent (0 if none).
	Status  int
	Code    int
	Message string
	// cloud is set for an answer of the Confluent Cloud API.
	cloud bool
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	s := fmt.Sprintf("%s %s on %s: %d %s", e.Method, e.Path, e.Worker, e.Status, msg)
	if e.cloud {
		return s + cloudHint(e.Status)
	}
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		s += " (check --connect-user and OFFSETKEEPER_CONNECT_PASSWORD, or --connect-token)"
	case e.Status == http.StatusConflict:
		s += " (the Connect cluster is rebalancing or has no leader; try again once it has settled)"
	case e.Status >= 500 && strings.Contains(strings.ToLower(msg), "timed out"):
		s += " (the worker gave up waiting after its 90 s request timeout; the operation may still complete: check the connector's status and offsets before trying again)"
	}
	return s
}

// Is makes a 404 match ErrNotFound and a 409 ErrConflict.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	}
	return false
}

// request is one API call.
type request struct {
	method string
	// path is escaped already (see pathOf).
	path    string
	query   url.Values
	body    []byte
	timeout time.Duration
	// noRetry answers a 409 at once: Connect answers 409 both during a
	// rebalance and to a create of a name it has.
	noRetry bool
}

// pathOf joins escaped path segments: pathOf("connectors", name, "stop").
func pathOf(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// do sends r, failing over between workers on connection errors and
// retrying 409s, and returns the status and body of a 2xx answer. Any other
// status is an *Error.
func (c *Client) do(ctx context.Context, r request) (int, []byte, error) {
	wait := c.cfg.Backoff
	for attempt := 0; ; attempt++ {
		status, body, worker, err := c.send(ctx, r)
		if err != nil {
			return 0, nil, err
		}
		if status >= 200 && status < 300 {
			return status, body, nil
		}
		apiErr := &Error{Method: r.method, Path: unescapedPath(r.path), Worker: worker, Status: status, cloud: c.cloud != nil}
		if code, msg, ok := errorBody(body, c.cloud != nil); ok {
			apiErr.Code, apiErr.Message = code, msg
		} else {
			apiErr.Message = shorten(strings.TrimSpace(string(body)), 200)
		}
		// A 409 on Cloud is an offsets request in progress, not a
		// rebalance; Cloud's rate limit (429) passes with waiting.
		retry := status == http.StatusConflict && c.cloud == nil || status == http.StatusTooManyRequests && c.cloud != nil
		if !retry || attempt >= c.cfg.Retries || r.noRetry && status == http.StatusConflict {
			return status, body, apiErr
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, nil, fmt.Errorf("%w (while waiting to retry after: %v)", ctx.Err(), apiErr)
		case <-t.C:
		}
		wait = min(2*wait, maxBackoff)
	}
}

// send tries each worker in turn, starting with the one that answered
// last, until one answers.
func (c *Client) send(ctx context.Context, r request) (status int, body []byte, worker string, err error) {
	c.mu.Lock()
	first := c.next
	c.mu.Unlock()
	var errs []error
	for i := range c.bases {
		idx := (first + i) % len(c.bases)
		base := c.bases[idx]
		status, body, err := c.sendTo(ctx, base, r)
		if err == nil {
			c.mu.Lock()
			c.next = idx
			c.mu.Unlock()
			return status, body, base.String(), nil
		}
		if ctx.Err() != nil {
			return 0, nil, "", fmt.Errorf("%s %s on %s: %w", r.method, unescapedPath(r.path), base, ctx.Err())
		}
		errs = append(errs, fmt.Errorf("%s: %w", base, err))
	}
	return 0, nil, "", fmt.Errorf("%w: %s %s: %w", ErrUnreachable, r.method, unescapedPath(r.path), errors.Join(errs...))
}

func (c *Client) sendTo(ctx context.Context, base *url.URL, r request) (int, []byte, error) {
	timeout := c.cfg.Timeout
	if r.timeout > timeout {
		timeout = r.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := *base
	u.RawPath = base.EscapedPath() + r.path
	u.Path = base.Path + unescapedPath(r.path)
	if r.query != nil {
		u.RawQuery = r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.cfg.Username != "":
		req.SetBasicAuth(c.cfg.Username, string(c.cfg.Password))
	case c.cfg.Token != "":
		req.Header.Set("Authorization", "Bearer "+string(c.cfg.Token))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is named by the caller
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, fmt.Errorf("read answer (status %d): %w", resp.StatusCode, err)
	}
	return resp.StatusCode, data, nil
}

func unescapedPath(p string) string {
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
