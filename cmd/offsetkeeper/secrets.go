package main

import (
	"maps"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// masked replaces a connector config value that show does not print
// without --show-secrets. It says nothing of the value, not even its length.
const masked = "********"

// maskValue is the value show prints for config key name: masked when
// restore.SecretValue says it holds a secret.
func maskValue(name, value string) string {
	if restore.SecretValue(name, value) {
		return masked
	}
	return value
}

// maskSecrets returns s with the values of secret-looking config keys of
// every connector masked (see secretKey); s itself is left as it is.
func maskSecrets(s *snapshot.Snapshot) *snapshot.Snapshot {
	out := *s
	out.Connectors = make([]snapshot.Connector, len(s.Connectors))
	for i, c := range s.Connectors {
		if c.Config != nil {
			cfg := maps.Clone(c.Config)
			for k, v := range cfg {
				cfg[k] = maskValue(k, v)
			}
			c.Config = cfg
		}
		out.Connectors[i] = c
	}
	return &out
}
