package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line runs on cobra and pflag, built from the command table:
// each entry of commands becomes a cobra.Command whose flags are those its
// command registers on a standard library flag.FlagSet (the shared ones
// included), converted to pflag, and whose RunE calls the command's Run.
// A command or a flag added the old way needs nothing more here:
//   - a command: a type with Flags(fs *flag.FlagSet) and Run(ctx, args),
//     its commandInfo, its name in commands (main.go) and its examples
//     (examples.go); idArgs (complete.go) if it takes snapshot IDs;
//   - a flag: registered on fs in Flags (any flag.Value; IsBoolFlag makes
//     it a bool), named in perRun if it is a per-run choice (no env twin),
//     in shortFlags for a one-letter spelling. Its value completes as
//     fileFlag, --connector and --group say, else with nothing.

// cli is one run of the command line: the cobra tree and what the command
// that ran returned.
type cli struct {
	root   *cobra.Command
	stdout *countingWriter
	stderr io.Writer
	// help is where --help goes (the raw stdout: a help is not a
	// command's output for the JSON error object).
	help io.Writer
	// code is the exit code of the command that ran.
	code int
	// jsonOut: the line asks for --output json.
	jsonOut bool
	// cmds maps each cobra command to its table entry and state.
	cmds map[*cobra.Command]*cliCommand
}

// cliCommand is a command of the table, ready to run once.
type cliCommand struct {
	info commandInfo
	env  *env
	fs   *flag.FlagSet
	cmd  command
}

// newCLI builds the cobra tree of the command table for one run.
func newCLI(stdout, stderr io.Writer, jsonOut bool) *cli {
	c := &cli{stdout: &countingWriter{w: stdout}, stderr: stderr, help: stdout, jsonOut: jsonOut, cmds: map[*cobra.Command]*cliCommand{}}
	c.root = &cobra.Command{
		Use:           "offsetkeeper",
		Short:         "back up and restore Kafka Connect offsets",
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Only an unknown command gets here: run has answered the line
		// without one.
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("no command")
			}
			return unknownCommand(c.root, args[0])
		},
		// Our own completion command prints the scripts.
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
		SuggestionsMinimumDistance: 2,
	}
	c.root.SetOut(stdout)
	c.root.SetErr(stderr)
	c.root.SetHelpFunc(func(*cobra.Command, []string) { mainUsage(c.help) })
	// help restore is restore --help; help alone, or anything else, the
	// main usage.
	c.root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "print the help of a command",
		Args:  cobra.ArbitraryArgs,
		Run: func(_ *cobra.Command, args []string) {
			if cc, _, err := c.root.Find(args); len(args) == 1 && err == nil && cc != c.root {
				cc.HelpFunc()(cc, nil)
				return
			}
			mainUsage(c.help)
		},
	})
	c.root.SetFlagErrorFunc(func(cc *cobra.Command, err error) error { return describeFlagError(cc, err) })
	// The shared flags before the command name: cobra finds the command
	// past them (it must know which take a value), and the command's own
	// copies, registered with its flags, get their values.
	shared := flag.NewFlagSet("offsetkeeper", flag.ContinueOnError)
	probe := &globals{}
	probe.register(shared)
	probe.connect.register(shared)
	addGoFlags(c.root.PersistentFlags(), shared, func(string) bool { return false })
	for _, name := range commandNames() {
		c.add(commands[name])
	}
	return c
}

// add makes the cobra command of info.
func (c *cli) add(info commandInfo) {
	e := &env{stdout: c.stdout, stderr: c.stderr, g: &globals{command: info.name, stderr: c.stderr}}
	fs, cmd := newFlagSet(info, e)
	synopsis, _, _ := strings.Cut(info.usage, "\n\n")
	cc := &cobra.Command{
		Use:                   strings.TrimSpace(info.name + " " + synopsis),
		Short:                 info.summary,
		Example:               strings.Join(examples[info.name], "\n"),
		Args:                  cobra.ArbitraryArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cc *cobra.Command, args []string) error {
			c.code = c.runCommand(cc, args)
			return nil
		},
	}
	addGoFlags(cc.Flags(), fs, func(name string) bool { return ignoredFlag(info, e.g, name) })
	cc.SetHelpFunc(func(*cobra.Command, []string) { commandUsage(c.help, info, fs, e.g) })
	c.cmds[cc] = &cliCommand{info: info, env: e, fs: fs, cmd: cmd}
	c.registerCompletions(cc)
	c.root.AddCommand(cc)
}

// addGoFlags adds the flags of fs to pfs, as pflag's AddGoFlagSet does,
// with the one-letter spellings of shortFlags. The flags hidden says the
// command accepts and ignores are hidden: not completed, not documented.
func addGoFlags(pfs *pflag.FlagSet, fs *flag.FlagSet, hidden func(name string) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		pf := pflag.PFlagFromGoFlag(f)
		pf.Shorthand = shortFor(f.Name)
		_, pf.Usage = flag.UnquoteUsage(f) // the `NAME` of the usage is for --help
		pf.Hidden = hidden(f.Name) || hiddenFlags[f.Name]
		pfs.AddFlag(pf)
	})
}

// ignoredFlag reports whether the command of info accepts and ignores the
// named flag: a Kafka flag of a command that does not use Kafka, a Connect
// flag of one that does not use Connect.
func ignoredFlag(info commandInfo, g *globals, name string) bool {
	return (info.noKafka && kafkaFlag(name)) || (g.connectUnused && connectFlag(name))
}

// runCommand runs a parsed command: the environment twins, the logger,
// then its Run; it returns the exit code.
func (c *cli) runCommand(cc *cobra.Command, args []string) int {
	cm := c.cmds[cc]
	info, e := cm.info, cm.env
	markGoFlags(cm.fs, cc.Flags())
	e.g.noteCmdLine(cm.fs)
	ignored, err := applyEnv(cm.fs, os.LookupEnv)
	for _, name := range ignored {
		fmt.Fprintf(c.stderr, "offsetkeeper %s: warning: %s is ignored: --%s is a per-run choice and comes only from the command line\n", info.name, envName(name), name)
	}
	if err == nil {
		e.log, err = e.g.logger(c.stderr)
	}
	if err != nil {
		return c.usage(info.name, err)
	}
	routeLibraryLog(e.log)
	if err := cm.cmd.Run(cc.Context(), args); err != nil {
		err = withStoreSettings(err, e.g)
		code := report(c.stderr, info.name, err)
		if c.jsonOut {
			printJSONError(c.stdout, info.name, code, err)
		}
		return code
	}
	return exitOK
}

// usage prints a usage error of the named command with its one-line hint
// (and the JSON error object for --output json); it returns exit 2.
func (c *cli) usage(name string, err error) int {
	fmt.Fprintf(c.stderr, "offsetkeeper %s: %v\nRun 'offsetkeeper %s --help' for usage.\n", name, err, name)
	if c.jsonOut {
		printJSONError(c.stdout, name, exitUsage, err)
	}
	return exitUsage
}

// execute runs args (the line after the program name, the command name
// included) and returns the exit code.
func (c *cli) execute(ctx context.Context, args []string) int {
	c.root.SetArgs(append([]string{}, args...))
	cc, err := c.root.ExecuteContextC(ctx)
	var unknown unknownCommandError
	switch {
	case errors.Is(err, pflag.ErrHelp):
		cc.HelpFunc()(cc, nil)
		return exitOK
	case errors.As(err, &unknown):
		fmt.Fprintf(c.stderr, "offsetkeeper: %v\n%s", err, unknownCommandHint(unknown.name))
		return exitUsage
	case err != nil && cc == c.root:
		fmt.Fprintf(c.stderr, "offsetkeeper: %v\nRun 'offsetkeeper --help' for usage.\n", err)
		return exitUsage
	case err != nil:
		return c.usage(cc.Name(), err)
	}
	return c.code
}

// markGoFlags records in fs the flags pflag set, as if fs had parsed them:
// fs.Visit (explicit flags, applyEnv) sees them. The values are set already.
func markGoFlags(fs *flag.FlagSet, pfs *pflag.FlagSet) {
	pfs.Visit(func(pf *pflag.Flag) {
		f := fs.Lookup(pf.Name)
		if f == nil {
			return // --help
		}
		v := f.Value
		f.Value = setValue{}
		_ = fs.Set(f.Name, "")
		f.Value = v
	})
}

// setValue is a flag.Value that ignores what it is set to.
type setValue struct{}

func (setValue) String() string   { return "" }
func (setValue) Set(string) error { return nil }

// unknownCommandError is a command name not in the table.
type unknownCommandError struct{ name, suggestion string }

func (e unknownCommandError) Error() string {
	if e.suggestion != "" {
		return fmt.Sprintf("unknown command %q (did you mean %s?)", e.name, e.suggestion)
	}
	return fmt.Sprintf("unknown command %q", e.name)
}

func unknownCommand(root *cobra.Command, name string) error {
	e := unknownCommandError{name: name}
	if s := root.SuggestionsFor(name); len(s) > 0 {
		e.suggestion = strings.Join(s, " or ")
	}
	return e
}

// describeFlagError rewords pflag's error for an unknown flag ("unknown
// flag: --dry-rn") GNU style, with the closest flag name when one is close.
func describeFlagError(cc *cobra.Command, err error) error {
	if h := cc.Flags().Lookup("help"); h != nil && h.Changed {
		return pflag.ErrHelp // --help before the mistake: the help, as the flag package did
	}
	msg := err.Error()
	var name string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		name = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		// unknown shorthand flag: 'x' in -xyz
		if _, arg, ok := strings.Cut(msg, " in -"); ok {
			name = arg
		}
	default:
		return usageError{msg}
	}
	best, bestD := "", 3
	cc.Flags().VisitAll(func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < bestD && f.Name != "help" && !f.Hidden {
			best, bestD = f.Name, d
		}
	})
	if best != "" {
		return usagef("unknown flag --%s (did you mean --%s?)", name, best)
	}
	return usagef("unknown flag --%s", name)
}

// commandNames returns the command table's names, sorted.
func commandNames() []string { return slices.Sorted(maps.Keys(commands)) }
