//go:build !unix

package profile

import "time"

// selfCPU cannot be had without getrusage: the others' share of the
// cores is then NaN.
func selfCPU() (time.Duration, bool) { return 0, false }
