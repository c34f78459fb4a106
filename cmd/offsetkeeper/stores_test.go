package main

import (
	"net"
	"strings"
	"testing"

	"github.com/offsetkeeper/offsetkeeper/internal/storeservers"
)

// oneLineFailure checks a command failed with exit 1 and one line on
// stderr, without a panic, holding each of want.
func oneLineFailure(t *testing.T, what string, code int, stderr string, want ...string) {
	t.Helper()
	msg := strings.TrimSpace(stderr)
	if code != 1 || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
		t.Fatalf("%s: exit %d, stderr %q; want exit 1 and one line", what, code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: stderr %q lacks %q", what, msg, w)
		}
	}
}

// Against Azurite: a missing container and a stopped server are exit 1
// and one line, no panic, for snapshot-free commands and for a restore.
func TestStoreErrorsAzurite(t *testing.T) {
	srv := storeservers.Azurite(t)
	srv.Use(t)
	code, _, stderr := runCLI(t, "list", "--store", srv.MissingURL)
	oneLineFailure(t, "list a missing container", code, stderr, "container does not exist", "ContainerNotFound")
	code, _, stderr = runCLI(t, "restore", "latest", "--store", srv.MissingURL, "--dry-run")
	oneLineFailure(t, "restore from a missing container", code, stderr, "container does not exist")
	if strings.Contains(stderr, "do not restore it") {
		t.Errorf("restore from a missing container: %q blames the snapshot", stderr)
	}
	if code, _, stderr = runCLI(t, "list", "--store", srv.URL); code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	srv.Stop()
	code, _, stderr = runCLI(t, "list", "--store", srv.URL, "--store-timeout", "5s")
	oneLineFailure(t, "list with Azurite stopped", code, stderr, "store")
	code, _, stderr = runCLI(t, "verify", "--store", srv.URL, "--store-timeout", "5s")
	oneLineFailure(t, "verify with Azurite stopped", code, stderr, "store")
}

// An unreachable Cloud Storage endpoint (the client retries it until its
// context ends) fails list within --store-timeout, saying so.
func TestStoreTimeoutGCS(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Accepts and never answers.
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	t.Cleanup(func() { ln.Close() })
	t.Setenv("STORAGE_EMULATOR_HOST", ln.Addr().String())
	code, _, stderr := runCLI(t, "list", "--store", "gs://offsetkeeper-test", "--store-timeout", "2s")
	oneLineFailure(t, "list an unreachable GCS endpoint", code, stderr, "did not answer within 2s", "--store-timeout")
	t.Setenv("OFFSETKEEPER_STORE_TIMEOUT", "1s")
	code, _, stderr = runCLI(t, "list", "--store", "gs://offsetkeeper-test")
	oneLineFailure(t, "list with OFFSETKEEPER_STORE_TIMEOUT", code, stderr, "did not answer within 1s")
}
