package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// manCommand is the man entry of the command table (main.go).
var manCommand = commandInfo{
	name:    "man",
	summary: "print the manual page (roff): offsetkeeper man | man -l -",
	usage:   "",
	noKafka: true,
	new:     func(e *env) command { return &manCmd{env: e} },
}

type manCmd struct{ *env }

func (c *manCmd) Flags(fs *flag.FlagSet) {}

func (c *manCmd) Run(ctx context.Context, args []string) error {
	if err := noArgs(args); err != nil {
		return err
	}
	writeManPage(c.stdout)
	return nil
}

// roff escapes s for a roff text line.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// sharedFlags are the flags every command that talks to Kafka registers.
func sharedFlags() map[string]bool {
	fs := flag.NewFlagSet("shared", flag.ContinueOnError)
	(&globals{}).register(fs)
	out := map[string]bool{}
	for _, f := range flagList(fs) {
		out[f.name] = true
	}
	return out
}

func writeManFlag(w io.Writer, f cliFlag) {
	head := `\fB\-\-` + roff(f.name) + `\fR`
	if s := shortFor(f.name); s != "" {
		head = `\fB\-` + s + `\fR, ` + head
	}
	if !f.isBool {
		head += ` \fI` + roff(cmpOrStr(f.valueName, "value")) + `\fR`
	}
	twin := "Environment \\fB" + envName(f.name) + "\\fR"
	if f.perRun {
		twin = "Command line only"
	}
	fmt.Fprintf(w, ".TP\n%s\n%s\n.br\n%s", head, roff(f.usage), twin)
	if f.def != "" && f.def != "false" && f.def != "0" && f.def != "[]" {
		fmt.Fprintf(w, "; default \\fB%s\\fR", roff(f.def))
	}
	fmt.Fprintln(w, ".")
}

// writeManPage writes offsetkeeper(1) from the command table and the flag
// sets; docs/offsetkeeper.1 is its output.
func writeManPage(w io.Writer) {
	fmt.Fprint(w, `.TH OFFSETKEEPER 1 "" "offsetkeeper" "User Commands"
.SH NAME
offsetkeeper \- back up and restore Kafka Connect offsets
.SH SYNOPSIS
.B offsetkeeper
.I command
[\fIflags\fR] [\fIarguments\fR]
.SH DESCRIPTION
offsetkeeper snapshots the offsets of Kafka Connect source and sink connectors into a blob store,
and restores them after a bad reset, a lost topic or a migration.
Flags may come before or after the arguments.
The shared flags (connection, store, security, log) are accepted by every command, before or after its name.
Settings have an environment twin: \fB\-\-foo\-bar\fR is \fBOFFSETKEEPER_FOO_BAR\fR; explicit flags win.
Per-run choices and safety overrides (\fB\-\-force\fR, \fB\-\-connector\fR, \fB\-\-dry\-run\fR, \fB\-\-output\fR, ...) come only from the command line.
.SH COMMANDS
`)
	shared := sharedFlags()
	for _, name := range commandNames() {
		info := commands[name]
		fmt.Fprintf(w, ".SS \"offsetkeeper %s %s\"\n%s.\n", roff(name), roff(info.usage), roff(info.summary))
		for _, f := range commandFlags(name) {
			if !shared[f.name] {
				writeManFlag(w, f)
			}
		}
	}
	fmt.Fprint(w, ".SH SHARED FLAGS\nEvery command accepts these, before or after its name; a command that does not talk to Kafka ignores the Kafka ones.\n")
	fs := flag.NewFlagSet("shared", flag.ContinueOnError)
	(&globals{}).register(fs)
	for _, f := range flagList(fs) {
		writeManFlag(w, f)
	}
	fmt.Fprint(w, `.SH EXIT STATUS
.TP
.B 0
success
.TP
.B 1
error (what failed and what to do is printed on stderr)
.TP
.B 2
usage error (unknown command, flag or argument)
.TP
.B 3
refused by a safety check; nothing was written
.SH SEE ALSO
The README and docs/ of https://github.com/offsetkeeper/offsetkeeper;
\fBoffsetkeeper completion bash|zsh|fish\fR prints shell completion.
`)
}
