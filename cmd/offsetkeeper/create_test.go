package main

import (
	"strings"
	"testing"
)

// TestCreateConnectorsUsage: the flags of --create-connectors and
// --include-unowned that cannot go together are usage errors (exit 2),
// before anything is read.
func TestCreateConnectorsUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--create-connectors"}, "give --connect-url"},
		{[]string{"--create-connectors", "--connect-url", "http://127.0.0.1:1", "--via", "connect"}, "leave out --via connect"},
		{[]string{"--resume"}, "--stop-connectors stopped or --create-connectors created"},
		{[]string{"--include-unowned", "--connector", "a"}, "leave out --connector and --sink-only"},
		{[]string{"--include-unowned", "--sink-only"}, "leave out --connector and --sink-only"},
	} {
		args := append([]string{"restore", "latest", "--store", dir}, tc.args...)
		code, _, errs := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s", tc.args, code, exitUsage, tc.want, errs)
		}
	}
}
