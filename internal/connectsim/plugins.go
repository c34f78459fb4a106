package connectsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Plugin is a connector plugin the server says its workers have installed
// (GET /connector-plugins).
type Plugin struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// Override policies of connector.client.config.override.policy, as
// Options.OverridePolicy names them. All is the default of Kafka 3.x and
// 4.x workers; KIP-1188 (4.2) adds Allowlist, the default from 5.0 with an
// empty allowlist.
const (
	PolicyAll       = "All"
	PolicyNone      = "None"
	PolicyPrincipal = "Principal"
	PolicyAllowlist = "Allowlist"
)

// DefaultPlugins are the connector plugins of a stock Connect worker
// (Kafka's own FileStream and MirrorMaker 2 connectors), at version: what
// the server lists when Options.Plugins is nil.
func DefaultPlugins(version string) []Plugin {
	var out []Plugin
	for _, c := range []struct{ class, typ string }{
		{"org.apache.kafka.connect.file.FileStreamSinkConnector", "sink"},
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", "source"},
		{"org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "source"},
		{"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "source"},
		{"org.apache.kafka.connect.mirror.MirrorSourceConnector", "source"},
	} {
		out = append(out, Plugin{Class: c.class, Type: c.typ, Version: version})
	}
	return out
}

// pluginList is Options.Plugins, or DefaultPlugins when it is nil.
func (s *Server) pluginList() []Plugin {
	if s.opts.Plugins != nil {
		return s.opts.Plugins
	}
	return DefaultPlugins(s.version())
}

// plugins answers GET /connector-plugins.
func (s *Server) plugins(_ context.Context, _ *http.Request) (int, any, error) {
	return http.StatusOK, s.pluginList(), nil
}

// installed is the plugin of class, by its full name, its simple name or
// that without "Connector", as Connect resolves an alias.
func (s *Server) installed(class string) (Plugin, bool) {
	for _, p := range s.pluginList() {
		simple := p.Class[strings.LastIndex(p.Class, ".")+1:]
		if p.Class == class || simple == class || strings.TrimSuffix(simple, "Connector") == class {
			return p, true
		}
	}
	return Plugin{}, false
}

type configValueJSON struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

type configInfoJSON struct {
	Definition map[string]any  `json:"definition"`
	Value      configValueJSON `json:"value"`
}

// validate answers PUT /connector-plugins/{class}/config/validate as
// Connect's ConnectorPluginsResource and AbstractHerder do: a class not
// installed is a 500 naming it (Connect's ConnectException from
// Plugins.newConnector, through ConnectExceptionMapper), and a 400 is a config whose connector.class
// does not end with the class asked; otherwise every key is listed, with
// errors for each client override
// (consumer.override.*, producer.override.*, admin.override.*) the
// worker's override policy does not allow, named with its prefix and
// explained without it, as AbstractConnectorClientConfigOverridePolicy
// words it.
func (s *Server) validate(_ context.Context, r *http.Request) (int, any, error) {
	class := r.PathValue("class")
	var config map[string]string
	if err := json.NewDecoder(r.Body).Decode(&config); err != nil {
		return 0, nil, apiError(http.StatusBadRequest, "Cannot deserialize connector config: %v", err)
	}
	p, ok := s.installed(class)
	if !ok {
		return 0, nil, apiError(http.StatusInternalServerError, "Failed to find any class that implements Connector and which name matches %s", class)
	}
	// ConnectorPluginsResource: the config's class must end with the
	// path's, both without a "Connector" suffix.
	norm := func(c string) string { return strings.TrimSuffix(c, "Connector") }
	if cc, ok := config["connector.class"]; ok && !strings.HasSuffix(norm(cc), norm(class)) {
		return 0, nil, apiError(http.StatusBadRequest, "Included connector type %s does not match request type %s", cc, class)
	}
	var infos []configInfoJSON
	errCount := 0
	for _, k := range slices.Sorted(mapsKeys(config)) {
		v := config[k]
		if k == "exactly.once.support" && !versionAtLeast(s.version(), 3, 3) {
			continue // no such key before KIP-618 (3.3)
		}
		cv := configValueJSON{Name: k, Value: &v, RecommendedValues: []string{}, Errors: []string{}, Visible: true}
		if msg := s.overrideRefused(k); msg != "" {
			cv.Errors = append(cv.Errors, msg)
			errCount++
		}
		if msg := s.exactlyOnceRefused(p, k, v); msg != "" {
			cv.Errors = append(cv.Errors, msg)
			errCount++
		}
		infos = append(infos, configInfoJSON{Definition: map[string]any{"name": k}, Value: cv})
	}
	return http.StatusOK, map[string]any{"name": p.Class, "error_count": errCount, "groups": []string{"Common"}, "configs": infos}, nil
}

// overrideRefused is the error Connect gives a client override key the
// worker's policy does not allow, "" when it is allowed or not an override.
func (s *Server) overrideRefused(key string) string {
	for _, prefix := range []string{"consumer.override.", "producer.override.", "admin.override."} {
		name, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		policy := s.opts.OverridePolicy
		allowed := false
		switch policy {
		case "", PolicyAll:
			allowed = true
		case PolicyPrincipal:
			allowed = name == "sasl.jaas.config" || name == "sasl.mechanism" || name == "security.protocol"
		case PolicyAllowlist:
			allowed = slices.Contains(s.opts.OverrideAllowlist, name)
		}
		if allowed {
			return ""
		}
		return fmt.Sprintf("The '%s' policy does not allow '%s' to be overridden in the connector configuration.", policy, name)
	}
	return ""
}

// healthAnswer answers GET /health on 3.9+ (KIP-1017): healthy (a worker
// starting or unhealthy is connectsimtest's); older workers have no such
// endpoint (404).
func (s *Server) healthAnswer(_ context.Context, _ *http.Request) (int, any, error) {
	if !versionAtLeast(s.version(), 3, 9) {
		return 0, nil, apiError(http.StatusNotFound, "HTTP 404 Not Found")
	}
	return http.StatusOK, map[string]string{"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}, nil
}

// versionAtLeast reports whether a Kafka version "major.minor.patch" is at
// least major.minor.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
