//go:build !linux

package memstat

// PeakRSS reports no peak resident set size outside Linux, which alone
// gives a process's own (VmHWM): the benchmarks that state one skip.
func PeakRSS() (uint64, bool) { return 0, false }
