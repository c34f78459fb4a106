package english

import (
	"strings"
	"unicode/utf8"
)

// Advice lays out text that holds commands a person pastes (cmds, each
// as it runs). Every line of text is wrapped at spaces to width, its
// continuations indented; each command found in it is taken out of the
// prose onto lines of its own, indented two columns more than its line,
// and broken only with Continue. A command is never broken at a plain
// space: pasted a line at a time, its first line alone would run (a
// restore without its --dry-run). A "(" left open before a command and
// closed right after it is dropped with its ")".
func Advice(text string, width int, cmds []string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = adviceLine(l, width, cmds)
	}
	return strings.Join(lines, "\n")
}

func adviceLine(l string, width int, cmds []string) string {
	lead := len(l) - len(strings.TrimLeft(l, " "))
	first, indent := l[:lead], strings.Repeat(" ", lead+2)
	if strings.HasPrefix(l[lead:], "- ") {
		first, indent = l[:lead+2], strings.Repeat(" ", lead+2)
	}
	rest := l[len(first):]
	var out []string
	prose := func(s string) {
		if s = strings.TrimSpace(s); s == "" {
			return
		}
		line := first
		for _, word := range strings.Fields(s) {
			switch {
			case line == first || line == indent:
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width:
				out = append(out, line)
				line = indent
			default:
				line += " "
			}
			line += word
		}
		out = append(out, line)
		first = indent
	}
	for {
		at, cmd := nextCommand(rest, cmds)
		if cmd == "" {
			prose(rest)
			break
		}
		before, after := rest[:at], rest[at+len(cmd):]
		if open := strings.LastIndex(before, "("); open >= 0 && !strings.Contains(before[open:], ")") &&
			strings.HasPrefix(after, ")") {
			before, after = before[:open]+before[open+1:], after[1:]
		}
		prose(before)
		from := first + "  "
		if len(out) == 0 {
			from = first // a line that is the command: where it stands
		}
		out = append(out, Continue(cmd, width, from, indent+"      "))
		first = indent
		// The command's own line ends the clause: a "; " or ", " after
		// it would open the next line.
		rest = strings.TrimLeft(after, " ;,")
	}
	if len(out) == 0 {
		return l
	}
	return strings.Join(out, "\n")
}

// nextCommand finds the first of cmds in s, the longest one where several
// start at the same place (a command is a prefix of its --dry-run form).
func nextCommand(s string, cmds []string) (int, string) {
	at, found := -1, ""
	for _, c := range cmds {
		if c == "" {
			continue
		}
		i := strings.Index(s, c)
		if i < 0 {
			continue
		}
		if at < 0 || i < at || i == at && len(c) > len(found) {
			at, found = i, c
		}
	}
	return at, found
}

// Continue breaks a shell command that would pass width columns after
// first (the first line's indentation) before its "--" flags and its
// pipes, each line
// but the last ending in " \" and the lines after the first indented by
// indent: pasted whole it runs as written, and pasted a line at a time the
// shell waits for the rest. It never breaks inside quotes; a single flag
// wider than a line stays whole.
func Continue(cmd string, width int, first, indent string) string {
	parts := splitFlags(cmd)
	var b strings.Builder
	line := first + parts[0]
	for _, p := range parts[1:] {
		next := line + " " + p
		if utf8.RuneCountInString(next)+2 > width {
			b.WriteString(line + " \\\n")
			line = indent + p
			continue
		}
		line = next
	}
	b.WriteString(line)
	return b.String()
}

// splitFlags splits cmd before each " --" and each " | " (the next command
// of a pipeline) outside quotes.
func splitFlags(cmd string) []string {
	var parts []string
	var quote rune
	start := 0
	for i, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ' ' && (strings.HasPrefix(cmd[i:], " --") || strings.HasPrefix(cmd[i:], " | ")) && i > start:
			parts = append(parts, cmd[start:i])
			start = i + 1
		}
	}
	return append(parts, cmd[start:])
}
