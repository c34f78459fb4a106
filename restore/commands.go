package restore

// This file builds the restore commands offsetkeeper prints for a person
// to paste: events, the page (daemon/web), the plan's header about a reset
// and the advice after a failed restore all print theirs with it, so that
// they are the same and run as printed.

import (
	"net/url"
	"strings"
	"time"
)

// CommandSettings are what a printed restore command carries so that it
// runs as printed in the shell the printing command ran in.
type CommandSettings struct {
	// Program is how the commands name the program, as shell text (a path
	// as it was run, "go run ./cmd/offsetkeeper"); default "offsetkeeper".
	Program string
	// Flags are the settings the printing command was given on its own
	// command line, as arguments ("--store", "file:///x", "--tls=true"):
	// every command printed repeats them. Settings that came from the
	// environment are not repeated (the shell still has them), nor are
	// secrets.
	Flags []string
	// ConnectURL tells that the settings know a Connect REST URL (from a
	// flag or the environment): the real form then stops the connectors
	// first and resumes them once verified (--stop-connectors --resume).
	ConnectURL bool
	// Via is the --via of the printing restore: "connect" is repeated (a
	// snapshot captured through REST restores only that way).
	Via string
	// Cloud tells that the Connect URL is Confluent Cloud's: it has no
	// stop, and pauses a connector itself while it alters its offsets, so
	// the commands carry no --stop-connectors --resume.
	Cloud bool
	// Layout tells that the connectors run under a topic layout (MSK
	// Connect's): no REST API to stop them, their status topics say.
	Layout bool
	// FromCluster, when set, is the cluster whose journal the commands'
	// moments (--at) are read from (--from-cluster): the printing command
	// knows it, and a store shared by the daemons of two clusters holds
	// both clusters' journals over the same moments.
	FromCluster string
}

// StopFirst is what to do before running the commands' Run form, or ""
// when it needs nothing: it stops and resumes the connectors itself (a
// Connect URL is known), or Confluent Cloud pauses them itself.
func (s CommandSettings) StopFirst() string {
	switch {
	case s.Cloud:
		return ""
	case s.Layout:
		return "Stop the connector before the undo: on MSK Connect, delete it (its topics stay) and wait until its status topic says UNASSIGNED; the restore checks that."
	case s.ConnectURL:
		return ""
	}
	return "Stop the connector before the undo (PUT /connectors/NAME/stop), or give --connect-url and the undo stops and resumes it."
}

// StopFirstOf is StopFirst for the undo of one connector's event, whose
// stop request it names (the daemon's "reset seen" line said NAME).
func (s CommandSettings) StopFirstOf(connector string) string {
	return strings.Replace(s.StopFirst(), "/connectors/NAME/stop", "/connectors/"+url.PathEscape(connector)+"/stop", 1)
}

// Commands are one restore in its two forms, each ready to paste: DryRun
// prints the plan and writes nothing (the same restore with --dry-run, so
// that with --stop-connectors it shows what stopping first resolves); Run
// restores.
type Commands struct {
	DryRun string `json:"dry_run"`
	Run    string `json:"run"`
}

// At is the restore of the state at the moment at (restore --at), limited
// to connectors when any are named.
func (s CommandSettings) At(at time.Time, connectors ...string) Commands {
	return s.commands([]string{"--at", FormatMoment(at)}, connectors)
}

// Snapshot is the restore of snapshot id, limited to connectors when any
// are named.
func (s CommandSettings) Snapshot(id string, connectors ...string) Commands {
	return s.commands([]string{id}, connectors)
}

func (s CommandSettings) commands(what, connectors []string) Commands {
	args := append([]string{"restore"}, what...)
	if what[0] == "--at" && s.FromCluster != "" {
		args = append(args, "--from-cluster", s.FromCluster)
	}
	for _, c := range connectors {
		args = append(args, "--connector", c)
	}
	args = append(args, s.Flags...)
	if s.Via == ViaConnect {
		args = append(args, "--via", ViaConnect)
	}
	if s.ConnectURL && !s.Cloud {
		args = append(args, "--stop-connectors", "--resume")
	}
	program := s.Program
	if program == "" {
		program = "offsetkeeper"
	}
	run := program + " " + quoteArgs(args)
	return Commands{DryRun: run + " --dry-run", Run: run}
}

// FormatMoment writes a moment as the printed commands give it to --at:
// RFC 3339 in UTC, with milliseconds (the journal's precision), or every
// digit when the moment has more.
func FormatMoment(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.Format(time.RFC3339Nano)
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == '=' || r == ',' || r == '+' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
