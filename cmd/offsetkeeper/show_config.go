package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// writeConnectCreate prints connector name in s as the body of Connect's
// POST /connectors, which creates it with the snapshot's config (show
// --output connect-create). A config with a
// secret-looking value is refused unless showSecrets: masked, the body
// would create the connector with ******** as its password.
func writeConnectCreate(w io.Writer, s *snapshot.Snapshot, name string, showSecrets bool) error {
	c, _ := s.Connector(name)
	if !c.HasConfig || c.Config == nil {
		return fmt.Errorf("connector %q has no config in snapshot %s (deleted, or known only from its offsets): nothing to create it from", name, s.ID)
	}
	if !showSecrets {
		var secret []string
		for _, k := range slices.Sorted(maps.Keys(c.Config)) {
			if maskValue(k, c.Config[k]) != c.Config[k] {
				secret = append(secret, k)
			}
		}
		if len(secret) > 0 {
			return usagef("--output connect-create: connector %s's config holds values that look like secrets (%s); masked, "+
				"the body would set them to %s: add --show-secrets", name, strings.Join(secret, ", "), masked)
		}
	}
	body, err := json.MarshalIndent(struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}{name, c.Config}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", body)
	return err
}
