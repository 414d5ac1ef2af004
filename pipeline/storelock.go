package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mlsched/mlsched/pipeline/storefile"
)

// Lock implements StoreMaintainer with a flock(2) on root/.lock: the
// kernel releases it when the holder exits, even by kill -9, so a stale
// lock never blocks. Once it is held, the scratch directories in root/.tmp
// whose owner is gone are removed; those of a live process (one that got
// in while the lock file was deleted, say) are left alone.
func (s *LocalStore) Lock(ctx context.Context, what string, wait bool, waiting func(holder string)) (unlock func(), err error) {
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", s.root, err)
	}
	path := filepath.Join(s.root, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return nil, fmt.Errorf("store %s is %w: %w", s.root, ErrReadOnly, err)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.root, err)
	}
	if err := s.flock(ctx, f, syscall.LOCK_EX, wait, waiting); err != nil {
		f.Close()
		return nil, err
	}
	unlock = func() {
		s.release()
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	// Say who holds the lock, for the message a waiting process prints.
	_ = f.Truncate(0)
	_, _ = f.WriteAt(fmt.Appendf(nil, "pid %d (%s, since %s)\n", os.Getpid(), what, time.Now().Format(time.TimeOnly)), 0)
	if err := s.cleanScratch(); err != nil {
		unlock()
		return nil, fmt.Errorf("store %s: clean temporary files: %w", s.root, err)
	}
	return unlock, nil
}

// ReadLock implements StoreMaintainer with a shared flock(2) on
// root/.lock, opened read-only, so that a store this process may not
// write (a read-only copy, another user's) serves a run that finds
// everything cached while no writer works in it. A store without a lock
// file, which this process cannot make, is read without a lock: no writer
// has taken one yet, and one that starts meanwhile is not waited for.
func (s *LocalStore) ReadLock(ctx context.Context, what string, wait bool, waiting func(holder string)) (unlock func(), err error) {
	f, err := os.Open(filepath.Join(s.root, lockName))
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.root, err)
	}
	if err := s.flock(ctx, f, syscall.LOCK_SH, wait, waiting); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// flock takes how (LOCK_EX or LOCK_SH) on the open lock file f, waiting
// while another process holds it in a conflicting way (unless wait is
// false: ErrStoreBusy), and telling waiting, once, who that is.
func (s *LocalStore) flock(ctx context.Context, f *os.File, how int, wait bool, waiting func(holder string)) error {
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("store %s: lock: %w", s.root, err)
		}
		holder, _ := os.ReadFile(f.Name())
		desc := strings.TrimSpace(string(holder))
		if desc == "" {
			desc = "another mlsched process"
		}
		if !wait {
			return fmt.Errorf("store %s is in use by %s: %w", s.root, desc, ErrStoreBusy)
		}
		if !told && waiting != nil {
			waiting(desc)
			told = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ownerPrefix starts the name of a process's scratch directory in
// root/.tmp.
const ownerPrefix = "run-"

// cleanScratch removes from root/.tmp what it can prove dead processes
// made there, and nothing else: each directory named as owned() names
// them (run-<pid>-<digits>) whose flock it can take (its owner is gone;
// a live one holds it), and each temporary file named with the pid of a
// writer that no longer runs (tempPattern). Anything else someone put in
// .tmp stays. A .tmp that is a symbolic link is not followed: its target
// lies outside the store, and the store never removes what it did not
// make (a run that must write refuses it, see tmpRoot).
func (s *LocalStore) cleanScratch() error {
	tmp := filepath.Join(s.root, tmpDir)
	if fi, err := os.Lstat(tmp); errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return nil
	} else if err != nil {
		return err
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	s.mu.Lock()
	own := s.own
	s.mu.Unlock()
	var errs []error
	for _, e := range ents {
		path := filepath.Join(tmp, e.Name())
		if _, ok := scratchOwner(e.Name()); !ok || !e.IsDir() || path == own {
			continue // not a scratch directory (a symlink named as one included), or ours
		}
		d, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue // removed meanwhile by its owner
		}
		err = syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil {
			d.Close()
			continue // a live owner holds it
		}
		// Removed while we hold its flock: an owner that opened it
		// meanwhile finds it gone once it gets the flock, and makes
		// another.
		err = os.RemoveAll(path)
		d.Close()
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Manifests rewritten through .tmp (rewriteManifest) by a writer
	// killed meanwhile.
	if err := removeDeadTemps(tmp, ""); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// tmpRoot returns root/.tmp, making it (and the store) if need be. It
// must be a directory of the store itself: a symbolic link there would
// have versions built, and scratch removed, wherever it points, so it is
// refused, naming the link and its target.
func (s *LocalStore) tmpRoot() (string, error) {
	tmp := filepath.Join(s.root, tmpDir)
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return "", err
	}
	if err := os.Mkdir(tmp, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if err := storefile.Dir(tmp); err != nil {
		return "", err
	}
	return tmp, nil
}

// owned returns this process's scratch directory in root/.tmp, making it
// and taking its flock first if need be. The directory lasts only while
// something is in it (see release): a caller must put what it makes
// there under the same hold of s.mu, as scratch does.
func (s *LocalStore) owned() (string, error) {
	if s.own != "" {
		return s.own, nil
	}
	for range 10 {
		tmp, err := s.tmpRoot()
		if err != nil {
			return "", err
		}
		dir, err := os.MkdirTemp(tmp, fmt.Sprintf("%s%d-", ownerPrefix, os.Getpid()))
		if err != nil {
			return "", err
		}
		d, err := os.Open(dir)
		if err != nil {
			continue // cleaned up by another process before we locked it
		}
		if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
			d.Close()
			return "", fmt.Errorf("lock %s: %w", dir, err)
		}
		// Another process's clean-up may have taken the flock between
		// MkdirTemp and ours, and removed the directory.
		var st1, st2 syscall.Stat_t
		if syscall.Fstat(int(d.Fd()), &st1) != nil || syscall.Stat(dir, &st2) != nil || st1.Ino != st2.Ino || st1.Dev != st2.Dev {
			d.Close()
			continue
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			d.Close()
			return "", err
		}
		s.own, s.ownF = dir, d
		return dir, nil
	}
	return "", fmt.Errorf("%s: could not make a scratch directory that stays", filepath.Join(s.root, tmpDir))
}

// ownDir is owned under s.mu: the directory as it is now, for a caller
// that names it to another process rather than writing in it.
func (s *LocalStore) ownDir() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owned()
}

// release removes this process's scratch directory if nothing is left in
// it, and drops its flock; the next write makes another.
func (s *LocalStore) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own == "" {
		return
	}
	if os.Remove(s.own) != nil {
		return // not empty: keep it, and its flock, while this process lives
	}
	s.ownF.Close()
	s.own, s.ownF = "", nil
}

// scratch creates a fresh directory, whose name starts with prefix, in
// this process's directory in root/.tmp. It is made under s.mu, so that
// another goroutine's release (an unlock while this one stages) never
// removes the process's directory between finding it and filling it.
func (s *LocalStore) scratch(prefix string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	own, err := s.owned()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(own, prefix+"-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// scratchOwner parses the name owned() gives a process's scratch
// directory, run-<pid>-<digits> (os.MkdirTemp's random part is decimal),
// and returns the pid; any other name is not one.
func scratchOwner(name string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(name, ownerPrefix)
	if !found {
		return 0, false
	}
	p, random, found := strings.Cut(rest, "-")
	if !found || !allDigits(p) || !allDigits(random) {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// allDigits says whether s is one or more decimal digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
