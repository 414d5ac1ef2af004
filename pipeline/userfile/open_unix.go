//go:build unix

package userfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only with O_NONBLOCK: a named pipe put
// in place of the checked file then opens at once, and is refused by the
// caller's second check, rather than blocking until a writer comes. The
// flag changes nothing for a regular file.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
