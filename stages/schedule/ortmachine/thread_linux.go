package ortmachine

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadFaults returns the minor page faults of the calling OS thread so
// far, or -1 if they cannot be read.
func threadFaults() int64 {
	var u unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &u); err != nil {
		return -1
	}
	return u.Minflt
}

// sleep sleeps d on the kernel's high-resolution timer (nanosleep), which
// wakes within tens of microseconds, not the Go timers' millisecond.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_ = unix.Nanosleep(&ts, nil) // an interrupted sleep is a shorter one: Wait checks the time
}
