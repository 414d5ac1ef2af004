package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"maps"
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
	lock, err := ReadLockFile(p.LockPath)
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
	return m.Version, lock.Write(p.LockPath)
}

// Current returns the version of stage that commands mean when they name
// none: the one pipeline.lock records, if the store has it, or else the
// newest stored one. It fails, wrapping ErrNotFound, when the store holds
// no version of the stage.
func (p *Pipeline) Current(stage string) (*Manifest, error) {
	lock, err := ReadLockFile(p.LockPath)
	if err != nil {
		return nil, err
	}
	return p.current(stage, lock)
}

func (p *Pipeline) current(stage string, lock *LockFile) (*Manifest, error) {
	if e, ok := lock.Stages[stage]; ok {
		if m, err := p.Store.Manifest(stage, e.Version); err == nil {
			return m, nil
		}
	}
	vs, err := p.Store.Versions(stage)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
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

// GC removes every stored version that neither the lock file references nor
// is among the newest keep versions of its stage nor is referenced (a Ref)
// by a kept version, the memo entries no kept version used, and leftovers
// of interrupted runs. With dryRun it only reports what it would remove.
func (p *Pipeline) GC(ctx context.Context, keep int, dryRun bool) ([]Removed, error) {
	unlock, err := p.Store.Lock(ctx, "mlsched gc", true, p.Waiting)
	if err != nil {
		return nil, err
	}
	defer unlock()
	lock, err := ReadLockFile(p.LockPath)
	if err != nil {
		return nil, err
	}
	stages, err := p.Store.Stages()
	if err != nil {
		return nil, err
	}
	// Keep what the lock file names and the newest keep versions of each
	// stage, then every stored version a kept one references, until
	// nothing more is added.
	all := map[VersionRef]*Manifest{}
	k := Keep{Versions: map[VersionRef]bool{}, Memo: map[MemoRef]bool{}}
	for _, st := range stages {
		vs, err := p.Store.Versions(st)
		if err != nil {
			return nil, err
		}
		for i, m := range vs {
			id := VersionRef{st, m.Version}
			all[id] = m
			if lock.Stages[st].Version == m.Version || i >= len(vs)-keep {
				k.Versions[id] = true
			}
		}
	}
	for grown := true; grown; {
		grown = false
		for id := range k.Versions {
			for _, r := range all[id].Inputs.Refs {
				ref := VersionRef{r.Stage, r.Version}
				if all[ref] != nil && !k.Versions[ref] {
					k.Versions[ref], grown = true, true
				}
			}
		}
	}
	for id := range k.Versions {
		for _, key := range all[id].Memo {
			k.Memo[MemoRef{id.Stage, key}] = true
		}
	}
	return p.Store.Prune(k, dryRun)
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
	problems, checked, err := p.Store.Verify(ctx)
	if err != nil {
		return nil, checked, err
	}
	for _, name := range slices.Sorted(maps.Keys(lock.Stages)) {
		e := lock.Stages[name]
		if _, err := p.Store.Manifest(name, e.Version); err != nil {
			problems = append(problems, Problem{Stage: name, Version: e.Version, What: fmt.Sprintf("recorded in %s but not in the store", filepath.Base(p.LockPath))})
		}
	}
	slices.SortFunc(problems, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Stage, b.Stage), strings.Compare(a.Version, b.Version), strings.Compare(a.Path, b.Path))
	})
	return problems, checked, nil
}
