//go:build !linux

package ortmachine

import "time"

// threadFaults returns -1: only Linux counts a thread's page faults.
func threadFaults() int64 { return -1 }

// sleep sleeps d.
func sleep(d time.Duration) { time.Sleep(d) }
