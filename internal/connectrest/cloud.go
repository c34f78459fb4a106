package connectrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Platforms for Config.Platform.
const (
	// PlatformConnect is a Kafka Connect cluster (the default, "").
	PlatformConnect = ""
	// PlatformConfluentCloud is the Confluent Cloud Connect v1 API of one
	// environment and Kafka cluster, which runs fully-managed connectors.
	PlatformConfluentCloud = "confluent-cloud"
	// DefaultCloudURL is the Confluent Cloud API, the base URL when
	// PlatformConfluentCloud is given without one.
	DefaultCloudURL = "https://api.confluent.cloud"
	// CloudVersion is ServerInfo.Version in cloud mode: Confluent Cloud
	// has no GET / and tells no version.
	CloudVersion = "confluent-cloud"
)

// Phases of a Confluent Cloud offsets request, as GET
// .../offsets/request/status spells status.phase.
const (
	PhasePending = "PENDING"
	PhaseApplied = "APPLIED"
	PhaseFailed  = "FAILED"
)

// Errors of cloud mode. Callers compare with errors.Is.
var (
	// ErrRequestFailed: Confluent Cloud says an offsets request FAILED; the
	// error holds its message. Nothing of that request was applied.
	ErrRequestFailed = errors.New("confluent cloud failed the offsets request")
	// ErrRequestPending: an offsets request was accepted but not seen
	// applied within Config.Timeout (or before the context ended). Cloud
	// may still apply it later.
	ErrRequestPending = errors.New("confluent cloud has not applied the offsets request yet")
	// ErrStaleOffsets: Confluent Cloud's offsets of a connector were last
	// observed before the offsets request this client had applied.
	ErrStaleOffsets = errors.New("confluent cloud shows offsets observed before the last offsets request")
	// ErrCloudUnsupported: the operation has no counterpart in the
	// Confluent Cloud Connect v1 API (PUT /stop, say).
	ErrCloudUnsupported = errors.New("not available in Confluent Cloud")
)

// cloudPath matches the path of a Connect v1 API base of one environment
// and Kafka cluster: /connect/v1/environments/ENV/clusters/LKC.
var cloudPath = regexp.MustCompile(`^(.*)/connect/v1/environments/([^/]+)/clusters/([^/]+)$`)

// cloud is the cloud-mode state of a Client.
type cloud struct {
	env, cluster string

	mu sync.Mutex
	// applied holds, per connector, when Cloud applied the last offsets
	// request this client sent: GET offsets shows what Cloud observed
	// periodically, which may be older.
	applied map[string]time.Time
}

// cloudConfig settles cloud mode from cfg, rewriting cfg.URLs to the
// Connect v1 base of the environment and cluster; it returns nil for a
// Kafka Connect cluster.
func cloudConfig(cfg *Config) (*cloud, error) {
	switch cfg.Platform {
	case PlatformConnect:
		if cfg.Environment != "" || cfg.Cluster != "" {
			if len(cfg.URLs) != 1 || !cloudPath.MatchString(cloudURLPath(cfg.URLs[0])) {
				return nil, fmt.Errorf("%w: an environment (--environment) and a cluster (--cluster) need --platform %s", ErrConfig, PlatformConfluentCloud)
			}
		}
		if len(cfg.URLs) != 1 {
			return nil, nil
		}
		m := cloudPath.FindStringSubmatch(cloudURLPath(cfg.URLs[0]))
		if m == nil {
			return nil, nil
		}
		return checkCloudIDs(cfg, m[2], m[3])
	case PlatformConfluentCloud:
	default:
		return nil, fmt.Errorf("%w: platform %q: want %q or none (a Kafka Connect cluster)", ErrConfig, cfg.Platform, PlatformConfluentCloud)
	}
	if len(cfg.URLs) == 0 {
		cfg.URLs = []string{DefaultCloudURL}
	}
	if len(cfg.URLs) > 1 {
		return nil, fmt.Errorf("%w: --platform %s takes one --connect-url, the Confluent Cloud API", ErrConfig, PlatformConfluentCloud)
	}
	raw := strings.TrimSpace(cfg.URLs[0])
	p := cloudURLPath(raw)
	if m := cloudPath.FindStringSubmatch(p); m != nil {
		return checkCloudIDs(cfg, m[2], m[3])
	}
	if p != "" {
		return nil, fmt.Errorf("%w: --connect-url %s is not a Confluent Cloud base: want https://api.confluent.cloud or https://api.confluent.cloud/connect/v1/environments/ENV/clusters/LKC", ErrConfig, raw)
	}
	if cfg.Environment == "" || cfg.Cluster == "" {
		return nil, fmt.Errorf("%w: --platform %s needs --environment (env-...) and --cluster (lkc-...), or a --connect-url that names them", ErrConfig, PlatformConfluentCloud)
	}
	cfg.URLs = []string{strings.TrimSuffix(raw, "/") + pathOf("connect", "v1", "environments", cfg.Environment, "clusters", cfg.Cluster)}
	return &cloud{env: cfg.Environment, cluster: cfg.Cluster, applied: map[string]time.Time{}}, nil
}

// checkCloudIDs refuses an environment or cluster given besides a URL
// that names others.
func checkCloudIDs(cfg *Config, env, cluster string) (*cloud, error) {
	env, _ = url.PathUnescape(env)
	cluster, _ = url.PathUnescape(cluster)
	if cfg.Environment != "" && cfg.Environment != env || cfg.Cluster != "" && cfg.Cluster != cluster {
		return nil, fmt.Errorf("%w: --connect-url names environment %q and cluster %q, --environment and --cluster say %q and %q", ErrConfig, env, cluster, cfg.Environment, cfg.Cluster)
	}
	cfg.Platform, cfg.Environment, cfg.Cluster = PlatformConfluentCloud, env, cluster
	return &cloud{env: env, cluster: cluster, applied: map[string]time.Time{}}, nil
}

// cloudURLPath is the escaped path of raw without a trailing slash, or ""
// when raw does not parse (New says why).
func cloudURLPath(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.EscapedPath(), "/")
}

// Platform is Config.Platform as settled by New: PlatformConfluentCloud
// also when the URL named a Connect v1 base, else PlatformConnect.
func (c *Client) Platform() string {
	if c.cloud != nil {
		return PlatformConfluentCloud
	}
	return PlatformConnect
}

// Cloud reports whether the client talks to the Confluent Cloud Connect
// v1 API (fully-managed connectors) rather than a Kafka Connect cluster.
func (c *Client) Cloud() bool { return c.cloud != nil }

// CloudIDs returns the Confluent Cloud environment and Kafka cluster ids
// in cloud mode, else "", "".
func (c *Client) CloudIDs() (env, cluster string) {
	if c.cloud == nil {
		return "", ""
	}
	return c.cloud.env, c.cloud.cluster
}

// cloudServerInfo stands for GET /, which Cloud has not: the Kafka cluster
// id is the cluster's id (lkc-...).
func (c *Client) cloudServerInfo() ServerInfo {
	return ServerInfo{Version: CloudVersion, KafkaClusterID: c.cloud.cluster}
}

// errorBody reads an error answer: Connect's {"error_code","message"}
// and, from the Confluent Cloud API (cloud), its
// {"errors":[{"status","code","title","detail"}]} or
// {"error":{"code","message"}}.
func errorBody(body []byte, cloud bool) (code int, msg string, ok bool) {
	var em struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
		Errors  []struct {
			Status string `json:"status"`
			Code   string `json:"code"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		} `json:"errors"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &em) != nil {
		return 0, "", false
	}
	switch {
	case em.Message != "" || em.Code != 0:
		return em.Code, em.Message, true
	case !cloud:
	case len(em.Errors) > 0:
		var parts []string
		for _, e := range em.Errors {
			switch {
			case e.Detail != "":
				parts = append(parts, e.Detail)
			case e.Title != "":
				parts = append(parts, e.Title)
			case e.Code != "":
				parts = append(parts, e.Code)
			}
		}
		return 0, strings.Join(parts, "; "), len(parts) > 0
	case em.Error != nil && (em.Error.Message != "" || em.Error.Code != 0):
		return em.Error.Code, em.Error.Message, true
	}
	return 0, "", false
}

// cloudOffsets is GET .../connectors/{name}/offsets without Cloud's
// envelope ({"name","id","offsets","metadata":{"observed_at"}}): the
// {"offsets":[...]} Connect answers. After an offsets request this client
// saw applied, it reads again, up to Config.Timeout, until Cloud observed
// the offsets after that; then it returns ErrStaleOffsets.
func (c *Client) cloudOffsets(ctx context.Context, name string) ([]byte, error) {
	c.cloud.mu.Lock()
	after, wait := c.cloud.applied[name]
	c.cloud.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	for {
		_, body, err := c.do(ctx, request{method: http.MethodGet, path: pathOf("connectors", name, "offsets")})
		if err != nil {
			return nil, err
		}
		var env struct {
			Offsets  json.RawMessage `json:"offsets"`
			Metadata struct {
				ObservedAt string `json:"observed_at"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			return nil, fmt.Errorf("GET %s/connectors/%s/offsets: the answer is not Confluent Cloud's offsets: %w: %s", c.bases[0].Path, name, err, shorten(string(body), 200))
		}
		observed, oerr := time.Parse(time.RFC3339Nano, env.Metadata.ObservedAt)
		if !wait || oerr != nil || !observed.Before(after) {
			if len(env.Offsets) == 0 || string(env.Offsets) == "null" {
				env.Offsets = json.RawMessage("[]")
			}
			return json.Marshal(struct {
				Offsets json.RawMessage `json:"offsets"`
			}{env.Offsets})
		}
		if err := sleep(ctx, c.cfg.PollInterval); err != nil {
			return nil, fmt.Errorf("%w: connector %q: offsets observed at %s, its offsets request was applied at %s; Cloud observes offsets periodically: read them again in a moment (confluent connect offset describe)", ErrStaleOffsets, name, env.Metadata.ObservedAt, after.Format(time.RFC3339Nano))
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// cloudStop answers Stop in cloud mode.
func (c *Client) cloudStop(name string) error {
	return fmt.Errorf("%w: stop connector %q: Confluent Cloud has no stop, only pause; it pauses a connector itself while it applies an offsets request", ErrCloudUnsupported, name)
}

// cloudHint ends the text of an error status of the Cloud API.
func cloudHint(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return " (check the Confluent Cloud API key in --connect-user and its secret in OFFSETKEEPER_CONNECT_PASSWORD)"
	case status == http.StatusForbidden:
		return " (the Cloud API key lacks permission on this environment, cluster or connector)"
	case status == http.StatusConflict:
		return " (Confluent Cloud takes one offsets request per connector at a time: wait for the one in progress, see its status, then try again)"
	case status == http.StatusTooManyRequests:
		return " (rate limited by the Confluent Cloud API; try again in a moment)"
	}
	return ""
}
