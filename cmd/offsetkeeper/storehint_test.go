package main

import (
	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"

	"path/filepath"
	"strings"
	"testing"
)

// An error that names 'offsetkeeper list' names it with the run's --store,
// on a line of its own: run as printed it lists that store (bare, it read
// the default one, ./offsetkeeper-snapshots, and said it does not exist).
// Without settings the hint stays as it was.
func TestStoreHintsCarryStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	brokers, _, _ := demoCluster(t, connectdemo.DefaultSpec())
	if code, _, errs := runCLI(t, "snapshot", "--brokers", brokers, "--store", dir); code != exitOK {
		t.Fatalf("snapshot: %s", errs)
	}
	const missing = "20261201T000000.000000Z-abcdef"
	for _, args := range [][]string{
		{"restore", missing, "--brokers", brokers, "--store", dir, "--dry-run"},
		{"verify", missing, "--store", dir},
	} {
		code, _, errs := runCLI(t, args...)
		if code == exitOK {
			t.Fatalf("%v: exit 0", args)
		}
		list := strings.Fields(pasted(errs, "offsetkeeper list "))
		if len(list) > 0 {
			list = list[1:]
		}
		if len(list) == 0 || !strings.Contains(strings.Join(list, " "), "--store "+dir) {
			t.Fatalf("%v: no list command with the store on a line of its own:\n%s", args, errs)
		}
		if code, out, errs := runCLI(t, list...); code != exitOK || !strings.Contains(out, "full") {
			t.Errorf("%v as printed: exit %d\n%s\n%s", list, code, out, errs)
		}
	}
	code, out, _ := runCLI(t, "list", "--store", dir)
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	code, _, errs := runCLI(t, "show", id, "--connector", "no-such-connector", "--store", dir)
	show := strings.Fields(pasted(errs, "offsetkeeper show "))
	if code == exitOK || len(show) < 3 || show[2] != id {
		t.Fatalf("show of a connector not in the snapshot: exit %d, no show command:\n%s", code, errs)
	}
	if code, out, errs := runCLI(t, show[1:]...); code != exitOK || !strings.Contains(out, id) {
		t.Errorf("%v as printed: exit %d\n%s\n%s", show, code, out, errs)
	}
	// The store from the environment: the shell that pastes the hint has it.
	t.Setenv("OFFSETKEEPER_STORE", dir)
	if _, _, errs := runCLI(t, "verify", missing); !strings.Contains(errs, "'offsetkeeper list' shows") {
		t.Errorf("verify's hint with the store from the environment: %s", errs)
	}
}

// pasted is the command in out whose first line starts with start (after
// its indentation), as a person pastes it: its lines joined up to the one
// that does not continue (" \"); "" when there is none.
func pasted(out, start string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), start) {
			continue
		}
		var cmd string
		for _, l := range lines[i:] {
			s := strings.TrimSpace(l)
			cmd += strings.TrimSuffix(s, `\`)
			if !strings.HasSuffix(s, `\`) {
				break
			}
		}
		return cmd
	}
	return ""
}
