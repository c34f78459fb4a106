package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/restore"
)

// printError prints a command's error on stderr. An error that carries
// the commands it advises (restore.AdvisedCommands) is wrapped to the
// line width with each command on lines of its own, broken only with
// shell continuations: wrapped at a space, a command pasted a line at a
// time would run its first line alone. Any other error is printed as it
// is, since a command in it could not be told from the prose.
func printError(stderr io.Writer, name string, err error) {
	// A command's own errors may name it already ("failover: ..."): once.
	msg := strings.TrimPrefix(err.Error(), name+": ")
	text := fmt.Sprintf("offsetkeeper %s: %s", name, msg)
	if cmds, ok := restore.AdvisedCommands(err); ok {
		text = english.Advice(text, lineWidth, cmds)
	}
	fmt.Fprintln(stderr, text)
}

// wrapNote wraps a note of prose (it holds no command) to the line width,
// its lines after the first indented two columns; a word wider than a
// line, such as a JSON offset, breaks at its punctuation (english.Fit).
func wrapNote(s string) string {
	return english.Fit(english.Wrap(s, lineWidth, "  "), lineWidth)
}
