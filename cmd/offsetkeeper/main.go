// Command offsetkeeper backs up and restores Kafka Connect offsets.
//
// Each subcommand lives in its own file as a type with a Run(ctx, args)
// method and its commandInfo; this file holds the command table, the flags every command shares
// and the mapping of errors to exit codes; cli.go runs the table on cobra and pflag. Nothing
// below main calls os.Exit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/offsetkeeper/offsetkeeper/restore"
	"github.com/offsetkeeper/offsetkeeper/restore/drill"
	"github.com/offsetkeeper/offsetkeeper/snapshot"
	"github.com/offsetkeeper/offsetkeeper/snapshot/store"

	"github.com/offsetkeeper/offsetkeeper/internal/english"
	"github.com/offsetkeeper/offsetkeeper/internal/memlimit"
)

// Exit codes, documented in --help and the README.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitRefused = 3
	// exitIncomplete: a snapshot was stored, but a sink connector's group
	// could not be read and is named in it (incompleteError).
	exitIncomplete = 4
)

// usageError marks a command-line mistake (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// A command refused by a safety check (exit 3) returns an error matching
// restore.ErrRefused (a *restore.RefusedError or one Run wraps).

// command is one subcommand. Flags registers its flags on fs (the shared
// ones are already there); Run gets the positional arguments. cli.go gives
// each command of the table a cobra.Command with fs's flags (as pflag
// flags) whose RunE calls Run: a command needs nothing cobra-specific.
type command interface {
	Flags(fs *flag.FlagSet)
	Run(ctx context.Context, args []string) error
}

// commandInfo describes a subcommand for the table and --help.
type commandInfo struct {
	name    string
	summary string
	usage   string // arguments after the command name
	new     func(env *env) command
	// noKafka commands do not use the Kafka flags: they accept and ignore
	// them, and their --help only names them.
	noKafka bool
}

// commands is the command table, by name. Each command's file holds its
// entry (restoreCommand in restore.go, ...); a new command is added here.
var commands = commandTable(
	checkCommand,
	completionCommand,
	daemonCommand,
	deleteCommand,
	demoCommand,
	diffCommand,
	drillCommand,
	eventsCommand,
	failbackCommand,
	failoverCommand,
	listCommand,
	manCommand,
	pinCommand,
	pruneCommand,
	restoreCommand,
	serveCommand,
	showCommand,
	snapshotCommand,
	unpinCommand,
	verifyCommand,
	versionCommand,
)

// commandTable indexes infos by name.
func commandTable(infos ...commandInfo) map[string]commandInfo {
	m := make(map[string]commandInfo, len(infos))
	for _, c := range infos {
		m[c.name] = c
	}
	return m
}

// env is what every command gets: output streams and the shared flags.
type env struct {
	stdout, stderr io.Writer
	g              *globals
	log            *slog.Logger
}

func main() {
	memlimit.ReleaseCode()
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "offsetkeeper:", err)
		os.Exit(exitError)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if programName = demoProgram(os.Args[0]); programName == os.Args[0] {
		programName = restore.ShellQuote(programName)
	}
	stderr := os.Stderr
	if len(os.Args) > 1 && (os.Args[1] == cobra.ShellCompRequestCmd || os.Args[1] == cobra.ShellCompNoDescRequestCmd) || !debugLogging(os.Args[1:], os.Getenv(envName("log-level"))) {
		// Cloud SDKs log through loggers of their own straight to
		// os.Stderr (the AWS SDK's "SDK ... WARN falling back to
		// IMDSv1"): those lines are for --log-level debug, and never for
		// a completion under the user's prompt. The program's own output
		// goes to stderr, kept above.
		if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			os.Stderr = null
		}
	}
	code := run(ctx, os.Args[1:], os.Stdout, stderr)
	stop()
	stopProfile()
	os.Exit(code)
}

const exitCodesHelp = `Exit codes:
  0  success
  1  error (what failed and what to do is printed on stderr)
  2  usage error (unknown command, flag or argument)
  3  refused by a safety check; nothing was written
  4  snapshot: stored, but a sink connector's group could not be read (named
     on stderr and in the snapshot's unread_groups)
`

func mainUsage(w io.Writer) {
	fmt.Fprintf(w, "offsetkeeper backs up and restores Kafka Connect offsets.\n\nUsage:\n  offsetkeeper [shared flags] <command> [flags] [arguments]\n\nCommands:\n")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'offsetkeeper <command> --help' for a command's flags. The shared flags\n(connection, store, security, log) are accepted by every command, before or\nafter its name. Settings have an environment twin: --foo-bar is\nOFFSETKEEPER_FOO_BAR; per-run choices and safety overrides (--force,\n--connector, --dry-run, --output, ...) come only from the command line.\nShort flags: -o is --output, -n --dry-run, -c --connector, -h --help.\n\n%s", exitCodesHelp)
}

// debugLogging reports whether args or env (the OFFSETKEEPER_LOG_LEVEL
// value) ask for --log-level debug; the command line wins.
func debugLogging(args []string, env string) bool {
	level := env
	for i, a := range args {
		switch {
		case a == "--":
			return level == "debug"
		case a == "--log-level" || a == "-log-level":
			if i+1 < len(args) {
				level = args[i+1]
			}
		case strings.HasPrefix(a, "--log-level=") || strings.HasPrefix(a, "-log-level="):
			_, level, _ = strings.Cut(a, "=")
		}
	}
	return strings.EqualFold(level, "debug")
}

// run is main without the process: end-to-end tests call it as a user
// would run the binary.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// A completion never writes to the terminal the user is typing in.
		return newCLI(stdout, io.Discard, false).execute(ctx, args)
	}
	args = gnuFlags(args)
	c := newCLI(stdout, stderr, wantsJSON(args))
	at, err := leadingFlags(args, c.root.PersistentFlags())
	if err == nil && at == len(args) && at > 0 {
		err = usagef("no command after %s", strings.Join(args, " "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "offsetkeeper: %v\nRun 'offsetkeeper --help' for usage.\n", err)
		return exitUsage
	}
	if len(args) == 0 {
		mainUsage(stderr)
		return exitUsage
	}
	switch args[at] {
	case "-h", "--help":
		mainUsage(stdout)
		return exitOK
	case "--version":
		args = []string{"version"}
	}
	return c.execute(ctx, args)
}

// leadingFlags checks what comes before the command name: only the shared
// flags, or -h, --help or --version alone. It returns the index of the
// command name, len(args) when there is none.
func leadingFlags(args []string, shared *pflag.FlagSet) (int, error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return i, nil
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch a {
		case "-h", "--help", "--version":
			return i, nil
		}
		f := shared.Lookup(name)
		if f == nil || a == "--" || len(name) == 1 {
			return 0, usagef("%s before the command name: only the shared flags (connection, store, security, log) go there; put it after the command", a)
		}
		if hasValue || f.NoOptDefVal != "" {
			continue
		}
		if i+1 == len(args) {
			return 0, usagef("flag needs an argument: %s", a)
		}
		i++
	}
	return len(args), nil
}

// newFlagSet returns the flags of the command info describes, the shared
// ones included, and the command they set. A parse error prints nothing:
// run prints it with a one-line hint, not the whole help.
func newFlagSet(info commandInfo, e *env) (*flag.FlagSet, command) {
	fs := flag.NewFlagSet("offsetkeeper "+info.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	e.g.register(fs)
	cmd := info.new(e)
	cmd.Flags(fs)
	if fs.Lookup("connect-url") == nil {
		e.g.connect.register(fs) // accepted and ignored
		e.g.connectUnused = true
	}
	return fs, cmd
}

// commandUsage is a command's --help.
func commandUsage(w io.Writer, info commandInfo, fs *flag.FlagSet, g *globals) {
	synopsis, description, _ := strings.Cut(info.usage, "\n\n")
	var head strings.Builder
	fmt.Fprintf(&head, "Usage: offsetkeeper %s %s\n\n", info.name, synopsis)
	printExamples(&head, info.name)
	fmt.Fprintf(&head, "%s\n", info.summary)
	fmt.Fprint(w, head.String())
	if description != "" {
		fmt.Fprintln(w)
		// What is left of helpLines once the rest of the head is printed.
		printDescription(w, info.name, description, helpLines-strings.Count(head.String(), "\n")-4)
	}
	fmt.Fprintf(w, "\nShort flags: -h is --help")
	for _, s := range []string{"c", "n", "o"} {
		if fs.Lookup(shortFlags[s]) != nil {
			fmt.Fprintf(w, ", -%s --%s", s, shortFlags[s])
		}
	}
	fmt.Fprintf(w, ".\n\nFlags (each setting also read from OFFSETKEEPER_<FLAG_NAME>):\n")
	unused := printFlags(w, fs, func(name string) bool { return ignoredFlag(info, g, name) })
	if len(unused) > 0 {
		fmt.Fprintf(w, "\nAlso accepted, and ignored by %s: --%s\n", info.name, strings.Join(unused, ", --"))
	}
	fmt.Fprintf(w, "\n%s", exitCodesHelp)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// report prints err once and maps it to an exit code.
func report(stderr io.Writer, name string, err error) int {
	var ue usageError
	switch {
	// An ambiguous ID prefix is a mistake on the command line, whichever
	// command met it: exit 2, as a usage error.
	case errors.As(err, &ue), errors.Is(err, snapshot.ErrAmbiguous):
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\nRun 'offsetkeeper %s --help' for usage.\n", name, err, name)
		return exitUsage
	case errors.Is(err, restore.ErrRefused):
		printError(stderr, name, err)
		return exitRefused
	case errors.Is(err, store.ErrAmbiguousCluster): // as an ambiguous ID: the command line names no one state
		printError(stderr, name, err)
		return exitUsage
	case errors.Is(err, drill.ErrCannotRun): // drill's own exit codes: 2 cannot run
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\n", name, err)
		return exitUsage
	case errors.As(err, new(incompleteError)):
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\n", name, err)
		return exitIncomplete
	default:
		printError(stderr, name, err)
		return exitError
	}
}

// perRun names the flags that are per-run choices, selectors or safety
// overrides. They have no environment twin: a variable such as
// OFFSETKEEPER_FORCE is ignored with a warning, and --help shows them as
// "command line only". A new flag of that sort declares itself by adding
// its name here.
var perRun = map[string]bool{
	"to-offsets-topic": true,
	"force":            true, "allow-other-cluster": true, "dry-run": true,
	"connector": true, "from-file": true, "output": true, "output-dir": true,
	"source-only": true, "sink-only": true, "via": true, "stop-connectors": true,
	"resume": true, "at": true, "from-cluster": true, "live": true, "exit-code": true, "since": true,
	"configmap-name": true, "configmap-namespace": true, "group": true,
	// restore into another cluster (restore_translate.go), demo --migration
	"translate": true, "mm2-source-alias": true, "mm2-target-alias": true, "source-brokers": true,
	"translate-margin": true, "map-topic": true, "topic-prefix": true, "rename-connector": true,
	"migration": true, "empty": true, "standby": true,
	"progress": true, "not-strimzi-managed": true,
	// connector configs (show.go, restore/create.go)
	"show-secrets": true, "create-connectors": true, "include-unowned": true,
	"pin": true, "note": true,
	"list":          true, // drill --list
	"run-by-daemon": true,
	"start":         true, // restore (sink offsets expiry, issue 37)
}

// hiddenFlags are flags for the program's own use (the daemon runs drill
// --run-by-daemon): accepted, but not in --help, the man page or the
// completions. Each is per-run too: no environment twin.
var hiddenFlags = map[string]bool{"run-by-daemon": true}

// envName is the environment twin of a flag: --foo-bar is OFFSETKEEPER_FOO_BAR.
func envName(flagName string) string {
	return "OFFSETKEEPER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its
// environment twin; explicit flags win. Repeatable flags take a
// comma-separated list. Per-run flags (perRun) are never read from the
// environment: ignored lists those whose variable is set, whether or not
// this command has the flag.
func applyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) (ignored []string, err error) {
	for _, name := range slices.Sorted(maps.Keys(perRun)) {
		if _, ok := lookup(envName(name)); ok {
			ignored = append(ignored, name)
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || perRun[f.Name] || err != nil {
			return
		}
		v, ok := lookup(envName(f.Name))
		if !ok {
			return
		}
		if l, isList := f.Value.(*listFlag); isList {
			for _, part := range strings.Split(v, ",") {
				if part = strings.TrimSpace(part); part != "" {
					if e := l.Set(part); e != nil {
						err = fmt.Errorf("environment %s: %w", envName(f.Name), e)
						return
					}
				}
			}
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("environment %s=%q: %w", envName(f.Name), v, e)
		}
	})
	return ignored, err
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}

// printFlags lists the flags GNU style (--name), with their environment
// twin (none for per-run flags) and default. The flags hide says the
// command ignores are not listed: it returns their names.
func printFlags(w io.Writer, fs *flag.FlagSet, hide func(name string) bool) (unused []string) {
	fs.VisitAll(func(f *flag.Flag) {
		if hiddenFlags[f.Name] {
			return
		}
		if hide(f.Name) {
			unused = append(unused, f.Name)
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if s := shortFor(f.Name); s != "" {
			line = "  -" + s + ", --" + f.Name
		}
		if name != "" {
			line += " " + name
		}
		twin := "env " + envName(f.Name)
		if perRun[f.Name] {
			twin = "command line only"
		}
		fmt.Fprintf(w, "%s\n      %s\n      %s", line, usage, twin)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(w, ", default %s", f.DefValue)
		}
		fmt.Fprintln(w)
	})
	return unused
}

// plural returns "1 snapshot" or "2 snapshots".
func plural(n int, one, many string) string { return english.Count(n, one, many) }

// writeJSON writes v as indented JSON, as every --output json does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
