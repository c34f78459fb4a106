package connectrest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// ConnectorNames asks GET /connectors for the names of every connector
// the cluster has, sorted.
func (c *Client) ConnectorNames(ctx context.Context) ([]string, error) {
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: "/connectors"})
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(body, &names); err != nil {
		return nil, fmt.Errorf("decode GET /connectors answer: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// Config asks GET /connectors/{name}/config for the connector's config as
// Connect holds it (ConfigProvider placeholders such as ${file:...} stay
// placeholders). A connector Connect does not have is an *Error matching
// ErrNotFound.
func (c *Client) Config(ctx context.Context, name string) (map[string]string, error) {
	_, body, err := c.do(ctx, request{method: http.MethodGet, path: pathOf("connectors", name, "config")})
	if err != nil {
		return nil, err
	}
	var config map[string]string
	if err := json.Unmarshal(body, &config); err != nil {
		return nil, fmt.Errorf("decode config of connector %q: %w", name, err)
	}
	return config, nil
}
