//go:build !linux

package pipeline

// exchange swaps two paths by three renames where the kernel has no atomic
// exchange; a crash in between can leave the old version missing, never a
// partial one.
func exchange(a, b string) error { return exchangeByRenames(a, b) }
