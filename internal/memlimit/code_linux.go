package memlimit

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ReleaseCode drops from the process the binary's read-only pages (code,
// constant data, the runtime's function tables) mapped so far, so that its
// resident memory counts only the pages it goes on to use. A command calls
// it first thing in main: package initialisation runs the init functions
// of every linked package, the cloud SDKs' among them, and the kernel maps
// the pages around each page touched, so most of what is resident after it
// is never read again, and stayed counted against the pod's memory for the
// life of the process (a daemon, a drill). Release calls it too: between a
// daemon's runs, the code only a run uses (encoding a snapshot, uploading
// it) is mapped again by the next run.
//
// MADV_DONTNEED on a read-only file mapping only drops this process's page
// table entries: the pages stay in the page cache, and a page used again
// is mapped again from there, as after any reclaim. Writable mappings are
// never touched: on a private mapping DONTNEED would discard their
// contents. Errors are ignored; the process only keeps more pages.
func ReleaseCode() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	var spans [][2]uintptr
	s := bufio.NewScanner(f)
	for s.Scan() {
		// 00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/offsetkeeper
		fields := strings.Fields(s.Text())
		if len(fields) != 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		spans = append(spans, [2]uintptr{uintptr(start), uintptr(end)})
	}
	// Advised after the file is read: dropping the pages that read it
	// while reading would only fault them back in.
	for _, sp := range spans {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, sp[0], sp[1]-sp[0], syscall.MADV_DONTNEED)
	}
}
