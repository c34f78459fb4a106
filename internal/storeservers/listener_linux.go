package storeservers

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listensOn reports whether a process of the process group pgid holds the
// socket listening on loopback port, read from /proc: the socket's inode
// in /proc/net/tcp{,6}, then a descriptor of a group member that points
// at it.
func listensOn(pgid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listeningInodes(f, port, inodes); err != nil && !os.IsNotExist(err) {
			return false, err
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return false, err
	}
	for _, proc := range procs {
		if processGroup(proc) != pgid {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(proc, "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(proc, "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(link[len("socket:["):], "]")] {
				return true, nil
			}
		}
	}
	return false, nil
}

// listeningInodes adds the inodes of the sockets of file (the format of
// /proc/net/tcp) listening on port.
func listeningInodes(file string, port int, into map[string]bool) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	suffix := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], suffix) {
			continue
		}
		into[fields[9]] = true
	}
	return sc.Err()
}

// processGroup is the process group of /proc/PID, or -1.
func processGroup(proc string) int {
	b, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 3 {
		return -1
	}
	pgrp, err := strconv.Atoi(fields[2])
	if err != nil {
		return -1
	}
	return pgrp
}
