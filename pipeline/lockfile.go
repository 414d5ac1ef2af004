package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// lockSchema is bumped whenever the lock file's meaning changes.
const lockSchema = 1

// LockFile is pipeline.lock: after each successful run it records every
// stage's version, output digest and files, and which stages are pinned.
// Users commit it; its content depends only on the versions, never on time,
// so a rerun that changes nothing leaves it byte-identical.
type LockFile struct {
	Schema int                  `json:"schema"`
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

// ReadLockFile reads path; a missing file is an empty lock.
func ReadLockFile(path string) (*LockFile, error) {
	lf := &LockFile{Schema: lockSchema, Stages: map[string]LockEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return lf, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, lf); err != nil {
		return nil, fmt.Errorf("%s: not a valid lock file: %w", path, err)
	}
	if lf.Schema != lockSchema {
		return nil, fmt.Errorf("%s: lock file schema %d, this mlsched reads %d", path, lf.Schema, lockSchema)
	}
	if lf.Stages == nil {
		lf.Stages = map[string]LockEntry{}
	}
	for name, e := range lf.Stages {
		if len(e.Version) != versionLen {
			return nil, fmt.Errorf("%s: stage %s: malformed version %q", path, name, e.Version)
		}
	}
	return lf, nil
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
