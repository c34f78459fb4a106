package connectrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Plugin is one connector plugin a worker has installed, as GET
// /connector-plugins lists it.
type Plugin struct {
	// Class is the connector class's full name.
	Class string `json:"class"`
	// Type is "source" or "sink".
	Type string `json:"type"`
	// Version is the plugin's version ("" if the plugin gives none).
	Version string `json:"version"`
}

// Plugins lists the connector plugins the worker answering has installed
// (GET /connector-plugins, connectors only). Every worker of a Connect
// cluster should have the same.
func (c *Client) Plugins(ctx context.Context) ([]Plugin, error) {
	if c.cloud != nil {
		return nil, fmt.Errorf("%w: Confluent Cloud's API has no GET /connector-plugins of a worker", ErrUnsupported)
	}
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: "/connector-plugins"})
	if err != nil {
		return nil, err
	}
	var out []Plugin
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decode GET /connector-plugins: %w", err)
	}
	return out, nil
}

// FindPlugin is the plugin of ps whose class is class, by its full name
// or, as Connect also accepts, its simple name or its simple name without
// the "Connector" suffix.
func FindPlugin(ps []Plugin, class string) (Plugin, bool) {
	for _, p := range ps {
		simple := p.Class[strings.LastIndex(p.Class, ".")+1:]
		if p.Class == class || simple == class || strings.TrimSuffix(simple, "Connector") == class {
			return p, true
		}
	}
	return Plugin{}, false
}

// ConfigProblem is one key a worker refuses in a connector config.
type ConfigProblem struct {
	Key    string
	Errors []string
}

// ValidateConfig asks the worker to validate a connector config as it
// would before creating the connector (PUT
// /connector-plugins/{class}/config/validate): its ConfigDef, the
// connector's own validate, and the worker's client config override
// policy (connector.client.config.override.policy) for each
// consumer.override.*, producer.override.* and admin.override.* key. It
// returns the keys refused, none when the config would be accepted.
func (c *Client) ValidateConfig(ctx context.Context, class string, config map[string]string) ([]ConfigProblem, error) {
	if c.cloud != nil {
		return nil, fmt.Errorf("%w: Confluent Cloud's API has no worker validate", ErrUnsupported)
	}
	infos, err := c.validate(ctx, class, config)
	if err != nil {
		return nil, err
	}
	var out []ConfigProblem
	for _, ci := range infos.Configs {
		if len(ci.Value.Errors) > 0 {
			out = append(out, ConfigProblem{Key: ci.Value.Name, Errors: ci.Value.Errors})
		}
	}
	if len(out) == 0 && infos.ErrorCount > 0 {
		out = append(out, ConfigProblem{Errors: []string{fmt.Sprintf("%d errors, none named", infos.ErrorCount)}})
	}
	return out, nil
}

// Health states of GET /health (KIP-1017, Kafka 3.9+).
const (
	HealthHealthy   = "healthy"
	HealthStarting  = "starting"
	HealthUnhealthy = "unhealthy"
	// HealthUnknown: the worker has no /health (before 3.9, a 404).
	HealthUnknown = ""
)

// Health is a worker's answer to GET /health: Status is HealthHealthy
// (200), HealthStarting (503), HealthUnhealthy (500), or HealthUnknown for
// a worker older than 3.9 (404), which has no such endpoint. Message is
// the worker's own text.
type Health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Health asks the worker answering whether it is ready (GET /health). A
// 503 or 500 is not an error: its Status says which.
func (c *Client) Health(ctx context.Context) (Health, error) {
	if c.cloud != nil {
		return Health{Status: HealthUnknown}, nil // a managed service: no worker to ask
	}
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: "/health"})
	var h Health
	var apiErr *Error
	switch {
	case errors.Is(err, ErrNotFound):
		return Health{Status: HealthUnknown}, nil
	case errors.As(err, &apiErr) && (apiErr.Status == http.StatusServiceUnavailable || apiErr.Status == http.StatusInternalServerError):
		h.Status, h.Message = HealthUnhealthy, apiErr.Message
		if apiErr.Status == http.StatusServiceUnavailable {
			h.Status = HealthStarting
		}
		return h, nil
	case err != nil:
		return h, err
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("decode GET /health: %w", err)
	}
	if h.Status == "" {
		h.Status = HealthHealthy
	}
	return h, nil
}
