package kafkaconf

import (
	"errors"
	"fmt"
	"strings"
)

// jaasEntry is the one login module of a Kafka sasl.jaas.config value:
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";
type jaasEntry struct {
	Module  string
	Flag    string
	Options map[string]string
}

// parseJAAS parses a sasl.jaas.config value the way Kafka's JaasConfig does
// with java.io.StreamTokenizer: // and /* */ comments, words, '…' and "…"
// quoted values with backslash escapes (\n \t \r \f \b \a \v, octal \ooo, and
// any other character for itself), one login module, terminated by ';'.
// Its errors name option keys, never values.
func parseJAAS(s string) (jaasEntry, error) {
	t := jaasTokenizer{s: []rune(s)}
	var e jaasEntry
	tok, err := t.next()
	if err != nil {
		return e, err
	}
	if tok.kind != tokWord {
		return e, errors.New("JAAS config does not start with a login module class name")
	}
	e.Module = tok.text
	if tok, err = t.next(); err != nil {
		return e, err
	}
	switch f := strings.ToLower(tok.text); {
	case tok.kind == tokWord && (f == "required" || f == "requisite" || f == "sufficient" || f == "optional"):
		e.Flag = f
	default:
		return e, fmt.Errorf("JAAS config: login module %s has no control flag (required, requisite, sufficient or optional)", e.Module)
	}
	e.Options = make(map[string]string)
	var lastKey string
	for {
		tok, err := t.next()
		if err != nil {
			return e, err
		}
		switch tok.kind {
		case tokEOF:
			return e, errors.New("JAAS config entry not terminated by semicolon")
		case tokPunct:
			if tok.text != ";" {
				// Not echoed: it may be part of an unquoted secret.
				return e, errors.New("JAAS config: unexpected character; quote option values that hold anything but letters, digits and . - _ $")
			}
			if rest, err := t.next(); err != nil {
				return e, err
			} else if rest.kind != tokEOF {
				return e, errors.New("JAAS config must contain exactly one login module")
			}
			return e, nil
		case tokQuoted:
			return e, errors.New("JAAS config: option name is quoted")
		}
		key := tok.text
		if eq, err := t.next(); err != nil {
			return e, err
		} else if eq.kind != tokPunct || eq.text != "=" {
			// A word not followed by "=" may be the rest of a value, as
			// in password="pa"ss": it is not echoed.
			return e, fmt.Errorf("JAAS config: a word %s is not followed by = and a value (not shown: it may be part of a value, such as a password with an unescaped quote)", after(lastKey))
		}
		val, err := t.next()
		if err != nil {
			return e, err
		}
		if val.kind != tokWord && val.kind != tokQuoted {
			return e, fmt.Errorf("JAAS config: value not specified for key %q", key)
		}
		e.Options[key] = val.text
		lastKey = key
	}
}

// after says where a word is: after the option named, or after the
// control flag.
func after(key string) string {
	if key == "" {
		return "after the control flag"
	}
	return fmt.Sprintf("after option %q", key)
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted
	tokPunct
)

type jaasToken struct {
	kind tokKind
	text string
}

type jaasTokenizer struct {
	s   []rune
	off int
}

// isJAASWordChar reports whether c continues a StreamTokenizer word: letters,
// Latin-1 letters, digits, '.', '-', '_' and '$'.
func isJAASWordChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '-' || c == '_' || c == '$' || c >= 0xA0
}

func (t *jaasTokenizer) next() (jaasToken, error) {
	for t.off < len(t.s) {
		c := t.s[t.off]
		switch {
		case c <= ' ':
			t.off++
		case c == '/' && t.off+1 < len(t.s) && t.s[t.off+1] == '*':
			t.off += 2
			for t.off < len(t.s) && (t.s[t.off] != '*' || t.off+1 >= len(t.s) || t.s[t.off+1] != '/') {
				t.off++
			}
			t.off = min(t.off+2, len(t.s))
		case c == '/':
			// "//" and, in StreamTokenizer, a lone '/' comment out the
			// rest of the line.
			for t.off < len(t.s) && t.s[t.off] != '\n' && t.s[t.off] != '\r' {
				t.off++
			}
		case c == '"' || c == '\'':
			return t.quoted(c), nil
		case isJAASWordChar(c):
			start := t.off
			for t.off < len(t.s) && isJAASWordChar(t.s[t.off]) {
				t.off++
			}
			return jaasToken{kind: tokWord, text: string(t.s[start:t.off])}, nil
		default:
			t.off++
			return jaasToken{kind: tokPunct, text: string(c)}, nil
		}
	}
	return jaasToken{kind: tokEOF}, nil
}

// quoted reads a quoted string as StreamTokenizer does: it ends at the matching
// quote, or unterminated at the end of the line or input.
func (t *jaasTokenizer) quoted(q rune) jaasToken {
	t.off++
	var sb strings.Builder
	for t.off < len(t.s) {
		c := t.s[t.off]
		t.off++
		switch {
		case c == q:
			return jaasToken{kind: tokQuoted, text: sb.String()}
		case c == '\n' || c == '\r':
			t.off--
			return jaasToken{kind: tokQuoted, text: sb.String()}
		case c == '\\' && t.off < len(t.s):
			c = t.s[t.off]
			t.off++
			switch c {
			case 'a':
				c = 0x7
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = 0xB
			case '0', '1', '2', '3', '4', '5', '6', '7':
				// Up to three octal digits, at most \377.
				v, maxDigits := c-'0', 2
				if c > '3' {
					maxDigits = 1
				}
				for ; maxDigits > 0 && t.off < len(t.s) && t.s[t.off] >= '0' && t.s[t.off] <= '7'; maxDigits-- {
					v = v*8 + (t.s[t.off] - '0')
					t.off++
				}
				c = v
			}
			sb.WriteRune(c)
		default:
			sb.WriteRune(c)
		}
	}
	return jaasToken{kind: tokQuoted, text: sb.String()}
}
