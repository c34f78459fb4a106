//go:build !linux

package main

import "os/exec"

// dieWithDaemon does nothing where the kernel has no parent-death signal:
// a drill child whose daemon was killed runs on until its --timeout.
func dieWithDaemon(*exec.Cmd) {}
