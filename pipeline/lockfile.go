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
// (the config's own, LockPathOf) for the config's own store, configStore,
// and a file of the same name inside the store for any other (--store),
// so that a run against another store never rewrites the record of the
// config's, and gc and --locked on each store go by its own record.
func LockPathFor(configLock, configStore, store string) string {
	a, errA := filepath.Abs(configStore)
	b, errB := filepath.Abs(store)
	if errA == nil && errB == nil && a == b {
		return configLock
	}
	return filepath.Join(store, filepath.Base(configLock))
}

// LockName is the lock file's name for the config pipeline.yaml.
const LockName = "pipeline.lock"

// LockPathOf returns the path of the lock file of the config at config:
// beside it, named after it with .lock for its extension, so that
// pipeline.yaml's is pipeline.lock, as it always was, and other.yaml's
// other.lock. Each config has its own record because two configs in one
// folder are two pipelines: when they shared pipeline.lock, each run
// rewrote the other's record, --locked then refused the other config's
// own state, and gc removed the versions the other config was current on.
// gc still keeps what every config's lock file names (LockFiles), since
// the configs share the store.
func LockPathOf(config string) string {
	dir, base := filepath.Split(config)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	if stem == "" || ext == lockExt {
		stem = base // never the store's own .lock, nor the config itself
	}
	return filepath.Join(dir, stem+lockExt)
}

const lockExt = ".lock"

// LockFiles returns the lock files that describe the pipeline's store,
// with what each records: the pipeline's own (LockPath) first, and then
// every other config's, found where they are kept: beside LockPath,
// beside the store, and inside it (a run with --store keeps its record
// there). gc keeps what all of them name. A file named *.lock that is
// another tool's (Cargo.lock, yarn.lock, a JSON one without "stages") is
// passed over; one that is mlsched's (it has "stages", or a config of its
// name is beside it) and does not read is an error, for what it names
// cannot be known. A lock file that describes another store is passed
// over; one written before lock files named their store is taken as this
// store's, since keeping more is the safe side.
func (p *Pipeline) LockFiles() ([]string, []*LockFile, error) {
	own, err := p.ReadLock()
	if err != nil {
		return nil, nil, err
	}
	paths, locks := []string{p.LockPath}, []*LockFile{own}
	store, err := filepath.Abs(p.Store.Location())
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	if abs, err := filepath.Abs(p.LockPath); err == nil {
		seen[abs] = true
	}
	dirs := []string{filepath.Dir(p.LockPath), filepath.Dir(store), store}
	var found []string
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		ents, err := os.ReadDir(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for _, e := range ents {
			name := e.Name()
			path := filepath.Join(abs, name)
			if e.IsDir() || !strings.HasSuffix(name, lockExt) || name == lockExt || seen[path] {
				continue
			}
			seen[path] = true
			found = append(found, path)
		}
	}
	slices.Sort(found)
	for _, path := range found {
		lf, ours, err := readOtherLock(path)
		if err != nil {
			return nil, nil, err
		}
		if !ours {
			continue
		}
		if lf.Store != "" {
			ref := filepath.FromSlash(lf.Store)
			if !filepath.IsAbs(ref) {
				ref = filepath.Join(filepath.Dir(path), ref)
			}
			if filepath.Clean(ref) != store {
				continue
			}
		}
		paths, locks = append(paths, path), append(locks, lf)
	}
	return paths, locks, nil
}

// readOtherLock reads a file named *.lock that may be another config's
// lock file: ours is false for another tool's. A file that cannot be read
// is another tool's too (a daemon's, in a shared folder), unless a config
// of its name is beside it.
func readOtherLock(path string) (lf *LockFile, ours bool, err error) {
	stem := strings.TrimSuffix(path, lockExt)
	configBeside := exists(stem+".yaml") || exists(stem+".yml")
	b, err := userfile.ReadFile(path, maxLockSize)
	if err != nil {
		if configBeside {
			return nil, true, err
		}
		return nil, false, nil
	}
	var fields map[string]json.RawMessage
	hasStages := false
	if json.Unmarshal(b, &fields) == nil {
		_, hasStages = fields["stages"]
	}
	if !hasStages && !configBeside {
		return nil, false, nil
	}
	lf, err = parseLockFile(b, path)
	if err != nil {
		return nil, true, fmt.Errorf("%s, another config's lock file: %w", path, err)
	}
	return lf, true, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

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
