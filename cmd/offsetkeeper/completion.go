package main

import (
	"context"
	"flag"
	"io"
	"strings"
)

// The completion scripts and the man page are generated from the command
// table and each command's flag set, so they list exactly the flags the
// commands parse.

// completionCommand is the completion entry of the command table (main.go).
var completionCommand = commandInfo{
	name:    "completion",
	summary: "print a shell completion script: bash, zsh, fish or powershell",
	usage:   "bash|zsh|fish|powershell",
	noKafka: true,
	new:     func(e *env) command { return &completionCmd{env: e} },
}

type completionCmd struct{ *env }

func (c *completionCmd) Flags(fs *flag.FlagSet) {}

func (c *completionCmd) Run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usagef("want one shell: bash, zsh, fish or powershell (source <(offsetkeeper completion bash))")
	}
	// cobra's scripts: they ask offsetkeeper __complete for the
	// commands, flags and the values complete.go offers.
	root := newCLI(io.Discard, io.Discard, false).root
	switch args[0] {
	case "bash":
		if err := root.GenBashCompletionV2(c.stdout, true); err != nil {
			return err
		}
		_, err := io.WriteString(c.stdout, bashWithoutPackage)
		return err
	case "zsh":
		return root.GenZshCompletion(c.stdout)
	case "fish":
		return root.GenFishCompletion(c.stdout, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(c.stdout)
	}
	return usagef("unknown shell %q: want bash, zsh, fish or powershell", args[0])
}

// shells are the shells completion prints a script for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

// bashWithoutPackage follows cobra's bash script: without the
// bash-completion package (bash --norc, a bare container) that script
// has no _get_comp_words_by_ref to read the line with. This one reads
// COMP_WORDS, joining the --flag=value and host:port that bash splits.
const bashWithoutPackage = `
__offsetkeeper_init_completion()
{
    COMPREPLY=()
    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
        return
    fi
    local i w
    words=()
    for ((i = 0; i <= COMP_CWORD && i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        if ((i > 1)) && [[ $w == [=:] || ${COMP_WORDS[i-1]} == [=:] ]]; then
            words[${#words[@]}-1]+=$w
        else
            words+=("$w")
        fi
    done
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=${words[cword-1]}
}
`

// cliFlag is one flag of a command, as the generators need it.
type cliFlag struct {
	name, usage, valueName, def string
	isBool                      bool
	perRun                      bool // no environment twin
}

// commandFlags returns the flags of the named command, sorted by name, as
// its --help lists them: the shared ones and its own, registered exactly as
// run registers them, less those it accepts and ignores.
func commandFlags(name string) []cliFlag {
	info := commands[name]
	e := &env{stdout: io.Discard, stderr: io.Discard, g: &globals{}}
	fs, _ := newFlagSet(info, e)
	var out []cliFlag
	for _, f := range flagList(fs) {
		if ignoredFlag(info, e.g, f.name) || hiddenFlags[f.name] {
			continue
		}
		out = append(out, f)
	}
	return out
}

func flagList(fs *flag.FlagSet) []cliFlag {
	var out []cliFlag
	fs.VisitAll(func(f *flag.Flag) {
		vn, usage := flag.UnquoteUsage(f)
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		out = append(out, cliFlag{name: f.Name, usage: usage, valueName: vn, def: f.DefValue, isBool: ok && b.IsBoolFlag(), perRun: perRun[f.Name]})
	})
	return out
}

// fileFlag reports whether a flag's value is a local path, for file name
// completion.
func fileFlag(f cliFlag) bool {
	if f.isBool {
		return false
	}
	for _, suffix := range []string{"-file", "-config", "-dir", "tls-ca", "tls-cert", "tls-key"} {
		if strings.HasSuffix(f.name, suffix) {
			return true
		}
	}
	return false
}

func cmpOrStr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
