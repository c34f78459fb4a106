package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
)

// lineWidth is the width the text output fits: list, prune, snapshot and
// restore lines stay within it for the demo's store.
const lineWidth = 120

// nameList summarises names for a table column: all of them when they fit
// in width, else "3 of 16: a, b, c …". The whole list is in --output json
// and show.
func nameList(names []string, width int) string {
	all := strings.Join(names, ",")
	if len(all) <= width {
		return all
	}
	out := ""
	for i := range names {
		next := fmt.Sprintf("%d of %d: %s …", i+1, len(names), strings.Join(names[:i+1], ", "))
		if len(next) > width {
			break
		}
		out = next
	}
	if out == "" {
		return plural(len(names), "connector", "connectors")
	}
	return out
}

// wrap is english.Wrap.
func wrap(s string, width int, indent string) string { return english.Wrap(s, width, indent) }

// warn prints a warning for a person: "offsetkeeper snapshot: warning:
// ...", wrapped to lineWidth.
func warn(w io.Writer, command, msg string) {
	fmt.Fprintln(w, wrap("offsetkeeper "+command+": warning: "+msg, lineWidth, "  "))
}

// fitGuide fits a walk-through of commands to lineWidth: a command line
// (its first word is the program, curl or kcat) wider than that is broken
// before its flags with a shell continuation (" \" at the end of a line),
// so that it still runs as printed, pasted whole; any other wide line is
// broken as english.Fit breaks it.
func fitGuide(s, program string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if utf8.RuneCountInString(l) <= lineWidth {
			continue
		}
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, program+" ") || strings.HasPrefix(t, "curl ") || strings.HasPrefix(t, "kcat ") {
			lines[i] = continueCommand(l, strings.Repeat(" ", len(l)-len(t)+4))
		} else {
			lines[i] = english.Fit(l, lineWidth)
		}
	}
	return strings.Join(lines, "\n")
}

// continueCommand breaks a shell command line before its " --" flags,
// each line but the last ending in " \", the lines after the first
// indented by indent. A single flag wider than a line stays whole.
func continueCommand(l, indent string) string {
	parts := strings.Split(l, " --")
	var b strings.Builder
	line := parts[0]
	for _, p := range parts[1:] {
		next := line + " --" + p
		if utf8.RuneCountInString(next)+2 > lineWidth {
			b.WriteString(line + " \\\n")
			line = indent + "--" + p
			continue
		}
		line = next
	}
	b.WriteString(line)
	return b.String()
}
