package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/digest"
)

// LocalStore is a Store in a directory of this machine: root/<stage>/<version>/
// holds a version's files and its manifest, root/.memo/<stage>/<key>/ a memo
// entry. Versions and memo entries are built in root/.tmp and renamed into
// place only when complete, so a crash at any moment leaves either the old
// state or the complete new one.
type LocalStore struct {
	root string
}

var _ Store = (*LocalStore)(nil)

const (
	tmpDir   = ".tmp"
	lockName = ".lock"
)

// OpenStore returns the local store rooted at root. The directory need not
// exist yet; it is created on the first write.
func OpenStore(root string) (*LocalStore, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	return &LocalStore{root: abs}, nil
}

// Root returns the store's absolute path.
func (s *LocalStore) Root() string { return s.root }

// Location implements Store: the store's absolute path.
func (s *LocalStore) Location() string { return s.root }

// Dir returns the directory of a version.
func (s *LocalStore) Dir(stage, version string) string { return filepath.Join(s.root, stage, version) }

// Open implements Store: a local version is already in place.
func (s *LocalStore) Open(stage, version string) (string, error) {
	return s.Dir(stage, version), nil
}

// Manifest implements Store.
func (s *LocalStore) Manifest(stage, version string) (*Manifest, error) {
	return readManifest(s.Dir(stage, version), stage, version)
}

// Stages implements Store.
func (s *LocalStore) Stages() ([]string, error) {
	ents, err := os.ReadDir(s.root)
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

// Versions implements Store. A directory without a readable manifest is not
// a version and is skipped (Verify reports it).
func (s *LocalStore) Versions(stage string) ([]*Manifest, error) {
	ents, err := os.ReadDir(filepath.Join(s.root, stage))
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

// Check implements Store. It stays fast whatever the artifacts' size: only
// files whose mtime changed are ever read, and only with rehash.
func (s *LocalStore) Check(m *Manifest, rehash bool) (damaged []string, touched int, err error) {
	dir := s.Dir(m.Stage, m.Version)
	var changed []int // files whose mtime differs but size matches
	for i, f := range m.Files {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case err != nil:
			damaged = append(damaged, f.Path+" is missing")
		case fi.Size() != f.Size:
			damaged = append(damaged, fmt.Sprintf("%s has %d bytes, manifest says %d", f.Path, fi.Size(), f.Size))
		case fi.ModTime().UnixNano() != f.ModTime:
			changed = append(changed, i)
		}
	}
	if len(damaged) > 0 || len(changed) == 0 || !rehash {
		return damaged, len(changed), nil
	}
	damaged, err = s.revalidate(m, changed)
	return damaged, 0, err
}

// revalidate re-hashes the files whose mtime changed (a copied or restored
// store) and, if their bytes are the recorded ones, records the new mtimes so
// later runs trust them again. It returns the files that really changed.
func (s *LocalStore) revalidate(m *Manifest, touched []int) ([]string, error) {
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
	return nil, rewriteManifest(dir, filepath.Join(s.root, tmpDir), m)
}

// Lock implements Store with a flock(2) on root/.lock: the kernel releases
// it when the holder exits, even by kill -9, so a stale lock never blocks.
// Once held, nothing in root/.tmp belongs to a live writer, and it is
// removed.
func (s *LocalStore) Lock(ctx context.Context, what string, wait bool, waiting func(holder string)) (unlock func(), err error) {
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", s.root, err)
	}
	path := filepath.Join(s.root, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.root, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("store %s: lock: %w", s.root, err)
		}
		holder, _ := os.ReadFile(path)
		desc := strings.TrimSpace(string(holder))
		if desc == "" {
			desc = "another mlsched process"
		}
		if !wait {
			f.Close()
			return nil, fmt.Errorf("store %s is in use by %s: %w", s.root, desc, ErrStoreBusy)
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
	unlock = func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	// Say who holds the lock, for the message a waiting process prints.
	_ = f.Truncate(0)
	_, _ = f.WriteAt(fmt.Appendf(nil, "pid %d (%s, since %s)\n", os.Getpid(), what, time.Now().Format(time.TimeOnly)), 0)
	if err := os.RemoveAll(filepath.Join(s.root, tmpDir)); err != nil {
		unlock()
		return nil, fmt.Errorf("store %s: clean temporary files: %w", s.root, err)
	}
	return unlock, nil
}

// Begin implements Store: the staging directory is in root/.tmp, on the same
// file system as the version's final place, so that Commit is a rename.
func (s *LocalStore) Begin(stage, version string) (string, error) {
	return s.scratch(stage + "-" + version)
}

// scratch creates a fresh directory in root/.tmp whose name starts with
// prefix.
func (s *LocalStore) scratch(prefix string) (string, error) {
	tmp := filepath.Join(s.root, tmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(tmp, prefix+"-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// Commit implements Store. An existing version with the same name (a forced
// rerun, or a damaged version being replaced) is swapped out atomically
// where the kernel allows.
func (s *LocalStore) Commit(staging, stage, version string) error {
	parent := filepath.Join(s.root, stage)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	final := filepath.Join(parent, version)
	if err := os.Rename(staging, final); err == nil {
		return syncPath(parent)
	} else if _, statErr := os.Stat(final); statErr != nil {
		return err
	}
	if err := exchange(staging, final); err != nil {
		return err
	}
	if err := syncPath(parent); err != nil {
		return err
	}
	return os.RemoveAll(staging) // now holds the old version
}

// remove deletes a directory of the store: it first disappears from view by
// a rename into root/.tmp, so an interrupted removal never leaves a partial
// version or memo entry in place.
func (s *LocalStore) remove(dir, name string) error {
	trash, err := s.scratch("gc-" + name)
	if err != nil {
		return err
	}
	if err := os.Rename(dir, filepath.Join(trash, "x")); err != nil {
		os.Remove(trash)
		return err
	}
	return os.RemoveAll(trash)
}

// Memo implements Store: a stage's entries live in root/.memo/<stage>/ and
// are built in root/.tmp.
func (s *LocalStore) Memo(stage string, base KeyInputs) *Memo {
	return &Memo{stage: stage, base: base, root: filepath.Join(s.root, memoDir, stage), tmp: filepath.Join(s.root, tmpDir)}
}

// Prune implements Store.
func (s *LocalStore) Prune(keep Keep, dryRun bool) ([]Removed, error) {
	stages, err := s.Stages()
	if err != nil {
		return nil, err
	}
	var out []Removed
	for _, st := range stages {
		vs, err := s.Versions(st)
		if err != nil {
			return out, err
		}
		for _, m := range vs {
			if keep.Versions[VersionRef{m.Stage, m.Version}] {
				continue
			}
			r := Removed{Stage: m.Stage, Version: m.Version}
			for _, f := range m.Files {
				r.Bytes += f.Size
			}
			if !dryRun {
				if err := s.remove(s.Dir(m.Stage, m.Version), m.Stage+"-"+m.Version); err != nil {
					return out, fmt.Errorf("remove %s@%s: %w", m.Stage, m.Version, err)
				}
			}
			out = append(out, r)
		}
	}
	memo, err := s.pruneMemo(keep.Memo, dryRun)
	return append(out, memo...), err
}

// pruneMemo removes the memo entries keep does not hold.
func (s *LocalStore) pruneMemo(keep map[MemoRef]bool, dryRun bool) ([]Removed, error) {
	stages, err := os.ReadDir(filepath.Join(s.root, memoDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Removed
	for _, st := range stages {
		if !st.IsDir() {
			continue
		}
		dir := filepath.Join(s.root, memoDir, st.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			return out, err
		}
		for _, e := range ents {
			if keep[MemoRef{st.Name(), e.Name()}] {
				continue
			}
			p := filepath.Join(dir, e.Name())
			r := Removed{Stage: st.Name(), Version: e.Name(), Memo: true, Bytes: treeSize(p)}
			if !dryRun {
				if err := s.remove(p, "memo-"+e.Name()); err != nil {
					return out, fmt.Errorf("remove memo entry %s/%s: %w", r.Stage, r.Version, err)
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Verify implements Store.
func (s *LocalStore) Verify(ctx context.Context) ([]Problem, int, error) {
	stages, err := s.Stages()
	if err != nil {
		return nil, 0, err
	}
	var (
		mu       sync.Mutex
		problems []Problem
		checked  int
	)
	report := func(pr Problem) {
		mu.Lock()
		problems = append(problems, pr)
		mu.Unlock()
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, st := range stages {
		ents, err := os.ReadDir(filepath.Join(s.root, st))
		if err != nil {
			return nil, 0, err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			m, err := s.Manifest(st, e.Name())
			if err != nil {
				what := err.Error()
				if errors.Is(err, ErrNotFound) {
					what = "no manifest: not a complete version"
				}
				report(Problem{Stage: st, Version: e.Name(), What: what})
				continue
			}
			dir := s.Dir(st, m.Version)
			known := map[string]bool{ManifestName: true}
			for _, f := range m.Files {
				known[f.Path] = true
				checked++
				g.Go(func() error {
					if err := gctx.Err(); err != nil {
						return err
					}
					d, err := digest.File(filepath.Join(dir, filepath.FromSlash(f.Path)))
					switch {
					case errors.Is(err, fs.ErrNotExist):
						report(Problem{st, m.Version, f.Path, "missing"})
					case err != nil && d.SHA256 == "":
						report(Problem{st, m.Version, f.Path, err.Error()})
					case d.SHA256 != f.SHA256:
						report(Problem{st, m.Version, f.Path, fmt.Sprintf("content changed (sha256 %s, manifest says %s)", d.SHA256[:12], f.SHA256[:12])})
					}
					return nil
				})
			}
			_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				rel, _ := filepath.Rel(dir, path)
				if rel = filepath.ToSlash(rel); !known[rel] {
					report(Problem{st, m.Version, rel, "unexpected file, not in the manifest"})
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, checked, err
	}
	return problems, checked, nil
}
