package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mlsched/mlsched/pipeline/userfile"
)

// lockSchema is bumped whenever the lock file's meaning changes.
const lockSchema = 1

// LockFile is pipeline.lock: after each successful run it records every
// stage's version, output digest and files, and which stages are pinned.
// Users commit it; its content depends only on the versions, never on time,
// so a rerun that changes nothing leaves it byte-identical.
type LockFile struct {
	Schema int `json:"schema"`
	// Store is the store the lock file describes, relative to the lock
	// file's directory (slash-separated), or absolute when it is
	// elsewhere; empty in a lock file written before it was recorded.
	Store  string               `json:"store,omitempty"`
	Stages map[string]LockEntry `json:"stages"`
}

// LockEntry is one stage's record in the lock file.
type LockEntry struct {
	Version string       `json:"version"`
	Output  string       `json:"output"`
	Pinned  bool         `json:"pinned,omitempty"`
	Files   []LockedFile `json:"files"`
}

// LockedFile is one output file as recorded in the lock file.
type LockedFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// maxLockSize bounds what ReadLockFile reads: a lock file records a few
// stages' files, far below it.
const maxLockSize = 64 << 20

// ReadLockFile reads path; a missing file is an empty lock.
func ReadLockFile(path string) (*LockFile, error) {
	// userfile checks the kind and size of what it opens, not only of
	// what path named a moment before: a FIFO or a device swapped in
	// between never blocks the run.
	b, err := userfile.ReadFile(path, maxLockSize)
	if errors.Is(err, fs.ErrNotExist) {
		return &LockFile{Schema: lockSchema, Stages: map[string]LockEntry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseLockFile(b, path)
}

// parseLockFile decodes a lock file read from path and checks it.
func parseLockFile(b []byte, path string) (*LockFile, error) {
	lf := &LockFile{Schema: lockSchema, Stages: map[string]LockEntry{}}
	if err := json.Unmarshal(b, lf); err != nil {
		return nil, fmt.Errorf("%s: not a valid lock file: %w", path, err)
	}
	if lf.Schema != lockSchema {
		return nil, fmt.Errorf("%s: lock file schema %d, this mlsched reads %d", path, lf.Schema, lockSchema)
	}
	if lf.Stages == nil {
		lf.Stages = map[string]LockEntry{}
	}
	for _, name := range slices.Sorted(maps.Keys(lf.Stages)) {
		e := lf.Stages[name]
		switch {
		case name == "" || !fs.ValidPath(name) || strings.ContainsAny(name, "/@"):
			return nil, fmt.Errorf("%s: %q is not a stage name", path, name)
		case !isHex(e.Version, versionLen):
			return nil, fmt.Errorf("%s: stage %s: malformed version %q", path, name, e.Version)
		case !isHex(e.Output, 64):
			return nil, fmt.Errorf("%s: stage %s: malformed output digest %q", path, name, e.Output)
		}
		for i, f := range e.Files {
			if f.Path == "" || !fs.ValidPath(f.Path) || f.Size < 0 || !isHex(f.SHA256, 64) {
				return nil, fmt.Errorf("%s: stage %s: files[%d]: malformed entry (path %q, size %d, sha256 %q)", path, name, i, f.Path, f.Size, f.SHA256)
			}
		}
	}
	return lf, nil
}

// LockPathFor returns where the lock file of a store lives: configLock
// (the config's pipeline.lock) for the config's own store, configStore,
// and pipeline.lock inside the store for any other (--store), so that a
// run against another store never rewrites the record of the config's,
// and gc and --locked on each store go by its own record.
func LockPathFor(configLock, configStore, store string) string {
	a, errA := filepath.Abs(configStore)
	b, errB := filepath.Abs(store)
	if errA == nil && errB == nil && a == b {
		return configLock
	}
	return filepath.Join(store, LockName)
}

// LockName is the lock file's name.
const LockName = "pipeline.lock"

// ReadLock reads the pipeline's lock file, refusing one that describes
// another store than the pipeline's.
func (p *Pipeline) ReadLock() (*LockFile, error) {
	lf, err := ReadLockFile(p.LockPath)
	if err != nil {
		return nil, err
	}
	if lf.Store == "" {
		return lf, nil // written before lock files named their store: adopted
	}
	want := p.storeRef()
	if lf.Store != want {
		return nil, fmt.Errorf("%s describes the store %s, not %s: run with --store %s, or move %s away to start a new record of this store",
			p.LockPath, p.resolveStoreRef(lf.Store), p.Store.Location(), p.resolveStoreRef(lf.Store), p.LockPath)
	}
	return lf, nil
}

// writeLock writes the lock file, naming the pipeline's store in it.
func (p *Pipeline) writeLock(lf *LockFile) error {
	lf.Store = p.storeRef()
	return lf.Write(p.LockPath)
}

// storeRef is how the lock file names the pipeline's store: its path
// relative to the lock file's directory when it has one, else its
// location.
func (p *Pipeline) storeRef() string {
	loc := p.Store.Location()
	if !filepath.IsAbs(loc) {
		return loc
	}
	dir, err := filepath.Abs(filepath.Dir(p.LockPath))
	if err != nil {
		return filepath.ToSlash(loc)
	}
	if rel, err := filepath.Rel(dir, loc); err == nil {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(loc)
}

// resolveStoreRef turns a lock file's store back into a path, for messages.
func (p *Pipeline) resolveStoreRef(ref string) string {
	r := filepath.FromSlash(ref)
	if filepath.IsAbs(r) {
		return r
	}
	dir, err := filepath.Abs(filepath.Dir(p.LockPath))
	if err != nil {
		return ref
	}
	return filepath.Join(dir, r)
}

// Write saves the lock file atomically. A file that already holds these
// bytes is left alone: a run that changed nothing writes nothing, and pays
// for no fsync.
func (lf *LockFile) Write(path string) error {
	b, err := json.MarshalIndent(lf, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		// Nothing to write; but a writer killed mid-write may have left
		// its temporary file (see replaceFile).
		dir, name := filepath.Split(path)
		return removeDeadTemps(filepath.Clean(dir), name)
	}
	return writeFileAtomic(path, b)
}

// record sets a stage's entry from its manifest, keeping its pin.
func (lf *LockFile) record(m *Manifest) {
	e := LockEntry{Version: m.Version, Output: m.Output, Pinned: lf.Stages[m.Stage].Pinned}
	for _, f := range m.Files {
		e.Files = append(e.Files, LockedFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256})
	}
	lf.Stages[m.Stage] = e
}

// pinned returns the pinned version of a stage, if it is pinned.
func (lf *LockFile) pinned(stage string) (string, bool) {
	e, ok := lf.Stages[stage]
	return e.Version, ok && e.Pinned
}
