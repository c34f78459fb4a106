package main

import (
	"os/exec"
	"syscall"
)

// dieWithDaemon has the kernel send the drill child SIGTERM when the
// daemon dies without stopping it (a SIGKILL outside a cgroup that would
// kill both): the child stops its scratch cluster and exits rather than
// run on alone until its --timeout. Linux sends the signal when the thread
// that started the child exits, so run holds that thread (LockOSThread)
// until the child has exited.
func dieWithDaemon(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
