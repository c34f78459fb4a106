package kafkaconf

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a:b", map[string]string{"a": "b"}},
		{"space", "a b", map[string]string{"a": "b"}},
		{"tab and form feed", "a\t\fb", map[string]string{"a": "b"}},
		{"blanks around separator", "a \t= \tb", map[string]string{"a": "b"}},
		{"only the first separator counts", "a = = b", map[string]string{"a": "= b"}},
		{"space then colon", "a : b:c", map[string]string{"a": "b:c"}},
		{"trailing blanks kept", "a=b  \t", map[string]string{"a": "b  \t"}},
		{"leading blanks skipped", "   \t\fa=b", map[string]string{"a": "b"}},
		{"key only", "a", map[string]string{"a": ""}},
		{"key and separator only", "a=", map[string]string{"a": ""}},
		{"empty key", "=b", map[string]string{"": "b"}},
		{"hash comment", "# a=b\nc=d", map[string]string{"c": "d"}},
		{"bang comment", "  ! a=b\nc=d", map[string]string{"c": "d"}},
		{"hash inside value", "a=b#c", map[string]string{"a": "b#c"}},
		{"comment does not continue", "# a\\\nb=c", map[string]string{"b": "c"}},
		{"blank lines", "\n\n  \n\t\na=b\n\n", map[string]string{"a": "b"}},
		{"CRLF", "a=b\r\nc=d\r\n", map[string]string{"a": "b", "c": "d"}},
		{"CR", "a=b\rc=d\r", map[string]string{"a": "b", "c": "d"}},
		{"continuation", "a=b\\\n   c", map[string]string{"a": "bc"}},
		{"continuation CRLF", "a=b\\\r\n\tc\r\nd=e", map[string]string{"a": "bc", "d": "e"}},
		{"continuation keeps inner blanks", "a=b \\\n  c", map[string]string{"a": "b c"}},
		{"continuation in key", "ke\\\n  y=v", map[string]string{"key": "v"}},
		{"continuation then hash is not a comment", "a=b\\\n#c", map[string]string{"a": "b#c"}},
		{"continuation then empty line ends", "a=b\\\n\nc=d", map[string]string{"a": "b", "c": "d"}},
		{"even backslashes do not continue", "a=b\\\\\nc=d", map[string]string{"a": "b\\", "c": "d"}},
		{"trailing backslash at EOF dropped", "a=b\\", map[string]string{"a": "b"}},
		{"continuation at EOF", "a=b\\\n", map[string]string{"a": "b"}},
		{"escapes", `a=\t\n\r\f\b\q\\`, map[string]string{"a": "\t\n\r\fbq\\"}},
		{"unicode escape", `a=\u00e9\u20AC`, map[string]string{"a": "é€"}},
		{"surrogate pair", `a=\ud83d\ude00`, map[string]string{"a": "😀"}},
		{"lone surrogate", `a=\ud83d`, map[string]string{"a": "\uFFFD"}},
		{"escaped separators in key", `a\=b\:c\ d=e`, map[string]string{"a=b:c d": "e"}},
		{"escaped leading blank in value", `a=\ \ b`, map[string]string{"a": "  b"}},
		{"ISO-8859-1 bytes", "a=\xe9", map[string]string{"a": "é"}},
		{"UTF-8 bytes read as ISO-8859-1", "a=é", map[string]string{"a": "Ã©"}},
		{"later key wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"worker file", `
# Kafka Connect
bootstrap.servers=kafka-0:9093,kafka-1:9093
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="connect" \
    password="s3cr\\"et";
offset.storage.topic = connect-offsets
`, map[string]string{
			"bootstrap.servers":    "kafka-0:9093,kafka-1:9093",
			"sasl.jaas.config":     `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="s3cr\"et";`,
			"offset.storage.topic": "connect-offsets",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProperties(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseProperties: %v", err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("ParseProperties(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParsePropertiesMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\u12G4`, "a=\\u", "ok=1\n\nsecret=hunter2\\uZZZZ"} {
		_, err := ParseProperties(strings.NewReader(in))
		if !errors.Is(err, ErrMalformedProperties) {
			t.Errorf("ParseProperties(%q) = %v, want ErrMalformedProperties", in, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q shows the value", err)
		}
	}
	_, err := ParseProperties(strings.NewReader("a=1\n# c\nb=\\\n  x\\u12"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error %v does not name line 3", err)
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=b", "a\\\n b", "# c\n!d\ne:f", `\u0041=\t`, "k\\ey v\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		props, err := ParseProperties(strings.NewReader(string(in)))
		if err != nil {
			if !errors.Is(err, ErrMalformedProperties) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		// Writing the properties back escaped and reading them again
		// gives the same map.
		var b strings.Builder
		for k, v := range props {
			b.WriteString(escapeProperty(k, true) + "=" + escapeProperty(v, false) + "\n")
		}
		again, err := ParseProperties(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("reparse %q: %v", b.String(), err)
		}
		if !maps.Equal(props, again) {
			t.Fatalf("round trip of %q:\n got %q\nwant %q", b.String(), again, props)
		}
	})
}

// escapeProperty is java.util.Properties.saveConvert with escapeUnicode.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case ' ':
			if i == 0 || key {
				b.WriteString(`\ `)
			} else {
				b.WriteByte(' ')
			}
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if r < 0x20 || r > 0x7e {
				for _, u := range utf16Units(r) {
					b.WriteString(`\u` + hex4(u))
				}
			} else {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func utf16Units(r rune) []uint16 { return utf16.Encode([]rune{r}) }

func hex4(u uint16) string { return fmt.Sprintf("%04x", u) }
