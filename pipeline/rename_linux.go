package pipeline

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchange atomically swaps two paths (renameat2 RENAME_EXCHANGE), so that a
// replaced version is never absent, even for an instant. File systems that
// cannot exchange fall back to two renames.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return exchangeByRenames(a, b)
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
