package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestFitGuide: a walk-through's command line wider than 120 columns is
// broken before its flags with shell continuations, and joined back it is
// the command as it was; lines that fit are as they were.
func TestFitGuide(t *testing.T) {
	cmd := `  offsetkeeper daemon --brokers 127.0.0.1:40001,127.0.0.1:40002,127.0.0.1:40003 --store file:///tmp/a/very/long/store/path/for/the/demo --schedule "@every 1m" --keep-within 1d --keep-daily 7 --journal-interval 1s --listen 127.0.0.1:40373`
	in := "Look around:\n" + cmd + "\n  curl -s 'http://127.0.0.1:8083/connectors?expand=status'\n"
	got := fitGuide(in, "offsetkeeper")
	for _, l := range strings.Split(got, "\n") {
		if n := len([]rune(l)); n > lineWidth {
			t.Errorf("a line of %d columns: %s", n, l)
		}
	}
	joined := strings.Join(strings.Fields(strings.ReplaceAll(got, " \\\n", " ")), " ")
	if want := strings.Join(strings.Fields(in), " "); joined != want {
		t.Errorf("joined back:\n%s\nwant\n%s", joined, want)
	}
	lines := strings.Split(got, "\n")
	if len(lines) < 4 || !strings.HasSuffix(lines[1], " \\") || !strings.HasPrefix(lines[2], "      --") {
		t.Errorf("not broken before a flag with a continuation:\n%s", got)
	}
	if fitGuide("  offsetkeeper list\n", "offsetkeeper") != "  offsetkeeper list\n" {
		t.Error("a line that fits changed")
	}
}

// joinContinued joins the shell continuations fitGuide breaks a wide
// command with, so that a test finds the command as it runs.
func joinContinued(s string) string { return continued.ReplaceAllString(s, " ") }

var continued = regexp.MustCompile(` \\\n +`)
