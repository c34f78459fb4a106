package main

import (
	"maps"
	"regexp"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/snapshot"
)

// masked replaces a connector config value that show does not print
// without --show-secrets. It says nothing of the value, not even its length.
const masked = "********"

// secretWords are the parts of a config key's name that make show mask its
// value: Connect keeps connector configs in plain text, and a snapshot
// holds them as they are. "apikey" is matched with the separators taken
// out (api.key, api_key, api-key, apiKey); sasl.jaas.config and
// basic.auth.user.info hold a password inline. A word is never just "key",
// so key.converter and its settings are shown.
var secretWords = []string{"password", "passwd", "secret", "token", "credential", "apikey", "jaasconfig", "userinfo"}

// secretKey reports whether show masks the value of the config key name.
func secretKey(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer(".", "", "_", "", "-", "", " ", "").Replace(n)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// placeholder matches a value made only of ConfigProvider placeholders,
// such as ${file:/etc/kafka/secrets.properties:db.password}: it names
// where the secret is, not the secret, so show prints it.
var placeholder = regexp.MustCompile(`^(\$\{[^{}]*\})+$`)

// maskValue is the value show prints for config key name.
func maskValue(name, value string) string {
	if value == "" || !secretKey(name) || placeholder.MatchString(value) {
		return value
	}
	return masked
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
