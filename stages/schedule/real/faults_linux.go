package real

import "golang.org/x/sys/unix"

// threadFaults returns the minor page faults of the calling OS thread so
// far, or -1 if they cannot be read.
func threadFaults() int64 {
	var u unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &u); err != nil {
		return -1
	}
	return u.Minflt
}
