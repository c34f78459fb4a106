package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
)

// TestMain lets the test binary stand in for offsetkeeper in a real shell
// (the completion scripts call it): with OFFSETKEEPER_TEST_AS_MAIN set it
// runs the command line it was given. Run as a daemon's drill child
// (os.Executable, drill ... --run-by-daemon), it is the program: main,
// with its signal handling.
func TestMain(m *testing.M) {
	if os.Getenv("OFFSETKEEPER_TEST_AS_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && (os.Args[1] == "drill" || os.Args[1] == "verify") && slices.Contains(os.Args, "--run-by-daemon") {
		main()
	}
	os.Exit(m.Run())
}

// storeWithSnapshots takes two snapshots of the demo cluster into a new
// local store and returns the store, the brokers and the IDs, oldest first.
func storeWithSnapshots(t *testing.T) (store, brokers string, ids []string) {
	t.Helper()
	brokers, _, _ = demoCluster(t, connectdemo.DefaultSpec())
	store = filepath.Join(t.TempDir(), "store")
	for range 2 {
		code, out, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", store)
		if code != exitOK {
			t.Fatalf("snapshot: exit %d: %s", code, errs)
		}
		ids = append(ids, lastLine(out))
	}
	return store, brokers, ids
}

func complete(t *testing.T, words ...string) []string {
	t.Helper()
	got, _ := completeDirective(t, words...)
	return got
}

// completeDirective runs cobra's __complete as the scripts do and returns
// the candidates (one a line, a description after a tab) and the
// directive (the last line, ":4"); a completion writes nothing on stderr.
func completeDirective(t *testing.T, words ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append([]string{cobra.ShellCompRequestCmd}, words...), &out, &errb); code != exitOK || errb.Len() > 0 {
		t.Fatalf("%s %q: exit %d, stderr %q", cobra.ShellCompRequestCmd, words, code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("%s %q: no directive in %q", cobra.ShellCompRequestCmd, words, out.String())
	}
	var got []string
	for _, l := range lines[:len(lines)-1] {
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got, cobra.ShellCompDirective(d)
}

// TestCompleteFromStore: the hidden entry point the scripts call offers
// latest and the stored IDs where a command takes an ID, the latest
// snapshot's connectors after --connector (-c, --connector=) and its sink
// groups after --group, from the store named on the line or in the
// environment; nothing where no value is wanted, nor from a store it
// cannot read.
func TestCompleteFromStore(t *testing.T) {
	store, _, ids := storeWithSnapshots(t)
	refs := []string{"latest", ids[1], ids[0]}
	has := func(got []string, want ...string) bool {
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	}
	for _, tt := range []struct {
		words []string
		want  []string // exactly, or (contains) at least
		exact bool
	}{
		{[]string{"restore", "--store", store, ""}, refs, true},
		{[]string{"--store", store, "restore", ""}, refs, true},
		{[]string{"show", "--store=" + store, "lat"}, []string{"latest"}, true},
		{[]string{"restore", "--store", store, ids[0][:20]}, []string{ids[0]}, true},
		{[]string{"restore", "--store", store, "latest", ""}, nil, true}, // one ID only
		{[]string{"diff", "--store", store, "latest", ""}, refs, true},
		{[]string{"verify", "--store", store, ids[0], ids[1], ""}, refs, true},
		{[]string{"restore", "--store", store, "latest", "--connector", ""}, []string{"inventory-connector", "es-sink-orders", "payments-cdc"}, false},
		{[]string{"restore", "--store", store, "latest", "-c", "inv"}, []string{"inventory-connector"}, true},
		{[]string{"show", "--store", store, "latest", "--connector=inv"}, []string{"inventory-connector"}, true},
		{[]string{"restore", "--store", store, "--group", "archive"}, []string{"archive-loader"}, true},
		{[]string{"restore", "--store", store, "--dry-run", "--output", ""}, nil, true},
		{[]string{"restore", "--store", store, "--dr"}, []string{"--dry-run"}, true}, // flags: cobra's, by the same protocol
		{[]string{"list", "--store", store, ""}, nil, true},
		{[]string{"restore", "--store", filepath.Join(t.TempDir(), "none"), ""}, nil, true},
		{[]string{"nosuch", ""}, nil, true},
	} {
		got := complete(t, tt.words...)
		if tt.exact && strings.Join(got, " ") != strings.Join(tt.want, " ") || !tt.exact && !has(got, tt.want...) {
			t.Errorf("%q: got %q, want %q", tt.words, got, tt.want)
		}
	}
	t.Setenv("OFFSETKEEPER_STORE", store)
	if got := complete(t, "restore", ""); strings.Join(got, " ") != strings.Join(refs, " ") {
		t.Errorf("store from OFFSETKEEPER_STORE: got %q, want %q", got, refs)
	}
	// A bucket that does not answer: nothing, and no error on the terminal.
	if got := complete(t, "restore", "--store", "s3://offsetkeeper?endpoint=http://127.0.0.1:1&region=x&s3ForcePathStyle=true", ""); len(got) != 0 {
		t.Errorf("unreachable store: got %q", got)
	}
}

// TestCompletionBashFromStore: in real bash, after source <(offsetkeeper
// completion bash), restore <TAB> offers latest and the stored IDs, and
// --connector <TAB> the connectors of the latest snapshot.
func TestCompletionBashFromStore(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash here")
	}
	store, _, ids := storeWithSnapshots(t)
	_, script, _ := runCLI(t, "completion", "bash")
	dir := t.TempDir()
	path := filepath.Join(dir, "offsetkeeper.bash")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tab := func(words ...string) []string {
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "offsetkeeper() { OFFSETKEEPER_TEST_AS_MAIN=1 " + strconv.Quote(self) + " \"$@\"; }\n" +
			"source <(offsetkeeper completion bash)\n" +
			"COMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
			"__start_offsetkeeper\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "OFFSETKEEPER_STORE="+store)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash: %v", err)
		}
		return strings.Fields(string(out))
	}
	if got, want := tab("offsetkeeper", "restore", ""), []string{"latest", ids[1], ids[0]}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("restore <TAB>: got %q, want %q", got, want)
	}
	// pin and unpin take several IDs: each of them completes.
	for _, words := range [][]string{{"pin", ""}, {"pin", ids[0], ""}, {"pin", "--note", "x", ids[1], ""}, {"unpin", ""}} {
		if got, want := tab(append([]string{"offsetkeeper"}, words...)...), []string{"latest", ids[1], ids[0]}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s<TAB>: got %q, want %q", strings.Join(words, " "), got, want)
		}
	}
	if got := tab("offsetkeeper", "restore", "latest", "--connector", "inv"); strings.Join(got, " ") != "inventory-connector" {
		t.Errorf("restore latest --connector inv<TAB>: got %q", got)
	}
	// bash splits --connector=inv at "=": the script joins it again.
	if got := tab("offsetkeeper", "restore", "latest", "--connector", "=", "inv"); strings.Join(got, " ") != "inventory-connector" {
		t.Errorf("restore latest --connector=inv<TAB>: got %q", got)
	}
	if got := tab("offsetkeeper", "restore", "latest", "--connector", ""); !slices.Contains(got, "payments-cdc") || len(got) != 16 {
		t.Errorf("restore latest --connector <TAB>: got %q, want the 16 connectors", got)
	}
	if got := tab("offsetkeeper", "restore", "latest", "-o", ""); len(got) != 0 {
		t.Errorf("restore latest -o <TAB>: got %q, want nothing", got)
	}
	if got := tab("offsetkeeper", "list", "-"); !slices.Contains(got, "-o") || !slices.Contains(got, "--output") {
		t.Errorf("list -<TAB>: got %q, want -o and --output", got)
	}
}

// TestShortFlagsAndAmbiguousPrefix: -o, -n, -c and -h are --output,
// --dry-run, --connector and --help; an ambiguous ID prefix is a usage
// error (exit 2) in every command that takes an ID.
func TestShortFlagsAndAmbiguousPrefix(t *testing.T) {
	store, brokers, ids := storeWithSnapshots(t)
	code, out, errs := runCLI(t, "list", "--store", store, "-o", "json")
	var infos []map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &infos) != nil || len(infos) != 2 {
		t.Fatalf("list -o json: exit %d: %s %s", code, out, errs)
	}
	if code, out, errs = runCLI(t, "restore", "latest", "-n", "-c", "inventory-connector", "-o=json", "--brokers", brokers, "--store", store); code != exitOK || !strings.Contains(out, `"dry_run": true`) {
		t.Errorf("restore -n -c NAME -o=json: exit %d: %s %s", code, out, errs)
	}
	if code, out, _ = runCLI(t, "restore", "-h"); code != exitOK || !strings.Contains(out, "-n, --dry-run") || !strings.Contains(out, "-c, --connector") {
		t.Errorf("restore -h: exit %d: %s", code, out)
	}
	// -n after --connector is its value, not --dry-run.
	if code, _, errs = runCLI(t, "show", "latest", "--connector", "-n", "--store", store); code == exitOK || !strings.Contains(errs, `"-n"`) {
		t.Errorf("show --connector -n: exit %d: %s", code, errs)
	}
	prefix := ids[0][:4] // both IDs start with the year
	for _, args := range [][]string{
		{"restore", prefix, "--dry-run", "--brokers", brokers},
		{"show", prefix},
		{"diff", prefix, ids[1]},
		{"verify", prefix},
		{"pin", prefix},
		{"unpin", prefix},
	} {
		code, _, errs := runCLI(t, append(args, "--store", store)...)
		if code != exitUsage || !strings.Contains(errs, "prefix matches 2 snapshots") {
			t.Errorf("%s with an ambiguous prefix: exit %d, want %d: %s", args[0], code, exitUsage, errs)
		}
	}
	// The refused pin wrote nothing.
	if _, out, _ := runCLI(t, "list", "--store", store, "-o", "json"); strings.Contains(out, `"pin"`) {
		t.Errorf("pin with an ambiguous prefix pinned a snapshot:\n%s", out)
	}
}

// TestHelpExamples: every command's --help shows two or three examples
// within its first 15 lines, and at most 50 lines come before its flags.
func TestHelpExamples(t *testing.T) {
	for _, name := range commandNames() {
		code, out, _ := runCLI(t, name, "--help")
		if code != exitOK {
			t.Errorf("%s --help: exit %d", name, code)
			continue
		}
		lines := strings.Split(out, "\n")
		head := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Flags (") })
		if head < 0 || head > 50 {
			t.Errorf("%s --help: %d lines before the flags, want at most 50", name, head)
		}
		at := slices.Index(lines, "Examples:")
		n := 0
		for at >= 0 && at+1+n < len(lines) && strings.HasPrefix(lines[at+1+n], "  ") {
			n++
		}
		if at < 0 || at+n >= 15 || n < 2 || n > 3 {
			t.Errorf("%s --help: %d examples ending on line %d, want 2 or 3 within the first 15 lines:\n%s", name, n, at+n+1, strings.Join(lines[:min(len(lines), 16)], "\n"))
		}
		for _, e := range lines[at+1 : at+1+n] {
			if !strings.Contains(e, "offsetkeeper") {
				t.Errorf("%s example %q does not run offsetkeeper", name, e)
			}
		}
	}
}

// TestNameList: a scope too long for list's column is summarised.
func TestNameList(t *testing.T) {
	names := []string{"inventory-connector", "es-sink-orders", "payments-cdc", "s3-sink-archive"}
	for _, tt := range []struct {
		names []string
		width int
		want  string
	}{
		{names[:2], 40, "inventory-connector,es-sink-orders"},
		{names, 40, "1 of 4: inventory-connector …"},
		{names, 60, "2 of 4: inventory-connector, es-sink-orders …"},
		{names, 20, "4 connectors"},
	} {
		if got := nameList(tt.names, tt.width); got != tt.want {
			t.Errorf("nameList(%q, %d) = %q, want %q", tt.names, tt.width, got, tt.want)
		}
		if got := nameList(tt.names, tt.width); len(got) > tt.width && !strings.HasSuffix(got, "connectors") {
			t.Errorf("nameList(%q, %d) = %q: wider than %d", tt.names, tt.width, got, tt.width)
		}
	}
}

// TestCompletionFishFromStore: fish's own completer (complete -C) offers
// the store's IDs and connectors through the fish script.
func TestCompletionFishFromStore(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish here")
	}
	store, _, ids := storeWithSnapshots(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tab := func(line string) []string {
		prog := "function offsetkeeper; env OFFSETKEEPER_TEST_AS_MAIN=1 " + strconv.Quote(self) + " $argv; end\n" +
			"offsetkeeper completion fish | source\ncomplete -C " + strconv.Quote(line) + "\n"
		cmd := exec.Command(fish, "--no-config", "-c", prog)
		cmd.Env = append(os.Environ(), "OFFSETKEEPER_STORE="+store)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("fish: %v", err)
		}
		var words []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			words = append(words, strings.SplitN(l, "\t", 2)[0])
		}
		return words
	}
	if got := tab("offsetkeeper restore "); !slices.Contains(got, "latest") || !slices.Contains(got, ids[0]) || !slices.Contains(got, ids[1]) {
		t.Errorf("restore <TAB>: got %q, want latest and %v", got, ids)
	}
	if got := tab("offsetkeeper restore latest -c inv"); strings.Join(got, " ") != "inventory-connector" {
		t.Errorf("restore latest -c inv<TAB>: got %q", got)
	}
}
