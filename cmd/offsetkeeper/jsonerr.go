package main

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// countingWriter counts what a command wrote to stdout, so that a JSON
// error object is printed only when nothing else was.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// wantsJSON reports whether args ask for --output json (or -o json) in
// any of the forms the flag parser takes.
func wantsJSON(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		switch a {
		case "-o", "--output", "-output":
			if i+1 < len(args) && args[i+1] == "json" {
				return true
			}
		case "-o=json", "--output=json", "-output=json":
			return true
		}
	}
	return false
}

// jsonError is what a command run with --output json prints on stdout
// when it fails before printing anything there, so that `... | jq` sees
// the failure: the same message as on stderr, and the exit code.
type jsonError struct {
	Error    string `json:"error"`
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	// Commands are the commands the error advises, each whole, as they
	// run (the text form puts them on lines of their own).
	Commands []string `json:"commands,omitempty"`
}

// printJSONError prints err as a jsonError on stdout if nothing was
// printed there yet.
func printJSONError(stdout *countingWriter, command string, code int, err error) {
	if stdout.n > 0 {
		return
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	cmds, _ := restore.AdvisedCommands(err)
	_ = enc.Encode(jsonError{Error: strings.TrimSpace(err.Error()), Command: command, ExitCode: code, Commands: cmds})
}
