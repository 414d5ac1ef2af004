//go:build unix

package profile

import (
	"syscall"
	"time"
)

// selfCPU is the CPU time this process has used, every thread's, user and
// system: getrusage(RUSAGE_SELF).
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
