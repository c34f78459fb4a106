package kafkaconf

import (
	"maps"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name, in string
		module   string
		options  map[string]string
	}{
		{"plain", `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
			"org.apache.kafka.common.security.plain.PlainLoginModule", map[string]string{"username": "u", "password": "p"}},
		{"scram unquoted, no space before semicolon", `org.apache.kafka.common.security.scram.ScramLoginModule required username=admin password=admin-secret_$1;`,
			"org.apache.kafka.common.security.scram.ScramLoginModule", map[string]string{"username": "admin", "password": "admin-secret_$1"}},
		{"escapes", `M required password="a\"b\\c\n\t\101";`, "M", map[string]string{"password": "a\"b\\c\n\tA"}},
		{"single quotes and specials", `M optional password='x y;z="w"' user="é ü";`, "M", map[string]string{"password": `x y;z="w"`, "user": "é ü"}},
		{"comments and newlines", "M /* c */ Required // to the end\n username=\"u\"\n ;", "M", map[string]string{"username": "u"}},
		{"no options", `software.amazon.msk.auth.iam.IAMLoginModule required;`, "software.amazon.msk.auth.iam.IAMLoginModule", map[string]string{}},
		{"tokenauth", `M required username="id" password="hmac" tokenauth="true";`, "M", map[string]string{"username": "id", "password": "hmac", "tokenauth": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := parseJAAS(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if e.Module != tt.module || !maps.Equal(e.Options, tt.options) {
				t.Errorf("parseJAAS(%q) = %q %q, want %q %q", tt.in, e.Module, e.Options, tt.module, tt.options)
			}
		})
	}
}

func TestParseJAASErrors(t *testing.T) {
	const secret = "Sup3r@Secret"
	for _, in := range []string{
		``,
		`"M" required;`,
		`M username="u";`,
		`M required username="u" password="` + secret + `"`,
		`M required username="u" password=` + secret + `;`,
		`M required password=;`,
		`M required password "` + secret + `";`,
		`M required; N required;`,
		`M required "password"="` + secret + `";`,
	} {
		_, err := parseJAAS(in)
		if err == nil {
			t.Errorf("parseJAAS(%q) succeeded", in)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "@Secret") {
			t.Errorf("parseJAAS(%q) error %q shows the secret", in, err)
		}
	}
}
