package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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

// PublishIndexName is the publish index's name (Pipeline.PublishIndex) in
// the root of a local store: machine-local knowledge of the copies made
// from it, which the store, not the project, holds.
const PublishIndexName = ".published.json"

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
// ProvenanceName. A copy keeps the stored file's mtime; the provenance
// file is rewritten only when it changes. The copy comes first, so a kill
// between the two leaves an entry that the next run corrects.
//
// A copy that looks current, by its size and mtime, may still have had a
// byte changed in place with its mtime set back, which a run used to leave
// there and verify to call intact. Its ctime tells: every write
// to a file moves it, and no tool sets it back. The publish index
// (PublishIndex) records each copy's size, mtime, ctime and inode when
// publish made it or last read it, with its digest; a copy whose stat
// still says the same is current without a read, so that a cached run
// reads none, and any other is re-hashed once and copied again if its
// bytes differ. The copy itself is hashed on its way out of the store: a
// stored file whose bytes no longer match its manifest is never
// published; the run fails naming it, and marks it for the next run to
// rebuild.
//
// These folders are outside the store: a copy is written to a temporary
// file beside its destination, synced and renamed into place
// (replaceFile), so that a published file is never half-written. A process
// killed mid-copy leaves its temporary file behind, named with its pid;
// publish removes those of processes that are gone from every folder it
// publishes to, whether it copies anything there or not.
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
	idx, err := p.publishIndex()
	if err != nil {
		return err
	}
	root, err := filepath.Abs(p.Root) // the index names copies wherever mlsched runs from
	if err != nil {
		return err
	}
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
			dst := filepath.Join(root, pub.Dir, path.Base(f.Path))
			dirs[filepath.Dir(dst)] = true
			sources[path.Base(f.Path)] = Source{Store: p.Store.Location(), Stage: m.Stage, Version: m.Version, SHA256: f.SHA256}
			if idx.current(dst, f) {
				continue
			}
			if err := copyFile(src, dst, f); err != nil {
				var dmg *storedDamage
				if errors.As(err, &dmg) {
					how := fmt.Sprintf("'mlsched run --force %s' rebuilds it", m.Stage)
					if p.Store.Suspect(m, []string{f.Path}) == nil {
						how = fmt.Sprintf("the next 'mlsched run' rebuilds it (or 'mlsched run --force %s')", m.Stage)
					}
					return fmt.Errorf("publish %s to %s: %s@%s's %s is damaged, sha256 %s on disk, %s in its manifest: nothing was published ('mlsched verify' confirms it; %s): %w",
						f.Path, pub.Dir, m.Stage, m.Version, f.Path, dmg.sum, f.SHA256, how, ErrInputDamaged)
				}
				return fmt.Errorf("publish %s to %s: %w", f.Path, pub.Dir, err)
			}
			if err := idx.record(dst, f.SHA256); err != nil {
				return fmt.Errorf("publish %s to %s: %w", f.Path, pub.Dir, err)
			}
		}
		if len(sources) > 0 {
			if err := recordProvenance(filepath.Join(root, pub.Dir, ProvenanceName), sources); err != nil {
				return fmt.Errorf("publish to %s: %w", pub.Dir, err)
			}
		}
	}
	if err := idx.save(); err != nil {
		return fmt.Errorf("publish: %s: %w", p.PublishIndex, err)
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

// copyFile copies the stored file f at src to dst atomically, giving dst
// f's mtime. It hashes the bytes on their way and, if they are not the
// ones f's manifest records, replaces nothing and returns a *storedDamage.
func copyFile(src, dst string, f File) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, _, err := storefile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return replaceFile(dst, time.Unix(0, f.ModTime), func(w io.Writer) error {
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, h), in); err != nil {
			return err
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
			return &storedDamage{sum: sum}
		}
		return nil
	})
}

// storedDamage is a stored file whose bytes, read to be published, were
// not those of its manifest: sum is their digest.
type storedDamage struct{ sum string }

func (e *storedDamage) Error() string { return "stored file damaged: sha256 " + e.sum }

// copyStamp is what the publish index records of a published copy: what
// stat said of it when publish last made or read it, and the digest of its
// bytes then.
type copyStamp struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	Ctime   int64  `json:"ctime_ns"`
	Inode   uint64 `json:"ino"`
	SHA256  string `json:"sha256"`
}

// indexSchema is bumped whenever the publish index's meaning changes; an
// index of another schema is dropped (every copy is read once).
const indexSchema = 1

// publishIndexFile is the publish index as stored: each copy's stamp by
// its absolute path.
type publishIndexFile struct {
	Schema int                  `json:"schema"`
	Copies map[string]copyStamp `json:"copies"`
}

// copyIndex is the publish index of a run, read once (the first time the
// run publishes) and saved when it changed.
type copyIndex struct {
	path  string // "" keeps nothing across runs
	file  publishIndexFile
	dirty bool
}

// publishIndex returns the run's publish index, reading it the first
// time. An index that is missing, does not decode or is of another
// schema is empty: every copy it would have vouched for is read once.
func (p *Pipeline) publishIndex() (*copyIndex, error) {
	if p.index != nil {
		return p.index, nil
	}
	idx := &copyIndex{path: p.PublishIndex, file: publishIndexFile{Schema: indexSchema}}
	if idx.path != "" {
		b, err := os.ReadFile(idx.path)
		switch {
		case err == nil:
			if json.Unmarshal(b, &idx.file) != nil || idx.file.Schema != indexSchema {
				idx.file = publishIndexFile{Schema: indexSchema}
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("publish index: %w", err)
		}
	}
	if idx.file.Copies == nil {
		idx.file.Copies = map[string]copyStamp{}
	}
	p.index = idx
	return idx, nil
}

// current says whether the copy at dst holds the bytes of the stored file
// f: its size and mtime are f's, and either the index vouches for it (its
// stat is the one recorded with f's digest) or its bytes, read now, are
// f's, which the index then records.
func (idx *copyIndex) current(dst string, f File) bool {
	fi, err := os.Stat(dst)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size || fi.ModTime().UnixNano() != f.ModTime {
		return false
	}
	st := stampOf(fi)
	if rec, ok := idx.file.Copies[dst]; ok && rec.SHA256 == f.SHA256 && rec.Size == st.Size && rec.ModTime == st.ModTime && rec.Ctime == st.Ctime && rec.Inode == st.Inode {
		return true
	}
	if testHookPublishHash != nil {
		testHookPublishHash(dst)
	}
	// The stat is taken before the read: a write meanwhile moves the
	// ctime past the one recorded, and the next run reads the copy again.
	if sum, err := fileSHA256(dst); err != nil || sum != f.SHA256 {
		return false
	}
	st.SHA256 = f.SHA256
	idx.file.Copies[dst], idx.dirty = st, true
	return true
}

// record notes that dst was just written with the bytes of digest sum.
func (idx *copyIndex) record(dst, sum string) error {
	fi, err := os.Stat(dst)
	if err != nil {
		return err
	}
	st := stampOf(fi)
	st.SHA256 = sum
	idx.file.Copies[dst], idx.dirty = st, true
	return nil
}

// save writes the index if it changed, dropping the copies that are gone.
func (idx *copyIndex) save() error {
	if !idx.dirty || idx.path == "" {
		return nil
	}
	for dst := range idx.file.Copies {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			delete(idx.file.Copies, dst)
		}
	}
	b, err := json.MarshalIndent(idx.file, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(idx.path), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(idx.path, append(b, '\n')); err != nil {
		return err
	}
	idx.dirty = false
	return nil
}

// testHookPublishHash, set by tests, is told each published copy publish
// re-hashes.
var testHookPublishHash func(path string)
