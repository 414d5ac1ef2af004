//go:build unix

package memstat

import (
	"syscall"
	"time"
)

// CPU is the CPU time this process has used, every thread's (the garbage
// collector's included), user and system: getrusage(RUSAGE_SELF). false
// where the system gives none.
func CPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
