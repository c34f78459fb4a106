package reliability

import (
	"regexp"
	"strings"
)

var continued = regexp.MustCompile(` \\\n +`)

// flat is text as one line of its words, its shell continuations (" \"
// at a line's end) joined: what a test compares once the CLI wraps its
// errors at 120 columns.
func flat(s string) string {
	return strings.Join(strings.Fields(continued.ReplaceAllString(s, " ")), " ")
}
