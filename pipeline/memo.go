package pipeline

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
// complete, as versions are. Each version's manifest lists the entries its
// run used; gc removes those no kept version lists.
type Memo struct {
	stage     string
	base      KeyInputs // the stage's key lines; Config is replaced per unit
	root, tmp string
	mu        sync.Mutex
	used      []string
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
	final := filepath.Join(m.root, key)
	m.mu.Lock()
	if !slices.Contains(m.used, key) {
		m.used = append(m.used, key)
	}
	m.mu.Unlock()
	if _, err := os.Stat(final); err == nil {
		return final, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("memo: %w", err)
	}
	if err := os.MkdirAll(m.tmp, 0o755); err != nil {
		return "", fmt.Errorf("memo: %w", err)
	}
	staging, err := os.MkdirTemp(m.tmp, "memo-"+key+"-")
	if err == nil {
		err = os.Chmod(staging, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("memo: %w", err)
	}
	if err := build(staging); err != nil {
		os.RemoveAll(staging)
		return "", err
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

// MemoSpec is a Memo as a worker process receives it (Task.Memo): where
// its entries live and the stage's key lines.
type MemoSpec struct {
	Stage string    `json:"stage"`
	Base  KeyInputs `json:"base"`
	Root  string    `json:"root"`
	Tmp   string    `json:"tmp"`
}

// Spec describes the memo for a worker process.
func (m *Memo) Spec() MemoSpec {
	return MemoSpec{Stage: m.stage, Base: m.base, Root: m.root, Tmp: m.tmp}
}

// open returns the memo a spec describes.
func (s MemoSpec) open() *Memo {
	return &Memo{stage: s.Stage, base: s.Base, root: s.Root, tmp: s.Tmp}
}

// use records entries used elsewhere (by a worker process).
func (m *Memo) use(keys ...string) {
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
