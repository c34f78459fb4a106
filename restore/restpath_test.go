package restore

import (
	"net/url"
	"strings"
	"testing"
)

// TestRESTPathSegment: a connector name with characters a shell takes
// (& ; $ =, a space, a quote) becomes a path segment of shell-safe
// characters only, which decodes back to the name.
func TestRESTPathSegment(t *testing.T) {
	for _, name := range []string{"a&b;c$d=e", "x y'z", "eu->us.Mirror", "café-😀", "p+q,r:s@t", "plain-name_1.0"} {
		seg := RESTPathSegment(name)
		if q := ShellQuote(seg); q != seg && strings.ContainsAny(seg, "$&;'\" ") {
			t.Errorf("%q -> %q: not shell-safe", name, seg)
		}
		if strings.ContainsAny(seg, "$&;'\" +,:=@/") {
			t.Errorf("%q -> %q: holds a character a shell or a path takes", name, seg)
		}
		if back, err := url.PathUnescape(seg); err != nil || back != name {
			t.Errorf("%q -> %q -> %q (%v)", name, seg, back, err)
		}
	}
	if got := RESTPathSegment("plain-name_1.0"); got != "plain-name_1.0" {
		t.Errorf("a plain name: %q", got)
	}
}
