//go:build !linux

package real

// threadFaults returns -1: only Linux counts a thread's page faults.
func threadFaults() int64 { return -1 }
