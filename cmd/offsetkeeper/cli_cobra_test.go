package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// What could break moving onto pflag: it reads -store as the shorthands
// -s -t -o -r -e, where the flag package took it as --store. gnuFlags
// keeps the single-dash spelling of a long flag, and leaves a flag's value
// alone even when it looks like a flag.
func TestSingleDashLongFlags(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "list", "-store", dir, "-output=json")
	if code != exitOK || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list -store DIR -output=json: exit %d: %q %s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "list", "-help"); code != exitOK || !strings.HasPrefix(out, "Usage: offsetkeeper list") {
		t.Errorf("list -help: exit %d: %.60q", code, out)
	}
	// The value of --connector or -c stays as written, as does what follows "--".
	in := []string{"-store", "x", "--connector", "-store", "-c", "-dry-run", "-n", "--", "-dry-run"}
	if got := gnuFlags(in); strings.Join(got, " ") != "--store x --connector -store -c -dry-run -n -- -dry-run" {
		t.Errorf("gnuFlags: %q", got)
	}
}

// An unknown command names the closest one (cobra's SuggestionsFor) on
// the line that says it is unknown; the hint stays the second line.
func TestUnknownCommandSuggests(t *testing.T) {
	code, out, errs := runCLI(t, "lsit", "--store", filepath.Join(t.TempDir(), "x"))
	want := "offsetkeeper: unknown command \"lsit\" (did you mean list?)\nRun 'offsetkeeper --help' for the commands.\n"
	if code != exitUsage || out != "" || errs != want {
		t.Errorf("lsit: exit %d, stdout %q, stderr %q, want %q", code, out, errs, want)
	}
	// The words of unknown.go keep their pointers.
	if code, _, errs := runCLI(t, "rollback"); code != exitUsage || !strings.Contains(errs, "'offsetkeeper list --kind undo'") {
		t.Errorf("rollback: exit %d: %s", code, errs)
	}
}

// Every command of the table is a cobra command with its flags, the
// -c -n -o shorthands where it has the long flag, and its flags hidden
// (not completed) where it ignores them.
func TestCobraTreeFromTable(t *testing.T) {
	c := newCLI(nil, nil, false)
	if len(c.cmds) != len(commands) {
		t.Fatalf("%d cobra commands for %d in the table", len(c.cmds), len(commands))
	}
	for cc, cm := range c.cmds {
		for _, f := range flagList(cm.fs) {
			pf := cc.Flags().Lookup(f.name)
			if pf == nil {
				t.Errorf("%s: no --%s", cc.Name(), f.name)
				continue
			}
			if pf.Shorthand != shortFor(f.name) {
				t.Errorf("%s --%s: shorthand %q, want %q", cc.Name(), f.name, pf.Shorthand, shortFor(f.name))
			}
			if pf.Hidden != (ignoredFlag(cm.info, cm.env.g, f.name) || hiddenFlags[f.name]) {
				t.Errorf("%s --%s: hidden %v", cc.Name(), f.name, pf.Hidden)
			}
		}
	}
}
