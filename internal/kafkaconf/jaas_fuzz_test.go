package kafkaconf

import (
	"strings"
	"testing"
)

// FuzzParseJAAS: a sasl.jaas.config value (from a worker's .properties
// or the environment) parses or is refused, never panics, and an error
// never holds an option's value (which may be a password).
func FuzzParseJAAS(f *testing.F) {
	f.Add(`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr3t-Value";`)
	f.Add(`org.apache.kafka.common.security.scram.ScramLoginModule required username='bob' password="a\"b\\c\101";`)
	f.Add(`// comment
/* block */ software.amazon.msk.auth.iam.IAMLoginModule required;`)
	f.Add(`x required a=b c="d`)
	f.Add(`x optional a="\777";y required;`)
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseJAAS(s)
		if err != nil {
			// The value of password= must not come back in the error.
			if i := strings.Index(s, `password="`); i >= 0 {
				v := s[i+len(`password="`):]
				if j := strings.IndexByte(v, '"'); j >= 8 && !strings.ContainsAny(v[:j], "\\=;'/ \t\n\r") && strings.Contains(err.Error(), v[:j]) {
					t.Fatalf("error %q holds the password %q", err, v[:j])
				}
			}
			return
		}
		if e.Module == "" {
			t.Fatalf("parseJAAS(%q) = %+v without a module", s, e)
		}
	})
}
