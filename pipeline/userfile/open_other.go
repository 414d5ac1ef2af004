//go:build !unix

package userfile

import "os"

// openNonBlocking opens path read-only; only Unix has named pipes that
// block on open.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
