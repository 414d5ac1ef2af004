//go:build !unix

package memstat

import "time"

// CPU cannot be had without getrusage.
func CPU() (time.Duration, bool) { return 0, false }
