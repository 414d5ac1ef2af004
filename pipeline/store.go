package pipeline

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mlsched/mlsched/pipeline/digest"
)

// Store is the versioned artifact store: root/<stage>/<version>/ holds a
// version's files and its manifest. Versions are created in root/.tmp and
// renamed into place only when complete, so a crash at any moment leaves
// either the old state or the complete new version.
type Store struct {
	// Root is the store's absolute path.
	Root string
}

const (
	tmpDir   = ".tmp"
	lockName = ".lock"
)

// OpenStore returns the store rooted at root. The directory need not exist
// yet; it is created on the first write.
func OpenStore(root string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	return &Store{Root: abs}, nil
}

// Dir returns the directory of a version.
func (s *Store) Dir(stage, version string) string { return filepath.Join(s.Root, stage, version) }

// Manifest returns the manifest of stage@version, or an error wrapping
// ErrNotFound when the version does not exist.
func (s *Store) Manifest(stage, version string) (*Manifest, error) {
	return readManifest(s.Dir(stage, version), stage, version)
}

// Stages returns the names of the stages that have a directory in the
// store, sorted.
func (s *Store) Stages() ([]string, error) {
	ents, err := os.ReadDir(s.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Versions returns the readable manifests of a stage, oldest first. A
// directory without a readable manifest is not a version and is skipped
// (verify reports it).
func (s *Store) Versions(stage string) ([]*Manifest, error) {
	ents, err := os.ReadDir(filepath.Join(s.Root, stage))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Manifest
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if m, err := s.Manifest(stage, e.Name()); err == nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *Manifest) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Version, b.Version))
	})
	return out, nil
}

// Resolve finds the version of stage named by a unique prefix.
func (s *Store) Resolve(stage, prefix string) (*Manifest, error) {
	vs, err := s.Versions(stage)
	if err != nil {
		return nil, err
	}
	var found []*Manifest
	for _, m := range vs {
		if strings.HasPrefix(m.Version, prefix) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return nil, notFound(fmt.Sprintf("%s@%s: no such version in %s (see 'mlsched ls %s')", stage, prefix, s.Root, stage))
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%s@%s: ambiguous version prefix (%d versions match)", stage, prefix, len(found))
}

// fileCheck is the result of comparing a version's files on disk with its
// manifest without reading them.
type fileCheck struct {
	damaged []string // missing, or size differs: certainly not the recorded bytes
	touched []int    // indexes of files whose mtime differs but size matches
}

// stat compares m's files with the disk by size and mtime only; it never
// reads file contents, so it stays fast whatever the artifacts' size.
func (s *Store) stat(m *Manifest) fileCheck {
	var c fileCheck
	dir := s.Dir(m.Stage, m.Version)
	for i, f := range m.Files {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case err != nil:
			c.damaged = append(c.damaged, f.Path+" is missing")
		case fi.Size() != f.Size:
			c.damaged = append(c.damaged, fmt.Sprintf("%s has %d bytes, manifest says %d", f.Path, fi.Size(), f.Size))
		case fi.ModTime().UnixNano() != f.ModTime:
			c.touched = append(c.touched, i)
		}
	}
	return c
}

// revalidate re-hashes the files whose mtime changed (a copied or restored
// store) and, if their bytes are the recorded ones, records the new mtimes so
// later runs trust them again. It returns the files that really changed.
func (s *Store) revalidate(m *Manifest, touched []int) ([]string, error) {
	dir := s.Dir(m.Stage, m.Version)
	var bad []string
	for _, i := range touched {
		f := &m.Files[i]
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		d, err := digest.File(path)
		if err != nil || d.SHA256 != f.SHA256 {
			bad = append(bad, f.Path+" changed since it was written")
			continue
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		f.ModTime = fi.ModTime().UnixNano()
	}
	if len(bad) > 0 {
		return bad, nil
	}
	return nil, writeManifest(dir, m)
}

// Lock takes the store's exclusive lock, waiting while another process holds
// it. The lock is a flock(2) on root/.lock: the kernel releases it when the
// holder exits, even by kill -9, so a stale lock never blocks. waiting is
// called once, with the holder's description, if the lock is busy. With
// wait false a busy store fails at once with ErrStoreBusy.
func (s *Store) Lock(ctx context.Context, what string, wait bool, waiting func(holder string)) (unlock func(), err error) {
	if err := os.MkdirAll(s.Root, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", s.Root, err)
	}
	path := filepath.Join(s.Root, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.Root, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("store %s: lock: %w", s.Root, err)
		}
		holder, _ := os.ReadFile(path)
		desc := strings.TrimSpace(string(holder))
		if desc == "" {
			desc = "another mlsched process"
		}
		if !wait {
			f.Close()
			return nil, fmt.Errorf("store %s is in use by %s: %w", s.Root, desc, ErrStoreBusy)
		}
		if !told && waiting != nil {
			waiting(desc)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Say who holds the lock, for the message a waiting process prints.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d (%s, since %s)\n", os.Getpid(), what, time.Now().Format(time.TimeOnly))), 0)
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// cleanTmp removes leftovers of interrupted runs. Call it only while holding
// the lock: then nothing in .tmp belongs to a live run.
func (s *Store) cleanTmp() error {
	return os.RemoveAll(filepath.Join(s.Root, tmpDir))
}

// begin creates a staging directory for a new version of stage, on the same
// file system as its final place so that commit is a rename.
func (s *Store) begin(stage, version string) (string, error) {
	tmp := filepath.Join(s.Root, tmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	dir := filepath.Join(tmp, stage+"-"+version+"-"+hex.EncodeToString(r[:]))
	return dir, os.Mkdir(dir, 0o755)
}

// commit moves a complete staging directory (manifest included) into place.
// An existing version with the same name (a forced rerun, or a damaged
// version being replaced) is swapped out atomically where the kernel allows.
func (s *Store) commit(staging, stage, version string) error {
	parent := filepath.Join(s.Root, stage)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	final := filepath.Join(parent, version)
	if err := os.Rename(staging, final); err == nil {
		return syncDir(parent)
	} else if _, statErr := os.Stat(final); statErr != nil {
		return err
	}
	if err := exchange(staging, final); err != nil {
		return err
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	return os.RemoveAll(staging) // now holds the old version
}

// remove deletes a version: it first disappears from view by a rename, so an
// interrupted removal never leaves a partial version in place.
func (s *Store) remove(stage, version string) error {
	tmp := filepath.Join(s.Root, tmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	trash := filepath.Join(tmp, "gc-"+stage+"-"+version+"-"+hex.EncodeToString(r[:]))
	if err := os.Rename(s.Dir(stage, version), trash); err != nil {
		return err
	}
	return os.RemoveAll(trash)
}

// Problem is one damaged file or version found by Verify.
type Problem struct {
	Stage, Version, Path string
	What                 string
}

func (p Problem) String() string {
	if p.Path == "" {
		return fmt.Sprintf("%s@%s: %s", p.Stage, p.Version, p.What)
	}
	return fmt.Sprintf("%s@%s: %s: %s", p.Stage, p.Version, p.Path, p.What)
}
