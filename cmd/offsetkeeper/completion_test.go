package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateMan = flag.Bool("update", false, "rewrite docs/offsetkeeper.1")

// bashComplete sources script in bash, in dir, and completes words (the
// last is the word under the cursor) as bash does on <TAB>.
func bashComplete(t *testing.T, dir, script string, words ...string) []string {
	t.Helper()
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, "'"+w+"'")
	}
	prog := "source " + script + "\ncomplete -p offsetkeeper >&2\n" +
		"COMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
		"_offsetkeeper\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "complete -o default -F _offsetkeeper offsetkeeper") {
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
		{[]string{"offsetkeeper", "snapshot", "--worker-config", "offsetkeeper.b"}, []string{"offsetkeeper.bash"}},
		{[]string{"offsetkeeper", "snapshot", "--brokers", ""}, nil}, // a value, not a flag
	} {
		got := bashComplete(t, dir, script, tt.words...)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q<TAB>: got %q, want %q", strings.Join(tt.words, " "), got, tt.want)
		}
	}
}

// TestCompletionZshFish: the zsh and fish scripts name every command and
// each command's flags; a shell that is installed checks the syntax.
func TestCompletionZshFish(t *testing.T) {
	for _, sh := range []string{"zsh", "fish"} {
		code, out, errs := runCLI(t, "completion", sh)
		if code != exitOK {
			t.Fatalf("completion %s: exit %d: %s", sh, code, errs)
		}
		for _, name := range commandNames() {
			if !strings.Contains(out, name) {
				t.Errorf("%s script does not name command %s", sh, name)
			}
		}
		for _, f := range commandFlags("restore") {
			want := "'--" + f.name // zsh: '--dry-run[...]'
			if sh == "fish" {
				want = "-l " + f.name + " "
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s script does not name restore --%s", sh, f.name)
			}
		}
		if path, err := exec.LookPath(sh); err == nil {
			script := filepath.Join(t.TempDir(), "offsetkeeper."+sh)
			if err := os.WriteFile(script, []byte(out), 0o600); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command(path, "-n", script).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh, err, b)
			}
		}
	}
	if code, _, errs := runCLI(t, "completion", "powershell"); code != exitUsage || !strings.Contains(errs, "bash, zsh or fish") {
		t.Errorf("completion powershell: exit %d: %s", code, errs)
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
		if !strings.Contains(out, `.SS "offsetkeeper `+name) {
			t.Errorf("man page has no section for %s", name)
		}
		for _, f := range commandFlags(name) {
			if !strings.Contains(out, `\fB\-\-`+roff(f.name)+`\fR`) {
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
