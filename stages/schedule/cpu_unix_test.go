//go:build unix

package schedule

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, every thread's (the
// garbage collector's included), user and system: getrusage(RUSAGE_SELF).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
