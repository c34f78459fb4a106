package main

import (
	"fmt"
	"io"
	"strings"
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

// wrap breaks s into lines of at most width columns at spaces; the lines
// after the first are indented by indent. A word longer than a line is
// left whole.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case line+1+len(word) > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

// warn prints a warning for a person: "offsetkeeper snapshot: warning:
// ...", wrapped to lineWidth.
func warn(w io.Writer, command, msg string) {
	fmt.Fprintln(w, wrap("offsetkeeper "+command+": warning: "+msg, lineWidth, "  "))
}
