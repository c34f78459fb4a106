package snapshot

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNoTimeZone is ParseMoment's error for a time without a zone, which
// would otherwise be read in some zone the operator did not mean.
var ErrNoTimeZone = errors.New("no time zone")

// ParseMoment reads a moment as --at, --since and the page's at=, from=
// and to= take it: an RFC 3339 time (fractional seconds allowed; returned
// in UTC) or a negative duration before now ("-15m", "-1h30m"). A time
// without a zone is refused with ErrNoTimeZone and advice to add Z for
// UTC; anything else malformed gets an error saying what is wanted.
func ParseMoment(s string, now time.Time) (time.Time, error) {
	const want = "want an RFC 3339 time (2026-12-01T09:14:03Z, fractional seconds allowed) or a negative duration from now (-15m)"
	if strings.HasPrefix(s, "-") {
		d, err := time.ParseDuration(s)
		if err != nil || d >= 0 {
			return time.Time{}, errors.New(want)
		}
		return now.Add(d).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if _, err := time.Parse(layout, s); err == nil {
			return time.Time{}, fmt.Errorf("%w: add Z for UTC (%sZ) or an offset (%s+01:00)", ErrNoTimeZone, s, s)
		}
	}
	return time.Time{}, errors.New(want)
}
