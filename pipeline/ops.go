package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mlsched/mlsched/pipeline/digest"
)

// Pin fixes stage to a stored version: later runs never rerun it, and its
// pinned version feeds downstream. An empty version pins the version the
// lock file records, or else the newest stored one; a prefix is enough.
func (p *Pipeline) Pin(ctx context.Context, stage, version string) (string, error) {
	if p.Graph.Stage(stage) == nil {
		_, err := p.Graph.Closure([]string{stage})
		return "", err
	}
	unlock, err := p.Store.Lock(ctx, "mlsched pin", true, nil)
	if err != nil {
		return "", err
	}
	defer unlock()
	lock, err := ReadLockFile(p.LockPath)
	if err != nil {
		return "", err
	}
	var m *Manifest
	switch {
	case version != "":
		m, err = p.Store.Resolve(stage, version)
	case lock.Stages[stage].Version != "":
		m, err = p.Store.Manifest(stage, lock.Stages[stage].Version)
	default:
		m = p.reference(stage, lock)
		if m == nil {
			err = fmt.Errorf("stage %s has no stored version to pin (run it first): %w", stage, ErrNotFound)
		}
	}
	if err != nil {
		return "", err
	}
	lock.record(m)
	e := lock.Stages[stage]
	e.Pinned = true
	lock.Stages[stage] = e
	return m.Version, lock.Write(p.LockPath)
}

// Unpin lets stage be rerun again when its inputs change.
func (p *Pipeline) Unpin(ctx context.Context, stage string) error {
	if p.Graph.Stage(stage) == nil {
		_, err := p.Graph.Closure([]string{stage})
		return err
	}
	unlock, err := p.Store.Lock(ctx, "mlsched unpin", true, nil)
	if err != nil {
		return err
	}
	defer unlock()
	lock, err := ReadLockFile(p.LockPath)
	if err != nil {
		return err
	}
	e, ok := lock.Stages[stage]
	if !ok || !e.Pinned {
		return fmt.Errorf("stage %s is not pinned", stage)
	}
	e.Pinned = false
	lock.Stages[stage] = e
	return lock.Write(p.LockPath)
}

// Removed describes a version deleted by GC.
type Removed struct {
	Stage, Version string
	Bytes          int64
	// Memo is true for a memo entry (Version is then its key).
	Memo bool
}

// GC removes every stored version that neither the lock file references nor
// is among the newest keep versions of its stage nor is read by a kept
// version's key (evaluate.compare_to's), the memo entries no kept version
// used, and leftovers of interrupted runs. With dryRun it only reports what it would remove.
func (p *Pipeline) GC(ctx context.Context, keep int, dryRun bool) ([]Removed, error) {
	unlock, err := p.Store.Lock(ctx, "mlsched gc", true, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lock, err := ReadLockFile(p.LockPath)
	if err != nil {
		return nil, err
	}
	if !dryRun {
		if err := p.Store.cleanTmp(); err != nil {
			return nil, err
		}
	}
	stages, err := p.Store.Stages()
	if err != nil {
		return nil, err
	}
	// Keep what the lock file names and the newest keep versions of each
	// stage, then every stored version a kept one read through its key
	// (an Extern entry "stage@version/file", as evaluate.compare_to
	// makes), until nothing more is added.
	all := map[string]*Manifest{}
	var order []string
	keepSet := map[string]bool{}
	for _, st := range stages {
		vs, err := p.Store.Versions(st)
		if err != nil {
			return nil, err
		}
		for i, m := range vs {
			id := st + "@" + m.Version
			all[id] = m
			order = append(order, id)
			if lock.Stages[st].Version == m.Version || i >= len(vs)-keep {
				keepSet[id] = true
			}
		}
	}
	for grown := true; grown; {
		grown = false
		for id := range keepSet {
			for ref := range all[id].Inputs.Extern {
				ref, _, _ = strings.Cut(ref, "/")
				if all[ref] != nil && !keepSet[ref] {
					keepSet[ref], grown = true, true
				}
			}
		}
	}
	var out []Removed
	var kept []*Manifest
	for _, id := range order {
		m := all[id]
		if keepSet[id] {
			kept = append(kept, m)
			continue
		}
		r := Removed{Stage: m.Stage, Version: m.Version}
		for _, f := range m.Files {
			r.Bytes += f.Size
		}
		if !dryRun {
			if err := p.Store.remove(m.Stage, m.Version); err != nil {
				return out, fmt.Errorf("remove %s@%s: %w", m.Stage, m.Version, err)
			}
		}
		out = append(out, r)
	}
	memo, err := p.Store.gcMemo(kept, dryRun)
	return append(out, memo...), err
}

// Verify re-hashes every file of every stored version and reports each
// damaged, missing or unexpected file, each directory that is not a complete
// version, and each lock file entry the store cannot provide. It returns the
// number of files checked.
func (p *Pipeline) Verify(ctx context.Context) ([]Problem, int, error) {
	lock, err := ReadLockFile(p.LockPath)
	if err != nil {
		return nil, 0, err
	}
	stages, err := p.Store.Stages()
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
		ents, err := os.ReadDir(filepath.Join(p.Store.Root, st))
		if err != nil {
			return nil, 0, err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			m, err := p.Store.Manifest(st, e.Name())
			if err != nil {
				what := err.Error()
				if errors.Is(err, ErrNotFound) {
					what = "no manifest: not a complete version"
				}
				report(Problem{Stage: st, Version: e.Name(), What: what})
				continue
			}
			dir := p.Store.Dir(st, m.Version)
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
	for _, name := range slices.Sorted(maps.Keys(lock.Stages)) {
		e := lock.Stages[name]
		if _, err := p.Store.Manifest(name, e.Version); err != nil {
			report(Problem{Stage: name, Version: e.Version, What: fmt.Sprintf("recorded in %s but not in the store", filepath.Base(p.LockPath))})
		}
	}
	slices.SortFunc(problems, func(a, b Problem) int {
		if c := strings.Compare(a.Stage, b.Stage); c != 0 {
			return c
		}
		if c := strings.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return problems, checked, nil
}
