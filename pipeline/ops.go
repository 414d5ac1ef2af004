package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Pin fixes stage to a stored version: later runs never rerun it, and its
// pinned version feeds downstream. An empty version pins the current one
// (Current); a prefix is enough.
func (p *Pipeline) Pin(ctx context.Context, stage, version string) (string, error) {
	if p.Graph.Stage(stage) == nil {
		_, err := p.Graph.Closure([]string{stage})
		return "", err
	}
	unlock, err := p.Store.Lock(ctx, "mlsched pin", true, p.Waiting)
	if err != nil {
		return "", err
	}
	defer unlock()
	lock, err := p.ReadLock()
	if err != nil {
		return "", err
	}
	var m *Manifest
	if version != "" {
		m, err = Resolve(p.Store, stage, version)
	} else {
		m, err = p.current(stage, lock)
	}
	if err != nil {
		return "", err
	}
	lock.record(m)
	e := lock.Stages[stage]
	e.Pinned = true
	lock.Stages[stage] = e
	return m.Version, p.writeLock(lock)
}

// Current returns the version of stage that commands mean when they name
// none: the one pipeline.lock records, if the store has it, or else the
// newest stored one. It fails, wrapping ErrNotFound, when the store holds
// no version of the stage.
func (p *Pipeline) Current(stage string) (*Manifest, error) {
	lock, err := p.ReadLock()
	if err != nil {
		return nil, err
	}
	return p.current(stage, lock)
}

func (p *Pipeline) current(stage string, lock *LockFile) (*Manifest, error) {
	if e, ok := lock.Stages[stage]; ok {
		m, err := p.Store.Manifest(stage, e.Version)
		if err == nil {
			return m, nil
		}
		var foreign *foreignFolderError
		if errors.As(err, &foreign) {
			// Not the store's: no run replaces it (see versionDir).
			return nil, fmt.Errorf("%s names %s@%s: %w", p.LockPath, stage, e.Version, err)
		}
		if !errors.Is(err, ErrNotFound) {
			// The version the lock file names is there but unreadable:
			// say so rather than fall back on another one.
			return nil, fmt.Errorf("%s names %s@%s: %w ('mlsched verify' lists every damaged version; 'mlsched run --force %s' rebuilds it)", p.LockPath, stage, e.Version, err, stage)
		}
	}
	vs, err := p.Store.Versions(stage)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		if bad, err := p.Store.Unreadable(stage); err == nil && len(bad) > 0 {
			var what []string
			for _, b := range bad {
				what = append(what, b.String())
			}
			return nil, fmt.Errorf("stage %s has no readable version in %s: %s ('mlsched verify' lists every damaged version)", stage, p.Store.Location(), strings.Join(what, "; "))
		}
		return nil, notFound(fmt.Sprintf("stage %s has no stored version in %s (run 'mlsched run %s')", stage, p.Store.Location(), stage))
	}
	return vs[len(vs)-1], nil
}

// Unpin lets stage be rerun again when its inputs change.
func (p *Pipeline) Unpin(ctx context.Context, stage string) error {
	if p.Graph.Stage(stage) == nil {
		_, err := p.Graph.Closure([]string{stage})
		return err
	}
	unlock, err := p.Store.Lock(ctx, "mlsched unpin", true, p.Waiting)
	if err != nil {
		return err
	}
	defer unlock()
	lock, err := p.ReadLock()
	if err != nil {
		return err
	}
	e, ok := lock.Stages[stage]
	if !ok || !e.Pinned {
		return fmt.Errorf("stage %s is not pinned", stage)
	}
	e.Pinned = false
	lock.Stages[stage] = e
	return p.writeLock(lock)
}

// GCOptions says what gc keeps besides what the lock files name, and who
// hears of what it removes.
type GCOptions struct {
	// Keep is how many of each stage's newest versions are kept besides.
	Keep int
	// DryRun only reports what would be removed.
	DryRun bool
	// Plan, if set, is told what gc is about to remove before it removes
	// anything (with DryRun, what it would remove).
	Plan func(GCPlan)
}

// GCPlan is what a gc removes, and what it went by.
type GCPlan struct {
	// Locks are the lock files whose versions were kept (LockFiles).
	Locks []string
	// Remove lists the versions and memo entries to remove.
	Remove []Removed
}

// GC removes every stored version that is not kept, the memo entries no
// kept version used, and leftovers of interrupted runs. Kept are the
// versions that any lock file describing this store names (LockFiles:
// the pipeline's own and every other config's beside it, so that one
// config's gc never removes another's current versions), the newest
// opts.Keep versions of each stage, and then, until nothing more is
// added, every stored version that a kept one names as an input or
// references (a Ref): a kept version's provenance never points at a
// version gc removed. opts.Plan is told what will go before anything
// goes; with opts.DryRun nothing does. A lock file of another config
// that does not read stops gc before it removes anything.
func (p *Pipeline) GC(ctx context.Context, opts GCOptions) ([]Removed, error) {
	unlock, err := p.Store.Lock(ctx, "mlsched gc", true, p.Waiting)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lockPaths, locks, err := p.LockFiles()
	if err != nil {
		return nil, fmt.Errorf("gc removes nothing: %w", err)
	}
	stages, err := p.Store.Stages()
	if err != nil {
		return nil, err
	}
	named := map[VersionRef]bool{}
	for _, lf := range locks {
		for st, e := range lf.Stages {
			named[VersionRef{st, e.Version}] = true
		}
	}
	all := map[VersionRef]*Manifest{}
	k := Keep{Versions: map[VersionRef]bool{}, Memo: map[MemoRef]bool{}}
	var work []VersionRef
	for _, st := range stages {
		vs, err := p.Store.Versions(st)
		if err != nil {
			return nil, err
		}
		for i, m := range vs {
			id := VersionRef{st, m.Version}
			all[id] = m
			if named[id] || i >= len(vs)-opts.Keep {
				k.Versions[id] = true
				work = append(work, id)
			}
		}
	}
	for len(work) > 0 {
		m := all[work[len(work)-1]]
		work = work[:len(work)-1]
		var made []VersionRef
		for _, u := range m.Inputs.Upstream {
			made = append(made, VersionRef{u.Stage, u.Version})
		}
		for _, r := range m.Inputs.Refs {
			made = append(made, VersionRef{r.Stage, r.Version})
		}
		for _, id := range made {
			if all[id] != nil && !k.Versions[id] {
				k.Versions[id] = true
				work = append(work, id)
			}
		}
	}
	for id := range k.Versions {
		for _, key := range all[id].Memo {
			k.Memo[MemoRef{id.Stage, key}] = true
		}
	}
	plan, err := p.Store.Prune(k, true)
	if err != nil {
		return nil, err
	}
	if opts.Plan != nil {
		opts.Plan(GCPlan{Locks: lockPaths, Remove: plan})
	}
	if opts.DryRun || len(plan) == 0 {
		return plan, nil
	}
	return p.Store.Prune(k, false)
}

// crossCheck compares a lock file's entry with the manifest of the version
// it names, both of the same output: a file one lists and the other lacks,
// or whose digest differs, means one of them was edited.
func crossCheck(lockPath string, e LockEntry, m *Manifest) []Problem {
	var out []Problem
	bad := func(path, what string) {
		out = append(out, Problem{Stage: m.Stage, Version: m.Version, Path: path, What: what})
	}
	files := map[string]File{}
	for _, f := range m.Files {
		files[f.Path] = f
	}
	locked := map[string]bool{}
	for _, lf := range e.Files {
		locked[lf.Path] = true
		f, ok := files[lf.Path]
		switch {
		case !ok:
			bad(lf.Path, fmt.Sprintf("recorded in %s but not in the version's manifest", lockPath))
		case f.SHA256 != lf.SHA256 || f.Size != lf.Size:
			bad(lf.Path, fmt.Sprintf("%s records %d bytes, sha256 %.12s; the manifest %d bytes, sha256 %.12s", lockPath, lf.Size, lf.SHA256, f.Size, f.SHA256))
		}
	}
	for _, f := range m.Files {
		if !locked[f.Path] {
			bad(f.Path, fmt.Sprintf("in the version's manifest but not recorded in %s", lockPath))
		}
	}
	return out
}

// Verify re-hashes every file of every stored version and reports each
// damaged, missing or unexpected file, each directory that is not a complete
// version, and each lock file entry the store cannot provide; and then
// every published copy (verifyPublished). It returns the number of files
// checked.
func (p *Pipeline) Verify(ctx context.Context) ([]Problem, int, error) {
	lock, err := p.ReadLock()
	if err != nil {
		return nil, 0, err
	}
	problems, checked, err := p.Store.Verify(ctx)
	if err != nil {
		return nil, checked, err
	}
	published, n, err := p.verifyPublished(ctx)
	checked += n
	if err != nil {
		return nil, checked, err
	}
	problems = append(problems, published...)
	for _, name := range slices.Sorted(maps.Keys(lock.Stages)) {
		e := lock.Stages[name]
		m, err := p.Store.Manifest(name, e.Version)
		if errors.Is(err, ErrNotFound) {
			problems = append(problems, Problem{Stage: name, Version: e.Version, What: fmt.Sprintf("recorded in %s but not in the store", p.LockPath)})
		}
		if err != nil || m.Output != e.Output {
			// A damaged manifest is already reported; another output is
			// a version rebuilt since the lock file was written (by a
			// forced run that then failed), which the next run records.
			continue
		}
		problems = append(problems, crossCheck(p.LockPath, e, m)...)
	}
	slices.SortFunc(problems, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Stage, b.Stage), boolCompare(a.Memo, b.Memo), strings.Compare(a.Version, b.Version), strings.Compare(a.Path, b.Path))
	})
	return problems, checked, nil
}

// verifyPublished re-hashes every copy that a folder's provenance file
// (ProvenanceName) lists, in the folders the pipeline's stages publish to,
// and reports each whose bytes differ from the digest it records, or that
// is missing; and, for a copy of one of this store's versions, a digest
// that differs from the version's manifest. The copies are outside the
// store, but they are what a user opens: a byte changed in one, its mtime
// kept, used to pass verify as "all intact".
func (p *Pipeline) verifyPublished(ctx context.Context) ([]Problem, int, error) {
	if p.Root == "" {
		return nil, 0, nil
	}
	dirs := map[string]bool{}
	for _, n := range p.Graph.Names() {
		for _, pub := range p.Graph.Stage(n).Publish {
			dirs[pub.Dir] = true
		}
	}
	var problems []Problem
	checked := 0
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		pvPath := filepath.Join(p.Root, dir, ProvenanceName)
		b, err := os.ReadFile(pvPath)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		rel := path.Join(filepath.ToSlash(dir), ProvenanceName)
		var pv Provenance
		if err == nil {
			err = json.Unmarshal(b, &pv)
		}
		if err != nil {
			problems = append(problems, Problem{Path: rel, What: fmt.Sprintf("%v (the next 'mlsched run' writes it again)", err)})
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(pv.Files)) {
			if err := ctx.Err(); err != nil {
				return nil, checked, err
			}
			src := pv.Files[name]
			pr := Problem{Stage: src.Stage, Version: src.Version, Path: path.Join(filepath.ToSlash(dir), name)}
			checked++
			sum, err := fileSHA256(filepath.Join(p.Root, dir, name))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				pr.What = "published copy missing (the next 'mlsched run' publishes it again)"
				problems = append(problems, pr)
				continue
			case err != nil:
				pr.What = fmt.Sprintf("published copy unreadable: %v", err)
				problems = append(problems, pr)
				continue
			case sum != src.SHA256 && !p.storedAs(src.Stage, name, sum):
				pr.What = fmt.Sprintf("published copy changed: sha256 %s, %s records %s (the next 'mlsched run' puts the stored file back)", sum, rel, src.SHA256)
				problems = append(problems, pr)
				continue
			case sum != src.SHA256:
				// Another stored version's file, whole: a publisher killed
				// between the copy and the provenance file, which the next
				// run brings up to date. Nothing is damaged.
				continue
			}
			if src.Store != p.Store.Location() {
				continue // another store's version: its manifest is there
			}
			m, err := p.Store.Manifest(src.Stage, src.Version)
			if err != nil {
				continue // gone since (gc), or damaged, which the store's check reports
			}
			for _, f := range m.Files {
				if path.Base(f.Path) == name && f.SHA256 != src.SHA256 {
					pr.What = fmt.Sprintf("%s records sha256 %s, the version's manifest %s for %s", rel, src.SHA256, f.SHA256, f.Path)
					problems = append(problems, pr)
				}
			}
		}
	}
	return problems, checked, nil
}

// storedAs says whether a stored version of stage has a file named name
// (its base name) with digest sum.
func (p *Pipeline) storedAs(stage, name, sum string) bool {
	vs, err := p.Store.Versions(stage)
	if err != nil {
		return false
	}
	for _, m := range vs {
		for _, f := range m.Files {
			if path.Base(f.Path) == name && f.SHA256 == sum {
				return true
			}
		}
	}
	return false
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Planned returns the version of stage that the current config makes (its
// pinned version, if pinned). Its upstreams' outputs must be in the store:
// a stage's key holds their digests.
func (p *Pipeline) Planned(stage string) (string, error) {
	sts, err := p.Status([]string{stage})
	if err != nil {
		return "", err
	}
	for _, st := range sts {
		if st.Stage != stage {
			continue
		}
		if st.Version == "" {
			return "", fmt.Errorf("%s: its upstreams' outputs are not in %s, so the version its config makes cannot be known yet: pull or run them first", stage, p.Store.Location())
		}
		return st.Version, nil
	}
	return "", fmt.Errorf("stage %q: %w", stage, ErrNotFound)
}
