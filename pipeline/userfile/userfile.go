package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Sentinel causes, for errors.Is.
var (
	// ErrNotRegular reports a path that names something other than a
	// regular file: a named pipe, a device, a socket or a directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotDir reports a path that must be a directory and is not.
	ErrNotDir = errors.New("not a directory")
	// ErrTooLarge reports a file larger than its caller's bound.
	ErrTooLarge = errors.New("file too large")
)

// Check reports whether path names a regular file, following symbolic
// links, without opening it.
func Check(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: wrong(path, info, "a regular file", ErrNotRegular)}
	}
	return info, nil
}

// Open opens the regular file at path for reading, refusing one larger
// than limit bytes (limit < 0 sets no bound). It checks the path before
// opening it, opens it so that a named pipe swapped in meanwhile cannot
// block, and checks that what it opened is the file it checked.
func Open(path string, limit int64) (*os.File, fs.FileInfo, error) {
	info, err := Check(path)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(path, info, limit); err != nil {
		return nil, nil, err
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, err
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(info, got) {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: &kindError{msg: "it changed while being opened", cause: ErrNotRegular}}
	}
	if err := checkSize(path, got, limit); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, got, nil
}

// ReadFile reads the regular file at path, which may hold at most limit
// bytes (a file that grows past the bound while read is refused too).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, _, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := io.Reader(f)
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if limit >= 0 && int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: &kindError{msg: "it grew past the " + Size(limit) + " this input may hold while being read", cause: ErrTooLarge}}
	}
	return b, nil
}

// CheckDir reports whether path, if it exists, is a directory (following
// symbolic links); a missing path is fine, since the caller creates it,
// but then its nearest existing parent must be a directory.
func CheckDir(path string) error {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// Missing, or below something that is not a directory: look
			// at the parent.
			if filepath.Dir(p) == p {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		if !info.IsDir() {
			return &fs.PathError{Op: "open", Path: p, Err: wrong(p, info, "a directory", ErrNotDir)}
		}
		return nil
	}
}

// checkSize refuses a file of more than limit bytes.
func checkSize(path string, info fs.FileInfo, limit int64) error {
	if limit >= 0 && info.Size() > limit {
		return &fs.PathError{Op: "open", Path: path, Err: &kindError{msg: sizeAbove(info.Size(), limit) + ", more than the " + Size(limit) + " this input may hold", cause: ErrTooLarge}}
	}
	return nil
}

// wrong says what path is (info describes what it leads to) and that it is
// not what was wanted.
func wrong(path string, info fs.FileInfo, want string, cause error) error {
	what := Describe(info.Mode())
	if l, err := os.Lstat(path); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			what = "a symlink to " + target + ", " + what
		}
	}
	return &kindError{msg: what + ", not " + want, cause: cause}
}

type kindError struct {
	msg   string
	cause error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.cause }

// Describe names a file mode's type in words: "a named pipe (FIFO)", "a
// character device", "a directory".
func Describe(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "an irregular file"
	}
}

// sizeAbove writes n, which is more than limit, so that it reads as more:
// in bytes when it is near the limit, where rounding would hide the
// difference.
func sizeAbove(n, limit int64) string {
	if n-limit < limit/10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return Size(n)
}

// Size writes a byte count for people: 512 B, 1 MiB, 1.2 GiB.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, exp := float64(n), 0
	for v >= unit && exp < 6 {
		v /= unit
		exp++
	}
	s := fmt.Sprintf("%.1f", v)
	if v == float64(int64(v)) {
		s = fmt.Sprintf("%d", int64(v))
	}
	return s + " " + string("KMGTPE"[exp-1]) + "iB"
}
