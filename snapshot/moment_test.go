package snapshot

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseMoment(t *testing.T) {
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr string // "" for none
	}{
		{in: "2026-12-07T02:15:42Z", want: time.Date(2026, 12, 7, 2, 15, 42, 0, time.UTC)},
		{in: "2026-12-07T02:15:42.123456789Z", want: time.Date(2026, 12, 7, 2, 15, 42, 123456789, time.UTC)},
		{in: "2026-12-07T03:15:42+01:00", want: time.Date(2026, 12, 7, 2, 15, 42, 0, time.UTC)},
		{in: "2026-12-06T21:15:42-05:00", want: time.Date(2026, 12, 7, 2, 15, 42, 0, time.UTC)},
		{in: "-15m", want: now.Add(-15 * time.Minute)},
		{in: "-1h30m", want: now.Add(-90 * time.Minute)},
		{in: "-1.5s", want: now.Add(-1500 * time.Millisecond)},
		{in: "2026-12-07T02:15:42", wantErr: "no time zone: add Z for UTC (2026-12-07T02:15:42Z)"},
		{in: "2026-12-07T02:15:42.5", wantErr: "add Z for UTC (2026-12-07T02:15:42.5Z)"},
		{in: "2026-12-07T02:15", wantErr: "add Z for UTC"},
		{in: "15m", wantErr: "or a negative duration from now (-15m)"},
		{in: "-0s", wantErr: "want an RFC 3339 time"},
		{in: "-", wantErr: "want an RFC 3339 time"},
		{in: "--15m", wantErr: "want an RFC 3339 time"},
		{in: "yesterday", wantErr: "want an RFC 3339 time"},
		{in: "", wantErr: "want an RFC 3339 time"},
		{in: "2026-12-07", wantErr: "want an RFC 3339 time"},
		{in: "2026-13-07T02:15:42Z", wantErr: "want an RFC 3339 time"},
		{in: "2026-12-07 02:15:42Z", wantErr: "want an RFC 3339 time"},
	}
	for _, tt := range tests {
		got, err := ParseMoment(tt.in, now)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseMoment(%q): %v", tt.in, err)
		case tt.wantErr == "" && (!got.Equal(tt.want) || got.Location() != time.UTC):
			t.Errorf("ParseMoment(%q) = %v, want %v in UTC", tt.in, got, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseMoment(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
		case tt.wantErr != "" && strings.Contains(tt.wantErr, "add Z") != errors.Is(err, ErrNoTimeZone):
			t.Errorf("ParseMoment(%q): errors.Is(ErrNoTimeZone) = %v", tt.in, errors.Is(err, ErrNoTimeZone))
		}
	}
}

// FuzzParseMoment: any input either parses to a UTC moment that prints
// back to the same instant, or is refused; nothing panics.
func FuzzParseMoment(f *testing.F) {
	for _, s := range []string{"2026-12-07T02:15:42Z", "2026-12-07T02:15:42.5+01:00", "-15m", "-1h30m", "2026-12-07T02:15:42", "-", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseMoment(s, now)
		if err != nil {
			if !got.IsZero() {
				t.Fatalf("ParseMoment(%q) = %v with error %v", s, got, err)
			}
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseMoment(%q) = %v, not UTC", s, got)
		}
		if strings.HasPrefix(s, "-") {
			if !got.Before(now) {
				t.Fatalf("ParseMoment(%q) = %v, not before now", s, got)
			}
			return
		}
		again, err := ParseMoment(got.Format(time.RFC3339Nano), now)
		if err != nil || !again.Equal(got) {
			t.Fatalf("ParseMoment(%q) = %v, which reads back as %v, %v", s, got, again, err)
		}
	})
}
