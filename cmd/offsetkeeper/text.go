package main

import (
	"fmt"
	"io"
	"strings"

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
