package memstat

import (
	"bytes"
	"os"
	"strconv"
)

// PeakRSS returns this process's peak resident set size in bytes since
// it started its program (the kernel's VmHWM, the high-water mark of the
// memory it maps: what /usr/bin/time -v prints as its maximum resident
// set size), and false where it cannot be read.
//
// getrusage's ru_maxrss, which os.ProcessState.SysUsage gives a parent,
// is not that figure for a child started by a Go program: the child is
// cloned sharing its parent's memory until it executes its program, and
// Linux carries the larger high-water mark across execve, so a small
// child reports at least its parent's peak. VmHWM belongs to the memory
// the program itself maps.
func PeakRSS() (uint64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		kib, ok := bytes.CutSuffix(bytes.TrimSpace(rest), []byte(" kB"))
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(kib)), 10, 64)
		return n << 10, err == nil
	}
	return 0, false
}
