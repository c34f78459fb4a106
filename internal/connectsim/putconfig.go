package connectsim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// putConfig is PUT /connectors/{name}/config for a connector the server
// has, as DistributedHerder.putConnectorConfig does it: the config record
// only, so the target state stays (a STOPPED connector stays STOPPED); a
// running one gets its task configs again, as its reconfiguration writes
// them. An unknown connector is a 404 here (Connect would create it
// RUNNING; no test needs that).
func (s *Server) putConfig(ctx context.Context, r *http.Request) (int, any, error) {
	c, _, err := s.lookup(ctx, r)
	if err != nil {
		return 0, nil, err
	}
	var cfg map[string]string
	data, err := io.ReadAll(r.Body)
	if err != nil || json.Unmarshal(data, &cfg) != nil || cfg == nil {
		return 0, nil, apiError(http.StatusBadRequest, "Cannot deserialize the request body")
	}
	if n, ok := cfg["name"]; ok && n != c.Name {
		return 0, nil, apiError(http.StatusBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", n, c.Name)
	}
	cfg["name"] = c.Name
	rec := s.configRecord("connector-"+c.Name, string(encode(map[string]any{"properties": cfg})))
	if err := s.produce(ctx, rec); err != nil {
		return 0, nil, err
	}
	if runsTasks(c) {
		n := connector{ConnectorConfig: snapshot.ConnectorConfig{Name: c.Name, Config: cfg}}
		if err := s.produce(ctx, s.taskRecords(n)...); err != nil {
			return 0, nil, err
		}
	}
	all, err := s.reconcile(ctx)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.infoOf(all.at(c.Name)), nil
}
