// Package storefile opens the files of the artifact store, and checks its
// folders, refusing anything the runner cannot have written there.
//
// The runner writes only regular files and directories into a store,
// through staging folders it renames into place. Anything else found at a
// store path was put there by someone else, and is refused before a byte
// is read:
//
//   - a symbolic link: the store never follows a link out of itself.
//     What a link points to was not written by the runner, its bytes can
//     change without the store seeing it, and a clean-up or gc that
//     followed it would delete files outside the store;
//   - a named pipe (FIFO), where opening blocks until a writer comes,
//     which may be never: verify hung on one in place of a version file;
//   - a device or a socket.
//
// Open opens without following a link in the last component (O_NOFOLLOW)
// and without blocking (O_NONBLOCK), then checks that what it opened is a
// regular file, so that a pipe put in place between a check and the open
// cannot hang the caller either. The folders above a file are checked by
// Dir, which the store calls on each version and scratch folder.
//
// Errors are *fs.PathError values naming the path, whose Err says what the
// path is and wraps ErrForeign, for example
//
//	open data/generate/48eae1a2f164ef7b/jobs-eval.parquet: a named pipe (FIFO), not a regular file: the store holds only files it wrote
//	open data/.tmp: a symbolic link to /home/x, not a directory: the store never follows a link out of itself; remove the link
package storefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/mlsched/mlsched/pipeline/userfile"
)

// ErrForeign reports a store path that holds something the runner cannot
// have written: a symbolic link, a named pipe, a device or a socket (or a
// file where a folder belongs, and the reverse).
var ErrForeign = errors.New("not written by the store")

// foreignError says what a path is instead of what the store writes.
type foreignError struct{ msg string }

func (e *foreignError) Error() string { return e.msg }
func (e *foreignError) Unwrap() error { return ErrForeign }

// Open opens the regular file at path for reading. A symbolic link, a
// named pipe or a device there is refused (see the package doc), and the
// open never blocks.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EWOULDBLOCK) {
		// O_NOFOLLOW on a symlink, or a socket or device that cannot be
		// opened so: say what is there instead of the errno.
		if _, ferr := Check(path); ferr != nil {
			return nil, nil, ferr
		}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, foreign(path, fi.Mode(), "a regular file")
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path, as Open opens it.
func ReadFile(path string) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// Check returns the FileInfo of path, itself and not what a link there
// points to, when it is a regular file; otherwise an error saying what it
// is. It opens nothing.
func Check(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, foreign(path, fi.Mode(), "a regular file")
	}
	return fi, nil
}

// Dir returns nil when path is a directory itself, not a symbolic link to
// one; otherwise an error saying what it is.
func Dir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return foreign(path, fi.Mode(), "a directory")
	}
	return nil
}

// foreign is the error for path, whose mode is m, where want was expected.
func foreign(path string, m fs.FileMode, want string) error {
	var msg string
	if m&fs.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		if err != nil {
			target = "?"
		}
		msg = fmt.Sprintf("a symbolic link to %s, not %s: the store never follows a link out of itself; remove the link", target, want)
	} else {
		msg = fmt.Sprintf("%s, not %s: the store holds only files it wrote", userfile.Describe(m), want)
	}
	return &fs.PathError{Op: "open", Path: path, Err: &foreignError{msg}}
}
