package restore

import (
	"regexp"
	"strings"
)

// secretWords are the parts of a config key's name that make its value a
// secret to keep off the screen: Connect keeps connector configs in plain
// text, and a snapshot holds them as they are. "apikey" is matched with the
// separators taken out (api.key, api_key, api-key, apiKey); sasl.jaas.config
// and basic.auth.user.info hold a password inline. A word is never just
// "key", so key.converter and its settings are not secrets.
var secretWords = []string{"password", "passwd", "secret", "token", "credential", "apikey", "jaasconfig", "userinfo"}

// secretKey reports whether config key name holds a secret.
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
// where the secret is, not the secret.
var placeholder = regexp.MustCompile(`^(\$\{[^{}]*\})+$`)

// SecretValue reports whether value, of config key name, is a secret that
// is not printed (show masks it without --show-secrets): a key whose name
// looks like a secret's, with a value that is not empty and not only
// ConfigProvider placeholders.
func SecretValue(name, value string) bool {
	return value != "" && secretKey(name) && !placeholder.MatchString(value)
}
