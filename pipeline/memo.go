package pipeline

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
)

// memoDir holds every stage's memo entries: root/.memo/<stage>/<key>/. It
// sits beside the stages, not inside one, so that a memo entry is never
// mistaken for a version.
const memoDir = ".memo"

// Memo is a stage's store of intermediate results, each keyed by a digest
// of everything that determines it: a point of a load sweep, say. A rerun
// of the stage whose key changed for an unrelated reason (one more sweep
// point, another report option) finds the results it already computed and
// computes only the new ones. A memo entry only saves time: the stage must
// produce the same output with or without it.
//
// Entries are built in the store's .tmp and renamed into place when
// complete, as versions are. Each version's manifest lists the entries its
// run used; gc removes those no kept version lists.
type Memo struct {
	root, tmp string
	mu        sync.Mutex
	used      []string
}

var memoKey = regexp.MustCompile(`^[0-9a-f]{16,128}$`)

func (s *Store) memo(stage string) *Memo {
	return &Memo{root: filepath.Join(s.Root, memoDir, stage), tmp: filepath.Join(s.Root, tmpDir)}
}

// NewMemo returns a memo whose entries live in dir (built in dir/.tmp),
// outside any store: for a stage run by a test or a tool.
func NewMemo(dir string) *Memo {
	return &Memo{root: dir, tmp: filepath.Join(dir, tmpDir)}
}

// Get returns the directory of the entry with the given key (lower-case
// hex), building it first with build when it is not there. build writes
// into an empty directory; if it fails, nothing is kept. Get may be called
// from several goroutines, for different keys.
func (m *Memo) Get(key string, build func(dir string) error) (string, error) {
	if !memoKey.MatchString(key) {
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
	var r [6]byte
	_, _ = rand.Read(r[:])
	staging := filepath.Join(m.tmp, "memo-"+key+"-"+hex.EncodeToString(r[:]))
	if err := os.Mkdir(staging, 0o755); err != nil {
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
	return final, syncDir(m.root)
}

// Used returns the keys Get was asked for, sorted.
func (m *Memo) Used() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(slices.Values(m.used))
}

// gcMemo removes the memo entries that none of the kept versions lists
// (with dryRun it only reports them).
func (s *Store) gcMemo(kept []*Manifest, dryRun bool) ([]Removed, error) {
	stages, err := os.ReadDir(filepath.Join(s.Root, memoDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, v := range kept {
		for _, k := range v.Memo {
			keep[v.Stage+"/"+k] = true
		}
	}
	var out []Removed
	for _, st := range stages {
		if !st.IsDir() {
			continue
		}
		dir := filepath.Join(s.Root, memoDir, st.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			return out, err
		}
		for _, e := range ents {
			if keep[st.Name()+"/"+e.Name()] {
				continue
			}
			p := filepath.Join(dir, e.Name())
			r := Removed{Stage: st.Name(), Version: e.Name(), Memo: true, Bytes: treeSize(p)}
			if !dryRun {
				if err := os.RemoveAll(p); err != nil {
					return out, fmt.Errorf("remove memo entry %s/%s: %w", r.Stage, r.Version, err)
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
