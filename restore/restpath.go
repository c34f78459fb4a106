package restore

import (
	"fmt"
	"net/url"
	"strings"
)

// RESTPathSegment is connector name as a path segment of a Connect REST
// URL that a printed curl command carries safely: url.PathEscape leaves
// $ & + , : ; = @ as they are (legal in a path), and in a shell they end
// the command (& ;) or expand ($, also inside double quotes); percent-
// encoded they reach Connect as the same name (its REST API decodes path
// parameters).
func RESTPathSegment(name string) string {
	var b strings.Builder
	for _, r := range url.PathEscape(name) {
		if strings.ContainsRune("$&+,:;=@", r) {
			fmt.Fprintf(&b, "%%%02X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Curl is how every curl command the tool prints starts. --fail-with-body
// (curl 7.76 and later) makes a request Connect refuses (404, 409, 500)
// exit non-zero, with Connect's error body still shown, so a script that
// runs the advice stops there instead of carrying on as if the connector
// were stopped; -sS drops the progress meter but keeps curl's own error.
const Curl = "curl -sS --fail-with-body"
