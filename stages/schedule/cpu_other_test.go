//go:build !unix

package schedule

import "time"

// processCPU cannot be had without getrusage: the benchmarks that report
// CPU time skip.
func processCPU() (time.Duration, bool) { return 0, false }
