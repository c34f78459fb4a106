package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offsetkeeper/offsetkeeper/deploy/internal/release"
)

// runVersion runs what it is given: a script stands in for the binary.
func TestRunVersion(t *testing.T) {
	o := options{version: "v1.2.3", commit: "0123abcd"}
	for _, c := range []struct {
		script string
		ok     bool
	}{
		{"echo 'offsetkeeper v1.2.3 (commit 0123abcd, go1.26.8 linux/amd64)'", true},
		{"echo 'offsetkeeper dev (commit unknown, go1.26.8 linux/amd64)'", false},
		{"echo 'offsetkeeper v1.2.3 (commit 0123abcd, go1.26.8)'; exit 1", false},
	} {
		got, err := runVersion([]byte("#!/bin/sh\n"+c.script+"\n"), o)
		if (err == nil) != c.ok {
			t.Errorf("%s: runVersion = %q, %v; want ok %v", c.script, got, err, c.ok)
		}
	}
}

func TestVerifyArchiveFiles(t *testing.T) {
	dir := t.TempDir()
	readme, other, bin := filepath.Join(dir, "README.md"), filepath.Join(dir, "LICENSE"), filepath.Join(dir, "bin")
	os.WriteFile(readme, []byte("# offsetkeeper\n"), 0o644)
	os.WriteFile(other, []byte("license\n"), 0o644)
	os.WriteFile(bin, []byte("not a binary"), 0o755)
	p := release.Platform{OS: "linux", Arch: "amd64"}
	o := options{version: "v1", commit: "c", files: []string{readme}}
	for name, files := range map[string][]string{"an extra file": {readme, other}, "a missing file": nil} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".tar.gz")
		if err := release.WriteArchive(path, bin, files, time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		if _, err := verifyArchive(path, p, o); err == nil || !strings.Contains(err.Error(), "files") {
			t.Errorf("%s: verifyArchive = %v, want an error about the files", name, err)
		}
	}
	// The right files, but no binary for the platform.
	path := filepath.Join(dir, "right.tar.gz")
	if err := release.WriteArchive(path, bin, []string{readme}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyArchive(path, p, o); err == nil || !strings.Contains(err.Error(), "ELF") {
		t.Errorf("a script as the binary: verifyArchive = %v, want an error about ELF", err)
	}
}
