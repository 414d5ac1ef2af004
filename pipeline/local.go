package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/mlsched/mlsched/pipeline/digest"
	"github.com/mlsched/mlsched/pipeline/storefile"
)

// LocalStore is a Store in a directory of this machine: root/<stage>/<version>/
// holds a version's files and its manifest, root/.memo/<stage>/<key>/ a memo
// entry. Versions and memo entries are built in root/.tmp and renamed into
// place only when complete, so a crash at any moment leaves either the old
// state or the complete new one.
type LocalStore struct {
	root string

	// own is this process's directory in root/.tmp, where its staging
	// directories are made; ownF holds a flock on it for as long as the
	// process may write there, so that another process's clean-up (Lock)
	// tells a live run's scratch from a dead one's even when the store's
	// lock file was deleted under a running process.
	mu   sync.Mutex
	own  string
	ownF *os.File
}

// LocalStore is the one Store, and so each of its parts.
var (
	_ Store           = (*LocalStore)(nil)
	_ StoreReader     = (*LocalStore)(nil)
	_ StoreWriter     = (*LocalStore)(nil)
	_ MemoStore       = (*LocalStore)(nil)
	_ StoreMaintainer = (*LocalStore)(nil)
)

const (
	tmpDir   = ".tmp"
	lockName = ".lock"
)

// OpenStore returns the local store rooted at root. The directory need not
// exist yet (it is created on the first write), but a path that exists and
// is not a directory is refused.
func OpenStore(root string) (*LocalStore, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("store %s: not a directory (%s)", abs, fi.Mode().Type())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store %s: %w", abs, err)
	}
	return &LocalStore{root: abs}, nil
}

// Root returns the store's absolute path.
func (s *LocalStore) Root() string { return s.root }

// Location implements StoreReader: the store's absolute path.
func (s *LocalStore) Location() string { return s.root }

var _ SpaceReporter = (*LocalStore)(nil)

// Free implements SpaceReporter: the bytes available to this user on the
// store's file system (of its nearest existing ancestor, before the store
// is made).
func (s *LocalStore) Free() (int64, error) {
	dir := s.root
	for {
		var st unix.Statfs_t
		err := unix.Statfs(dir, &st)
		if err == nil {
			return int64(min(st.Bavail, uint64(math.MaxInt64)/uint64(max(st.Bsize, 1)))) * int64(st.Bsize), nil
		}
		parent := filepath.Dir(dir)
		if !errors.Is(err, unix.ENOENT) || parent == dir {
			return 0, &os.PathError{Op: "statfs", Path: dir, Err: err}
		}
		dir = parent
	}
}

// Dir returns the directory of a version.
func (s *LocalStore) Dir(stage, version string) string { return filepath.Join(s.root, stage, version) }

// Open implements StoreReader: a local version is already in place.
func (s *LocalStore) Open(stage, version string) (string, error) {
	return s.versionDir(stage, version)
}

// Manifest implements StoreReader.
func (s *LocalStore) Manifest(stage, version string) (*Manifest, error) {
	dir, err := s.versionDir(stage, version)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s@%s: %w", stage, version, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return readManifest(dir, stage, version)
}

// versionDir returns the directory of a version after checking that it
// and its stage's directory are directories of the store itself. A
// symbolic link there is refused (a foreignFolderError): the store never
// follows a link out of itself, since what the link points to was not
// written by a run, can change without the store seeing it, and would be
// deleted by gc; so no command lists, reads, checks or replaces a
// version through one, and each says so, naming the link.
func (s *LocalStore) versionDir(stage, version string) (string, error) {
	for _, dir := range []string{filepath.Join(s.root, stage), s.Dir(stage, version)} {
		if err := storefile.Dir(dir); errors.Is(err, storefile.ErrForeign) {
			return "", &foreignFolderError{err}
		} else if err != nil {
			return "", err
		}
	}
	return s.Dir(stage, version), nil
}

// foreignFolderError reports a stage's or a version's folder that is not
// a directory of the store: a symbolic link, or a file in a folder's
// place. A run refuses it rather than replace it (the store removes only
// what it made).
type foreignFolderError struct{ err error }

func (e *foreignFolderError) Error() string { return e.err.Error() }
func (e *foreignFolderError) Unwrap() error { return e.err }

// Stages implements StoreReader: every entry of the store's root that may
// be a stage's folder, a symbolic link included, so that Verify and
// Unreadable name a linked one.
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
		if (e.IsDir() || e.Type()&fs.ModeSymlink != 0) && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// stageEntries lists the entries of a stage's folder that may be
// versions: its directories and symbolic links. A stage folder that is
// not a directory of the store itself is a problem, returned as such.
func (s *LocalStore) stageEntries(stage string) ([]fs.DirEntry, *Problem, error) {
	dir := filepath.Join(s.root, stage)
	if err := storefile.Dir(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if errors.Is(err, storefile.ErrForeign) {
		return nil, &Problem{Stage: stage, What: err.Error()}, nil
	} else if err != nil {
		return nil, nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	out := ents[:0]
	for _, e := range ents {
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			out = append(out, e)
		}
	}
	return out, nil, nil
}

// Versions implements StoreReader. A directory without a readable
// manifest is not a version and is skipped (Unreadable and Verify report
// it), as is a symbolic link.
func (s *LocalStore) Versions(stage string) ([]*Manifest, error) {
	ents, _, err := s.stageEntries(stage)
	if err != nil {
		return nil, err
	}
	var out []*Manifest
	for _, e := range ents {
		if m, err := s.Manifest(stage, e.Name()); err == nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *Manifest) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Version, b.Version))
	})
	return out, nil
}

// Unreadable implements StoreReader: versions without a readable
// manifest, versions that are symbolic links, and a stage folder that is
// one (a Problem without a Version).
func (s *LocalStore) Unreadable(stage string) ([]Problem, error) {
	ents, bad, err := s.stageEntries(stage)
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return []Problem{*bad}, nil
	}
	var out []Problem
	for _, e := range ents {
		if _, err := s.Manifest(stage, e.Name()); err != nil {
			what := err.Error()
			if errors.Is(err, ErrNotFound) {
				what = "no manifest: not a complete version"
			}
			out = append(out, Problem{Stage: stage, Version: e.Name(), What: what})
		}
	}
	return out, nil
}

// Check implements StoreReader. It stays fast whatever the artifacts'
// size: only files whose mtime changed are ever read, and only with
// rehash.
func (s *LocalStore) Check(m *Manifest, rehash bool) (damaged []string, touched int, err error) {
	dir, err := s.versionDir(m.Stage, m.Version)
	if err != nil {
		return nil, 0, err
	}
	var changed []int // files whose mtime differs but size matches
	folders := map[string]error{".": nil}
	for i, f := range m.Files {
		if err := checkFolders(dir, path.Dir(f.Path), folders); err != nil {
			damaged = append(damaged, err.Error())
			continue
		}
		fi, err := storefile.Check(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, storefile.ErrForeign):
			damaged = append(damaged, f.Path+": "+errors.Unwrap(err).Error())
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

// checkFolders returns an error when rel, a folder of the version in dir
// (slash-separated), or one above it in the version, is not a directory of
// the store itself (a symbolic link to a folder outside, say), naming it;
// seen remembers each folder's verdict, so that each is looked at once.
func checkFolders(dir, rel string, seen map[string]error) error {
	if err, ok := seen[rel]; ok {
		return err
	}
	err := checkFolders(dir, path.Dir(rel), seen)
	if err == nil {
		if ferr := storefile.Dir(filepath.Join(dir, filepath.FromSlash(rel))); errors.Is(ferr, storefile.ErrForeign) {
			err = fmt.Errorf("%s: %w", rel, errors.Unwrap(ferr))
		}
	}
	seen[rel] = err
	return err
}

// Suspect implements StoreMaintainer: the files' recorded mtimes are
// cleared, which no file has, so Check sees them as changed and re-hashes
// them. The manifest is rewritten through the store's .tmp, as revalidate
// does, so that a writer killed meanwhile leaves nothing in the version.
func (s *LocalStore) Suspect(m *Manifest, paths []string) error {
	m2, err := s.Manifest(m.Stage, m.Version)
	if err != nil {
		return err
	}
	changed := false
	for i := range m2.Files {
		if slices.Contains(paths, m2.Files[i].Path) && m2.Files[i].ModTime != 0 {
			m2.Files[i].ModTime, changed = 0, true
		}
	}
	if !changed {
		return nil
	}
	return rewriteManifest(s.Dir(m.Stage, m.Version), filepath.Join(s.root, tmpDir), m2)
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
		d, err := digestStored(path)
		if err != nil || d.SHA256 != f.SHA256 {
			bad = append(bad, f.Path+" changed since it was written")
			continue
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		f.ModTime = fi.ModTime().UnixNano()
	}
	if len(bad) > 0 {
		return bad, nil
	}
	tmp, err := s.tmpRoot()
	if err != nil {
		return nil, err
	}
	return nil, rewriteManifest(dir, tmp, m)
}

// Begin implements StoreWriter: the staging directory is in root/.tmp, on
// the same file system as the version's final place, so that Commit is a
// rename.
func (s *LocalStore) Begin(stage, version string) (string, error) {
	return s.scratch(stage + "-" + version)
}

// Commit implements StoreWriter. An existing version with the same name
// (a forced rerun, or a damaged version being replaced) is swapped out
// atomically where the kernel allows; a symbolic link in its place is
// refused, not replaced.
func (s *LocalStore) Commit(staging, stage, version string) error {
	// A link in the version's or the stage's place is not replaced, nor
	// committed through (see versionDir).
	if _, err := s.versionDir(stage, version); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
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

// Memo implements MemoStore: a stage's entries live in
// root/.memo/<stage>/ and are built in this process's directory in
// root/.tmp.
func (s *LocalStore) Memo(stage string, base KeyInputs) *Memo {
	m := &Memo{stage: stage, base: base, root: filepath.Join(s.root, memoDir, stage), store: s}
	m.tmp, m.err = s.ownDir()
	return m
}

// Prune implements StoreMaintainer.
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

// Verify implements StoreMaintainer.
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
		ents, bad, err := s.stageEntries(st)
		if err != nil {
			return nil, 0, err
		}
		if bad != nil {
			report(*bad)
			continue
		}
		for _, e := range ents {
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
					d, err := digestStored(filepath.Join(dir, filepath.FromSlash(f.Path)))
					switch {
					case errors.Is(err, fs.ErrNotExist):
						report(Problem{Stage: st, Version: m.Version, Path: f.Path, What: "missing"})
					case errors.Is(err, storefile.ErrForeign):
						report(Problem{Stage: st, Version: m.Version, Path: f.Path, What: errors.Unwrap(err).Error()})
					case err != nil && d.SHA256 == "":
						report(Problem{Stage: st, Version: m.Version, Path: f.Path, What: err.Error()})
					case d.SHA256 != f.SHA256:
						report(Problem{Stage: st, Version: m.Version, Path: f.Path, What: fmt.Sprintf("content changed (sha256 %s, manifest says %s)", d.SHA256[:12], f.SHA256[:12])})
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
					report(Problem{Stage: st, Version: m.Version, Path: rel, What: "unexpected file, not in the manifest"})
				}
				return nil
			})
		}
	}
	n, memoErr := s.verifyMemo(gctx, g, report)
	checked += n
	if err := g.Wait(); err != nil {
		return nil, checked, err
	}
	if memoErr != nil {
		return nil, checked, memoErr
	}
	return problems, checked, nil
}

// verifyMemo re-hashes every memo entry's files, and reports each entry
// that is damaged or has no manifest, and each unexpected file.
func (s *LocalStore) verifyMemo(ctx context.Context, g *errgroup.Group, report func(Problem)) (checked int, err error) {
	root := filepath.Join(s.root, memoDir)
	stages, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for _, st := range stages {
		if !st.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(root, st.Name()))
		if err != nil {
			return checked, err
		}
		for _, e := range ents {
			dir := filepath.Join(root, st.Name(), e.Name())
			if !e.IsDir() {
				report(Problem{Stage: st.Name(), Version: e.Name(), Memo: true, What: "not a memo entry (a file)"})
				continue
			}
			b, err := storefile.ReadFile(filepath.Join(dir, ManifestName))
			var mm *memoManifest
			if err == nil {
				mm, err = parseMemoManifest(b, filepath.Join(dir, ManifestName), st.Name(), e.Name())
			}
			if err != nil {
				what := err.Error()
				if errors.Is(err, fs.ErrNotExist) {
					what = "no manifest.json (an entry of an earlier mlsched, or damaged): the next run that needs it computes it again"
				}
				report(Problem{Stage: st.Name(), Version: e.Name(), Memo: true, What: what})
				continue
			}
			checked += len(mm.Files)
			g.Go(func() error {
				if err := ctx.Err(); err != nil {
					return err
				}
				why, err := checkMemoEntry(dir, st.Name(), e.Name(), false)
				if err != nil || why != "" {
					if why == "" {
						why = err.Error()
					}
					report(Problem{Stage: st.Name(), Version: e.Name(), Memo: true, What: why})
				}
				return nil
			})
			known := map[string]bool{ManifestName: true}
			for _, f := range mm.Files {
				known[f.Path] = true
			}
			_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				rel, _ := filepath.Rel(dir, path)
				if rel = filepath.ToSlash(rel); !known[rel] {
					report(Problem{Stage: st.Name(), Version: e.Name(), Path: rel, Memo: true, What: "unexpected file, not in the manifest"})
				}
				return nil
			})
		}
	}
	return checked, nil
}

// digestStored digests a file of the store, which must be a regular file
// and not a symbolic link: the store never reads through a link, nor
// opens a named pipe put in a file's place, where the open would block.
// (The check comes before digest.File's open rather than in it: package
// digest is part of every stage's code version, and a change there would
// rerun every stage.)
func digestStored(path string) (digest.Digest, error) {
	if _, err := storefile.Check(path); err != nil {
		return digest.Digest{}, err
	}
	return digest.File(path)
}
