package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
	return writeManPage(c.stdout)
}

// manDescription is the DESCRIPTION of offsetkeeper(1), in markdown.
const manDescription = `offsetkeeper snapshots the offsets of Kafka Connect source and sink connectors into a blob store,
and restores them after a bad reset, a lost topic or a migration.
Flags may come before or after the arguments.
The shared flags (connection, store, security, log) are accepted by every command, before or after its name.
Settings have an environment twin: **--foo-bar** is **OFFSETKEEPER\_FOO\_BAR**; explicit flags win.
Per-run choices and safety overrides (**--force**, **--connector**, **--dry-run**, **--output**, ...) come only from the command line.
`

const manTail = `# EXIT STATUS
**0**
: success

**1**
: error (what failed and what to do is printed on stderr)

**2**
: usage error (unknown command, flag or argument)

**3**
: refused by a safety check; nothing was written

# SEE ALSO
The README and docs/ of https://github.com/offsetkeeper/offsetkeeper;
**offsetkeeper completion bash|zsh|fish|powershell** prints shell completion.
`

// writeManPage writes offsetkeeper(1), one page for every command, with
// cobra/doc: its description holds a section per command of the table
// (usage, description, flags) and the shared flags; docs/offsetkeeper.1
// is its output.
func writeManPage(w io.Writer) error {
	c := newCLI(io.Discard, io.Discard, false)
	fs := flag.NewFlagSet("shared", flag.ContinueOnError)
	(&globals{}).register(fs)
	shared := flagList(fs)
	var md strings.Builder
	md.WriteString(manDescription + "\n# COMMANDS\n")
	for _, cc := range c.root.Commands() {
		info := c.cmds[cc].info
		fmt.Fprintf(&md, "### offsetkeeper %s\n%s.\n\n", info.name, mdEscape(info.summary))
		fmt.Fprintf(&md, "```\noffsetkeeper %s %s\n```\n\n", info.name, strings.TrimRight(info.usage, "\n"))
		for _, f := range commandFlags(info.name) {
			if fs.Lookup(f.name) == nil {
				writeManFlag(&md, f)
			}
		}
	}
	md.WriteString("# SHARED FLAGS\nEvery command accepts these, before or after its name; a command that does not talk to Kafka ignores the Kafka ones.\n\n")
	for _, f := range shared {
		writeManFlag(&md, f)
	}
	md.WriteString(manTail)
	page := &cobra.Command{
		Use:                   "offsetkeeper [shared flags] COMMAND [flags] [arguments]",
		Short:                 c.root.Short,
		Long:                  md.String(),
		DisableFlagsInUseLine: true,
		DisableAutoGenTag:     true,
	}
	page.Flags().Bool("help", false, "")
	page.Flags().Lookup("help").Hidden = true // no OPTIONS section: the sections above have them
	var out bytes.Buffer
	noDate := time.Time{}
	header := &doc.GenManHeader{Title: "OFFSETKEEPER", Section: "1", Date: &noDate, Source: "offsetkeeper", Manual: "User Commands"}
	if err := doc.GenMan(page, header, &out); err != nil {
		return fmt.Errorf("write man page: %w", err)
	}
	// The page carries no date, so that it changes only with its text.
	_, err := w.Write(bytes.Replace(out.Bytes(), []byte(`"`+noDate.Format("Jan 2006")+`"`), []byte(`""`), 1))
	return err
}

// writeManFlag writes a flag as a definition: -c, --connector NAME, then
// its usage and its environment twin (or "Command line only") and default.
func writeManFlag(w io.Writer, f cliFlag) {
	head := "**--" + f.name + "**"
	if s := shortFor(f.name); s != "" {
		head = "**-" + s + "**, " + head
	}
	if !f.isBool {
		head += " *" + mdEscape(cmpOrStr(f.valueName, "value")) + "*"
	}
	twin := "Environment **" + mdEscape(envName(f.name)) + "**"
	if f.perRun {
		twin = "Command line only"
	}
	if f.def != "" && f.def != "false" && f.def != "0" && f.def != "[]" {
		twin += "; default **" + mdEscape(f.def) + "**"
	}
	fmt.Fprintf(w, "%s\n: %s  \n%s.\n\n", head, mdEscape(f.usage), twin)
}

// mdEscape escapes the characters markdown would read as markup.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]<>#|~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
