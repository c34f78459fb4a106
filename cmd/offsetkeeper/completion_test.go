package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var updateMan = flag.Bool("update", false, "rewrite docs/offsetkeeper.1")

// bashComplete sources script in bash, in dir, and completes words (the
// last is the word under the cursor) as bash does on <TAB>, with this test
// binary as offsetkeeper: the script asks it (__complete).
func bashComplete(t *testing.T, dir, script string, words ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, "'"+w+"'")
	}
	prog := "offsetkeeper() { OFFSETKEEPER_TEST_AS_MAIN=1 " + strconv.Quote(self) + " \"$@\"; }\n" +
		"source " + script + "\ncomplete -p offsetkeeper >&2\n" +
		"COMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
		"__start_offsetkeeper 2>/dev/null\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\n%s", err, errb.String())
	}
	// -o default: where offsetkeeper offers nothing and does not forbid
	// it (a file flag), bash completes file names.
	if !strings.Contains(errb.String(), "complete -o default -F __start_offsetkeeper offsetkeeper") {
		t.Errorf("complete -p offsetkeeper: %q", errb.String())
	}
	return strings.Fields(out.String())
}

// TestCompletionBash: the script bash sources completes commands, a
// command's own flags, and file names after a file flag.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	code, out, errs := runCLI(t, "completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "offsetkeeper.bash")
	if err := os.WriteFile(script, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, b)
	}
	for _, tt := range []struct {
		words []string
		want  []string
	}{
		{[]string{"offsetkeeper", "res"}, []string{"restore"}},
		{[]string{"offsetkeeper", "s"}, []string{"serve", "show", "snapshot"}},
		{[]string{"offsetkeeper", "restore", "--dr"}, []string{"--dry-run"}},
		{[]string{"offsetkeeper", "restore", "latest", "--stop-c"}, []string{"--stop-connectors"}},
		{[]string{"offsetkeeper", "--store", "file:///x", "rest"}, []string{"restore"}},
		{[]string{"offsetkeeper", "list", "--dr"}, nil}, // list has no --dry-run
		{[]string{"offsetkeeper", "completion", "z"}, []string{"zsh"}},
		{[]string{"offsetkeeper", "snapshot", "--brokers", ""}, nil}, // a value, not a flag
	} {
		got := bashComplete(t, dir, script, tt.words...)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q<TAB>: got %q, want %q", strings.Join(tt.words, " "), got, tt.want)
		}
	}
	// After a file flag offsetkeeper offers nothing and leaves file names
	// to bash (-o default); after any other value flag it forbids them.
	if got, d := completeDirective(t, "snapshot", "--worker-config", "offsetkeeper.b"); len(got) != 0 || d&cobra.ShellCompDirectiveNoFileComp != 0 {
		t.Errorf("snapshot --worker-config offsetkeeper.b<TAB>: %q, directive %d: want file names", got, d)
	}
	if _, d := completeDirective(t, "snapshot", "--brokers", ""); d&cobra.ShellCompDirectiveNoFileComp == 0 {
		t.Errorf("snapshot --brokers <TAB>: directive %d: want no file names", d)
	}
}

// TestCompletionZshFish: the zsh, fish and PowerShell scripts ask
// offsetkeeper __complete, which names every command and each command's
// flags; a shell that is installed checks the syntax.
func TestCompletionZshFish(t *testing.T) {
	for _, sh := range []string{"zsh", "fish", "powershell"} {
		code, out, errs := runCLI(t, "completion", sh)
		if code != exitOK {
			t.Fatalf("completion %s: exit %d: %s", sh, code, errs)
		}
		if !strings.Contains(out, cobra.ShellCompRequestCmd) {
			t.Errorf("%s script does not call offsetkeeper %s", sh, cobra.ShellCompRequestCmd)
		}
		if path, err := exec.LookPath(sh); err == nil && sh != "powershell" {
			script := filepath.Join(t.TempDir(), "offsetkeeper."+sh)
			if err := os.WriteFile(script, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(path, "-n", script).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh, err, b)
			}
		}
	}
	got := complete(t, "")
	for _, name := range commandNames() {
		if !slices.Contains(got, name) {
			t.Errorf("__complete does not offer command %s: %q", name, got)
		}
	}
	got = complete(t, "restore", "--")
	for _, f := range commandFlags("restore") {
		if !slices.Contains(got, "--"+f.name) {
			t.Errorf("__complete does not offer restore --%s", f.name)
		}
	}
	if code, _, errs := runCLI(t, "completion", "tcsh"); code != exitUsage || !strings.Contains(errs, "bash, zsh, fish or powershell") {
		t.Errorf("completion tcsh: exit %d: %s", code, errs)
	}
}

// TestManPage: docs/offsetkeeper.1 is what 'offsetkeeper man' prints
// (refresh with go test -run TestManPage -update), and it documents every
// command and flag.
func TestManPage(t *testing.T) {
	code, out, errs := runCLI(t, "man")
	if code != exitOK {
		t.Fatalf("man: exit %d: %s", code, errs)
	}
	for _, name := range commandNames() {
		if !strings.Contains(out, ".SS offsetkeeper "+name+"\n") {
			t.Errorf("man page has no section for %s", name)
		}
		for _, f := range commandFlags(name) {
			if !strings.Contains(out, `\fB--`+f.name+`\fP`) {
				t.Errorf("man page does not document %s --%s", name, f.name)
			}
		}
	}
	golden := filepath.Join("..", "..", "docs", "offsetkeeper.1")
	if *updateMan {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != out {
		t.Errorf("docs/offsetkeeper.1 is stale: run go test ./cmd/offsetkeeper -run TestManPage -update")
	}
	if path, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command(path, "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = strings.NewReader(out)
		if b, err := cmd.CombinedOutput(); err != nil || len(b) > 0 {
			t.Errorf("groff: %v\n%s", err, b)
		}
	}
}
