// Command offsetkeeper backs up and restores Kafka Connect offsets.
//
// Each subcommand lives in its own file as a type with a Run(ctx, args)
// method; this file holds the command table, the flags every command shares
// and the mapping of errors to exit codes. Nothing below main calls os.Exit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/offsetkeeper/offsetkeeper/restore"
)

// Exit codes, documented in --help and the README.
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitRefused = 3
)

// usageError marks a command-line mistake (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// A command refused by a safety check (exit 3) returns an error matching
// restore.ErrRefused (a *restore.RefusedError or one Run wraps).

// command is one subcommand. Flags registers its flags on fs (the shared
// ones are already there); Run gets the positional arguments.
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
	// noKafka commands do not register the Kafka flags.
	noKafka bool
}

// commands is the command table; each command's file registers itself in
// an init function with register.
var commands = map[string]commandInfo{}

func register(c commandInfo) { commands[c.name] = c }

// env is what every command gets: output streams and the shared flags.
type env struct {
	stdout, stderr io.Writer
	g              *globals
	log            *slog.Logger
}

func main() {
	stopProfile, err := startProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "offsetkeeper:", err)
		os.Exit(exitError)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	stopProfile()
	os.Exit(code)
}

const exitCodesHelp = `Exit codes:
  0  success
  1  error (what failed and what to do is printed on stderr)
  2  usage error (unknown command, flag or argument)
  3  refused by a safety check; nothing was written
`

func mainUsage(w io.Writer) {
	fmt.Fprintf(w, "offsetkeeper backs up and restores Kafka Connect offsets.\n\nUsage:\n  offsetkeeper <command> [flags] [arguments]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'offsetkeeper <command> --help' for a command's flags. Every flag has an\nenvironment twin: --foo-bar is OFFSETKEEPER_FOO_BAR.\n\n%s", exitCodesHelp)
}

// run is main without the process: end-to-end tests call it as a user
// would run the binary.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		mainUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		mainUsage(stdout)
		return exitOK
	case "--version", "-version":
		args = []string{"version"}
	}
	info, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "offsetkeeper: unknown command %q\n\n", args[0])
		mainUsage(stderr)
		return exitUsage
	}
	e := &env{stdout: stdout, stderr: stderr, g: &globals{}}
	fs := flag.NewFlagSet("offsetkeeper "+info.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.g.register(fs, !info.noKafka)
	cmd := info.new(e)
	cmd.Flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: offsetkeeper %s %s\n\n%s\n\nFlags (each also read from OFFSETKEEPER_<FLAG_NAME>):\n", info.name, info.usage, info.summary)
		printFlags(stdout, fs)
		fmt.Fprintf(stdout, "\n%s", exitCodesHelp)
	}
	positional, err := parseInterleaved(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return exitOK // fs.Parse has printed the usage
	}
	if err == nil {
		err = applyEnv(fs, os.LookupEnv)
	}
	if err == nil {
		e.log, err = e.g.logger(stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\nRun 'offsetkeeper %s --help' for usage.\n", info.name, err, info.name)
		return exitUsage
	}
	if err := cmd.Run(ctx, positional); err != nil {
		return report(stderr, info.name, err)
	}
	return exitOK
}

// report prints err once and maps it to an exit code.
func report(stderr io.Writer, name string, err error) int {
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\nRun 'offsetkeeper %s --help' for usage.\n", name, err, name)
		return exitUsage
	case errors.Is(err, restore.ErrRefused):
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\n", name, err)
		return exitRefused
	default:
		fmt.Fprintf(stderr, "offsetkeeper %s: %v\n", name, err)
		return exitError
	}
}

// parseInterleaved parses flags placed before, between or after positional
// arguments. "--" ends flag parsing.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// fs.Parse stops at the first non-flag, or after "--".
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// envName is the environment twin of a flag: --foo-bar is OFFSETKEEPER_FOO_BAR.
func envName(flagName string) string {
	return "OFFSETKEEPER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its
// environment twin; explicit flags win. Repeatable flags take a
// comma-separated list.
func applyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
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
	return err
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
// twin and default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n      %s\n      env %s", line, usage, envName(f.Name))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			fmt.Fprintf(w, ", default %s", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
