package english

import (
	"regexp"
	"strings"
	"testing"
)

var continued = regexp.MustCompile(` \\\n +`)

// TestAdvice: the commands in advice are taken out of the wrapped prose
// onto lines of their own, broken only before a flag with a " \"
// continuation; joined back they are the commands as given, and no
// line passes the width.
func TestAdvice(t *testing.T) {
	run := "offsetkeeper restore 01JEXAMPLEUNDO0000000000000 --connector 'a b --c' --store file:///tmp/a/very/long/store/path/x --stop-connectors --resume"
	dry := run + " --dry-run"
	text := "restore: apply: commit failed; " + strings.Repeat("this restore wrote topic connect-offsets, ", 4) +
		"to roll back what it wrote: " + run + " (check first: " + dry + "); or else\n  - item " + dry +
		"\n    kafka-topics.sh --bootstrap-server 127.0.0.1:1,127.0.0.1:2 --create --topic connect-offsets --partitions 25"
	topics := "kafka-topics.sh --bootstrap-server 127.0.0.1:1,127.0.0.1:2 --create --topic connect-offsets --partitions 25"
	got := Advice(text, 80, []string{run, dry, topics})
	for _, l := range strings.Split(got, "\n") {
		if n := utf8Len(l); n > 80 {
			t.Errorf("a line of %d columns: %s", n, l)
		}
	}
	joined := continued.ReplaceAllString(got, " ")
	var cmds []string
	for _, l := range strings.Split(joined, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "offsetkeeper ") || strings.HasPrefix(s, "kafka-topics.sh ") {
			cmds = append(cmds, s)
		} else if strings.Contains(l, "offsetkeeper") {
			t.Errorf("a command left in prose: %q", l)
		}
	}
	if want := []string{run, dry, dry, topics}; strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands joined back:\n%s\nwant\n%s\nfrom\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"), got)
	}
	if strings.Contains(got, "'a b \\") || strings.Contains(got, "(check first") || strings.Contains(got, "\n)") {
		t.Errorf("broken inside quotes, or a parenthesis left around a command:\n%s", got)
	}
	if !strings.Contains(got, "\n    kafka-topics.sh --bootstrap-server") {
		t.Errorf("a line that is a command moved from where it stands:\n%s", got)
	}
	if !strings.Contains(got, "check first:") || !strings.Contains(got, "\n  or else\n") {
		t.Errorf("the prose lost its words:\n%s", got)
	}
	t.Logf("\n%s", got)
	long := strings.Repeat("word ", 40)
	for _, l := range strings.Split(Advice(long, 80, nil), "\n") {
		if utf8Len(l) > 80 {
			t.Errorf("prose without commands: a line of %d columns", utf8Len(l))
		}
	}
	if Advice("short, no commands", 80, []string{run}) != "short, no commands" {
		t.Error("text without commands changed")
	}
}

func utf8Len(s string) int { return len([]rune(s)) }
