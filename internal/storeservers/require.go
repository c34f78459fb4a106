package storeservers

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Two variables let CI tell a server that was not installed from one that
// was installed and then went unused:
//
//	OFFSETKEEPER_TEST_REQUIRE_SERVERS  comma-separated names ("minio",
//	                                   "azurite", "fake-gcs-server", or
//	                                   "all"): a missing one fails the test
//	                                   instead of skipping it
//	OFFSETKEEPER_TEST_SERVERS_LOG      a file each started server appends
//	                                   "name<TAB>package<TAB>test" to
//
// .ci/run requires every server whose install succeeded and prints one
// line of what ran where from the log.

// missing skips the test, or fails it when name is required, with why.
func missing(t testing.TB, name, why string) {
	t.Helper()
	if required(name) {
		t.Fatalf("%s is required (OFFSETKEEPER_TEST_REQUIRE_SERVERS=%s) but %s", name,
			os.Getenv("OFFSETKEEPER_TEST_REQUIRE_SERVERS"), why)
	}
	t.Skip(why)
}

// required reports whether OFFSETKEEPER_TEST_REQUIRE_SERVERS names name.
func required(name string) bool {
	list := strings.Split(os.Getenv("OFFSETKEEPER_TEST_REQUIRE_SERVERS"), ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	return slices.Contains(list, name) || slices.Contains(list, "all")
}

var logMu sync.Mutex

// logRun appends the server and the test that started it to
// OFFSETKEEPER_TEST_SERVERS_LOG, if set. The package is the test's working
// directory relative to the module root.
func logRun(t testing.TB, name string) {
	path := os.Getenv("OFFSETKEEPER_TEST_SERVERS_LOG")
	if path == "" {
		return
	}
	pkg, _ := os.Getwd()
	if root, err := moduleRoot(); err == nil {
		if rel, err := filepath.Rel(root, pkg); err == nil {
			pkg = rel
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("open OFFSETKEEPER_TEST_SERVERS_LOG: %v", err)
	}
	defer f.Close()
	// One short write with O_APPEND: lines from parallel test binaries
	// do not interleave.
	if _, err := fmt.Fprintf(f, "%s\t%s\t%s\n", name, filepath.ToSlash(pkg), t.Name()); err != nil {
		t.Fatalf("write OFFSETKEEPER_TEST_SERVERS_LOG: %v", err)
	}
}
