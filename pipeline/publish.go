package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/mlsched/mlsched/pipeline/storefile"
)

// ProvenanceName is the file, in each folder outputs are published to,
// that says which store, stage, version and bytes every published file
// there came from: models/ and reports/ are outside the store, and any
// store (--store) may publish into them.
const ProvenanceName = "provenance.json"

// Provenance is a ProvenanceName file: each published file's source, by
// file name.
type Provenance struct {
	Files map[string]Source `json:"files"`
}

// Source is where a published file came from.
type Source struct {
	Store   string `json:"store"`
	Stage   string `json:"stage"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// publish copies the files of m that s publishes into their project
// folders, and records where each came from in the folder's
// ProvenanceName. A copy keeps the stored file's mtime, so a cached run
// sees by size and mtime alone that the copy is current and copies
// nothing; the provenance file is rewritten only when it changes. The
// copy comes first, so a kill between the two leaves an entry that the
// next run corrects.
//
// These folders are outside the store, and verify does not see them: a
// copy is written to a temporary file beside its destination, synced and
// renamed into place (replaceFile), so that a published file is never
// half-written. A process killed mid-copy leaves its temporary file behind,
// named with its pid; publish removes those of processes that are gone
// from every folder it publishes to, whether it copies anything there or
// not.
func (p *Pipeline) publish(s *Stage, m *Manifest) error {
	if p.Root == "" {
		return nil
	}
	if len(s.Publish) == 0 {
		return nil
	}
	dir, err := p.Store.Open(m.Stage, m.Version)
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	p.publishing.Lock()
	defer p.publishing.Unlock()
	for _, pub := range s.Publish {
		sources := map[string]Source{}
		for _, f := range m.Files {
			ok, err := path.Match(pub.Glob, f.Path)
			if err != nil {
				return fmt.Errorf("publish %q: %w", pub.Glob, err)
			}
			if !ok {
				continue
			}
			src := filepath.Join(dir, filepath.FromSlash(f.Path))
			dst := filepath.Join(p.Root, pub.Dir, path.Base(f.Path))
			dirs[filepath.Dir(dst)] = true
			sources[path.Base(f.Path)] = Source{Store: p.Store.Location(), Stage: m.Stage, Version: m.Version, SHA256: f.SHA256}
			if fi, err := os.Stat(dst); err == nil && fi.Size() == f.Size && fi.ModTime().UnixNano() == f.ModTime {
				continue
			}
			if err := copyFile(src, dst, f.ModTime); err != nil {
				return fmt.Errorf("publish %s to %s: %w", f.Path, pub.Dir, err)
			}
		}
		if len(sources) > 0 {
			if err := recordProvenance(filepath.Join(p.Root, pub.Dir, ProvenanceName), sources); err != nil {
				return fmt.Errorf("publish to %s: %w", pub.Dir, err)
			}
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := removeDeadTemps(d, ""); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	}
	return nil
}

// recordProvenance sets the entries of sources in the provenance file at
// path, rewriting it (atomically) only when that changes it. A file that
// does not decode is replaced.
func recordProvenance(path string, sources map[string]Source) error {
	var pv Provenance
	old, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(old, &pv)
	}
	if pv.Files == nil {
		pv.Files = map[string]Source{}
	}
	maps.Copy(pv.Files, sources)
	b, err := json.MarshalIndent(pv, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if bytes.Equal(old, b) {
		return nil
	}
	return writeFileAtomic(path, b)
}

// copyFile copies src to dst atomically and gives dst the mtime mtimeNS.
func copyFile(src, dst string, mtimeNS int64) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, _, err := storefile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return replaceFile(dst, time.Unix(0, mtimeNS), func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
