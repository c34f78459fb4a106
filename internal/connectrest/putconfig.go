package connectrest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// PutConfig sends PUT /connectors/{name}/config with config, which
// replaces the connector's config and keeps its target state (a STOPPED
// connector stays STOPPED). It creates the connector, RUNNING, when
// Connect does not have it: callers that want it created STOPPED use
// CreateConnector.
func (c *Client) PutConfig(ctx context.Context, name string, config map[string]string) error {
	body, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("encode config of connector %q: %w", name, err)
	}
	_, _, err = c.do(ctx, request{method: http.MethodPut, path: pathOf("connectors", name, "config"), body: body})
	return err
}
