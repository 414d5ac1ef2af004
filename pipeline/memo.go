package pipeline

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mlsched/mlsched/pipeline/storefile"
)

// memoDir holds every stage's memo entries: root/.memo/<stage>/<key>/. It
// sits beside the stages, not inside one, so that a memo entry is never
// mistaken for a version.
const memoDir = ".memo"

// Memo is a stage's store of intermediate results: units of its work (one
// simulation of a load sweep, say), each kept under a key of everything
// that determines it. A rerun of the stage whose key changed for an
// unrelated reason (one more sweep point, another report option) finds the
// units it already computed and computes only the new ones. A memo entry
// only saves time: the stage must produce the same output with or without
// it.
//
// A unit's key is made like the stage's own, by the same lines (see the
// package doc), visible under MLSCHED_DEBUG_KEY:
//
//	schema mlsched unit key v1
//	name   unit <stage>/<unit>
//	code, salt, seed, extern, ref, input   as in the stage's key
//	config <the part of the stage's config the unit depends on, canonical JSON>
//	<name> <value>   (the unit's own lines: which point it is)
//
// so that no input of the stage can be forgotten, and a unit is named by
// its key alone wherever it runs.
//
// Entries are built in the store's .tmp and renamed into place when
// complete, as versions are, each with a manifest.json that lists its files
// with their sizes, mtimes and digests. An entry is used only while its
// files' bytes match that manifest: Get re-hashes them on every use, so
// that a byte changed with its mtime kept is caught too; a damaged entry
// is removed and computed again, and the run's manifest notes it
// (MemoNote), as does the run's report of the stage. verify re-hashes
// every entry. Each version's
// manifest lists the entries its run used; gc removes those no kept
// version lists.
type Memo struct {
	stage     string
	base      KeyInputs // the stage's key lines; Config is replaced per unit
	root, tmp string
	store     *LocalStore // the store whose .tmp builds entries; nil: tmp does
	mu        sync.Mutex
	used      []string
	redone    []string // "key: why" for each damaged entry computed again
	err       error    // why the memo cannot build entries (no scratch directory)
}

// memoSchema is bumped whenever a memo entry's manifest changes meaning.
const memoSchema = 1

// memoManifest is the manifest.json of a memo entry.
type memoManifest struct {
	Schema int    `json:"schema"`
	Stage  string `json:"stage"`
	Key    string `json:"key"`
	Files  []File `json:"files"`
}

// unitSchema starts every unit's key; bump it when the recipe changes.
const unitSchema = "mlsched unit key v1"

// NewMemo returns a memo whose entries live in dir (built in dir/.tmp),
// outside any store, keyed as the given stage with the key lines base: for
// a stage run by a test or a tool.
func NewMemo(dir, stage string, base KeyInputs) *Memo {
	return &Memo{stage: stage, base: base, root: dir, tmp: filepath.Join(dir, tmpDir)}
}

// Key returns the key of one unit of the stage's work: the stage's key
// lines with config (the part of the stage's config the unit depends on)
// in place of the stage's config, followed by the unit's own "name value"
// lines.
func (m *Memo) Key(unit string, config any, lines [][2]string) (ID, error) {
	if unit == "" {
		return ID{}, errors.New("memo: a unit needs a name")
	}
	cfg, err := canonicalConfig(config)
	if err != nil {
		return ID{}, fmt.Errorf("memo: unit %s: canonical config: %w", unit, err)
	}
	in := m.base
	in.Config, in.UpstreamVersions = cfg, false
	h := newKeyHash(unitSchema, "unit "+m.stage+"/"+unit)
	in.write(h)
	for _, l := range lines {
		h.line(l[0], l[1])
	}
	return h.sum(), nil
}

// Get returns the directory of the entry of a unit (see Key), building it
// first with build when it is not there. build writes into an empty
// directory; if it fails, nothing is kept. Get may be called from several
// goroutines, for different units.
func (m *Memo) Get(unit string, config any, lines [][2]string, build func(dir string) error) (string, error) {
	id, err := m.Key(unit, config, lines)
	if err != nil {
		return "", err
	}
	return m.get(id.String(), build)
}

func (m *Memo) get(key string, build func(dir string) error) (string, error) {
	if _, err := hex.DecodeString(key); err != nil || len(key) != 2*len(ID{}) || strings.ToLower(key) != key {
		return "", fmt.Errorf("memo: key %q is not a hex digest", key)
	}
	if m.err != nil {
		return "", fmt.Errorf("memo: %w", m.err)
	}
	final := filepath.Join(m.root, key)
	m.mu.Lock()
	if !slices.Contains(m.used, key) {
		m.used = append(m.used, key)
	}
	m.mu.Unlock()
	if _, err := os.Stat(final); err == nil {
		// Every use re-hashes the entry's files, whatever their mtimes: a
		// byte flipped in place with its mtime kept would otherwise pass
		// into the stage's output, or stop the stage for good on a file
		// that no longer decodes. An entry is a unit's few KiB, which the
		// stage reads next anyway, from the page cache this fills.
		why, err := checkMemoEntry(final, m.stage, key, false)
		if err != nil {
			return "", fmt.Errorf("memo: %w", err)
		}
		if why == "" {
			return final, nil
		}
		// Never use a damaged entry: take it out of view, then compute it
		// again.
		if err := m.discard(final, key); err != nil {
			return "", fmt.Errorf("memo: remove damaged entry %s: %w", final, err)
		}
		m.mu.Lock()
		m.redone = append(m.redone, key[:versionLen]+": "+why)
		m.mu.Unlock()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("memo: %w", err)
	}
	staging, err := m.scratch("memo-" + key)
	if err != nil {
		return "", fmt.Errorf("memo: %w", err)
	}
	if err := build(staging); err != nil {
		os.RemoveAll(staging)
		return "", err
	}
	files, err := collect(context.Background(), staging)
	if err == nil {
		err = writeMemoManifest(staging, &memoManifest{Schema: memoSchema, Stage: m.stage, Key: key, Files: files})
	}
	if err != nil {
		os.RemoveAll(staging)
		return "", fmt.Errorf("memo: entry %s: %w", key[:versionLen], err)
	}
	if err := os.MkdirAll(m.root, 0o755); err != nil {
		os.RemoveAll(staging)
		return "", fmt.Errorf("memo: %w", err)
	}
	if err := os.Rename(staging, final); err != nil {
		os.RemoveAll(staging)
		if _, statErr := os.Stat(final); statErr == nil {
			return final, nil // built meanwhile by another run: same content
		}
		return "", fmt.Errorf("memo: %w", err)
	}
	return final, syncPath(m.root)
}

// discard takes a damaged entry out of view by a rename into tmp, then
// deletes it. An entry another run already took away is no error.
func (m *Memo) discard(dir, key string) error {
	trash, err := m.scratch("damaged-" + key)
	if err != nil {
		return err
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(dir, filepath.Join(trash, "x")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// scratch makes a fresh directory, whose name starts with prefix, where
// the memo builds: in its store's scratch directory for this process (see
// LocalStore.scratch), else in tmp.
func (m *Memo) scratch(prefix string) (string, error) {
	if m.store != nil {
		return m.store.scratch(prefix)
	}
	if err := os.MkdirAll(m.tmp, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(m.tmp, prefix+"-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// Recomputed says which damaged entries Get removed and computed again,
// and why, one "key: why" line each, sorted.
func (m *Memo) Recomputed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(slices.Values(m.redone))
}

// MemoNote is the key of the manifest note (Manifest.Notes) that lists the
// damaged memo entries a run computed again.
const MemoNote = "memo_recomputed"

// maxNoted bounds the entries MemoNote names one by one: a store of an
// earlier mlsched, whose entries have no manifest, recomputes them all.
const maxNoted = 10

// noteRecomputed records in notes the damaged memo entries computed again.
func noteRecomputed(notes map[string]string, m *Memo) {
	r := m.Recomputed()
	if len(r) == 0 {
		return
	}
	n := len(r)
	if len(r) > maxNoted {
		r = append(r[:maxNoted:maxNoted], fmt.Sprintf("and %d more", n-maxNoted))
	}
	notes[MemoNote] = fmt.Sprintf("%d damaged memo entr%s computed again: %s", n, plural(n, "y", "ies"), strings.Join(r, "; "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeMemoManifest writes the manifest of a memo entry into dir.
func writeMemoManifest(dir string, mm *memoManifest) error {
	b, err := json.MarshalIndent(mm, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ManifestName), append(b, '\n'))
}

// parseMemoManifest reads the manifest of a memo entry from its bytes,
// checking that it describes stage and key and that its files are sane.
func parseMemoManifest(b []byte, path, stage, key string) (*memoManifest, error) {
	var mm memoManifest
	if err := json.Unmarshal(b, &mm); err != nil {
		return nil, fmt.Errorf("%s: damaged manifest: %w", path, err)
	}
	switch {
	case mm.Schema != memoSchema:
		return nil, fmt.Errorf("%s: memo manifest schema %d, this mlsched reads %d", path, mm.Schema, memoSchema)
	case mm.Stage != stage || mm.Key != key:
		return nil, fmt.Errorf("%s: manifest describes memo entry %s/%s, not %s/%s", path, mm.Stage, mm.Key, stage, key)
	}
	if err := checkFiles(mm.Files); err != nil {
		return nil, fmt.Errorf("%s: damaged manifest: %w", path, err)
	}
	return &mm, nil
}

// checkMemoEntry compares a memo entry's files with its manifest and
// returns why it cannot be used, or "" when it is intact. Sizes are always
// compared; with quick a file whose mtime matches is trusted and the
// others are re-hashed, without it every file is (verify). err is for a
// failure to look, not for damage.
func checkMemoEntry(dir, stage, key string, quick bool) (why string, err error) {
	path := filepath.Join(dir, ManifestName)
	b, err := storefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "no manifest.json (an entry of an earlier mlsched, or damaged)", nil
	}
	if errors.Is(err, storefile.ErrForeign) {
		return err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	mm, err := parseMemoManifest(b, path, stage, key)
	if err != nil {
		return err.Error(), nil
	}
	var bad []string
	for _, f := range mm.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		fi, err := storefile.Check(p)
		switch {
		case errors.Is(err, storefile.ErrForeign):
			bad = append(bad, f.Path+": "+errors.Unwrap(err).Error())
			continue
		case err != nil:
			bad = append(bad, f.Path+" is missing")
			continue
		case fi.Size() != f.Size:
			bad = append(bad, fmt.Sprintf("%s has %d bytes, manifest says %d", f.Path, fi.Size(), f.Size))
			continue
		case quick && fi.ModTime().UnixNano() == f.ModTime:
			continue
		}
		if sum, err := fileSHA256(p); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", f.Path, err))
		} else if sum != f.SHA256 {
			bad = append(bad, fmt.Sprintf("%s changed since it was written", f.Path))
		}
	}
	return strings.Join(bad, "; "), nil
}

// MemoSpec is a Memo as a worker process receives it (Task.Memo): where
// its entries live and the stage's key lines.
type MemoSpec struct {
	Stage string    `json:"stage"`
	Base  KeyInputs `json:"base"`
	Root  string    `json:"root"`
	Tmp   string    `json:"tmp"`
}

// Spec describes the memo for a worker process. Its entries are built in
// this process's scratch directory of the store, which lasts while the
// stage's staging directory is in it, that is while the worker runs.
func (m *Memo) Spec() MemoSpec {
	tmp := m.tmp
	if m.store != nil {
		if own, err := m.store.ownDir(); err == nil {
			tmp = own
		}
	}
	return MemoSpec{Stage: m.stage, Base: m.base, Root: m.root, Tmp: tmp}
}

// open returns the memo a spec describes.
func (s MemoSpec) open() *Memo {
	return &Memo{stage: s.Stage, base: s.Base, root: s.Root, tmp: s.Tmp}
}

// Use records entries used elsewhere (by a worker process, or a worker
// machine), so that the version lists them and gc keeps them.
func (m *Memo) Use(keys ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if !slices.Contains(m.used, k) {
			m.used = append(m.used, k)
		}
	}
}

// Used returns the keys of the entries Get was asked for, sorted.
func (m *Memo) Used() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(slices.Values(m.used))
}

// Entry returns the directory of an intact entry, its files and its
// manifest's bytes, for copying it elsewhere (a shared remote); an entry
// this memo lacks, or whose files no longer match its manifest, is
// ErrNotFound.
func (m *Memo) Entry(key string) (dir string, files []File, manifest []byte, err error) {
	dir = filepath.Join(m.root, key)
	path := filepath.Join(dir, ManifestName)
	b, err := storefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil, fmt.Errorf("memo entry %s/%.16s: %w", m.stage, key, ErrNotFound)
	}
	if err != nil {
		return "", nil, nil, err
	}
	why, err := checkMemoEntry(dir, m.stage, key, true)
	if err != nil {
		return "", nil, nil, err
	}
	if why != "" {
		return "", nil, nil, fmt.Errorf("memo entry %s/%.16s: %s: %w", m.stage, key, why, ErrNotFound)
	}
	mm, err := parseMemoManifest(b, path, m.stage, key)
	if err != nil {
		return "", nil, nil, err
	}
	return dir, mm.Files, b, nil
}

// Install puts an entry built elsewhere into the memo, unless it has it
// intact: fetch writes the entry's files into an empty directory (from a
// shared remote, say), and the entry is kept, with a manifest of what was
// written, only when fetch succeeds.
func (m *Memo) Install(key string, fetch func(dir string) error) error {
	_, err := m.get(key, fetch)
	return err
}

// ParseMemoManifest reads a memo entry's manifest (read from path) and
// returns its files, checking that it describes stage and key.
func ParseMemoManifest(b []byte, path, stage, key string) ([]File, error) {
	mm, err := parseMemoManifest(b, path, stage, key)
	if err != nil {
		return nil, err
	}
	return mm.Files, nil
}
