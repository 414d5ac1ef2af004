package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestDamagedFiles(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	p := h.pipeline()
	if probs, n, err := p.Verify(context.Background()); err != nil || len(probs) != 0 || n != 4 {
		t.Fatalf("Verify on a clean store = %v, %d files, %v", probs, n, err)
	}
	bv := mustStatus(t, p)["b"].Version
	path := filepath.Join(p.Store.(*LocalStore).Dir("b", bv), "out.txt")
	fi, _ := os.Stat(path)
	data, _ := os.ReadFile(path)
	data[0] ^= 0xff // same size, same mtime: invisible to stat, caught by verify
	os.WriteFile(path, data, 0o644)
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	probs, _, err := p.Verify(context.Background())
	if err != nil || len(probs) != 1 || probs[0].Stage != "b" || probs[0].Path != "out.txt" {
		t.Fatalf("Verify = %v, %v; want one problem naming b's out.txt", probs, err)
	}

	// A truncated file is seen without hashing, and the stage reruns.
	cv := mustStatus(t, p)["c"].Version
	os.Truncate(filepath.Join(p.Store.(*LocalStore).Dir("c", cv), "out.txt"), 2)
	st := mustStatus(t, p)["c"]
	if st.State != Stale || !strings.Contains(strings.Join(st.Reasons, ";"), "output damaged") {
		t.Errorf("status of truncated c = %+v", st)
	}
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"c": Ran, "d": Cached})
}

func TestStoreIsRelocatable(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	lock, _ := os.ReadFile(filepath.Join(h.dir, "pipeline.lock"))

	// Copy without preserving mtimes, as a plain cp would.
	moved := t.TempDir()
	if err := os.CopyFS(filepath.Join(moved, "data"), os.DirFS(filepath.Join(h.dir, "data"))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(moved, "pipeline.lock"), lock, 0o644)
	os.RemoveAll(filepath.Join(h.dir, "data"))
	h.dir = moved
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Cached, "b": Cached, "c": Cached, "d": Cached})
	if probs, _, _ := h.pipeline().Verify(context.Background()); len(probs) != 0 {
		t.Errorf("Verify after move: %v", probs)
	}
}

func TestStoreLockExcludesSecondWriter(t *testing.T) {
	st, _ := OpenStore(t.TempDir())
	unlock, err := st.Lock(context.Background(), "first", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Lock(context.Background(), "second", false, nil)
	if !errors.Is(err, ErrStoreBusy) || !strings.Contains(err.Error(), "first") {
		t.Fatalf("second Lock = %v, want ErrStoreBusy naming the holder", err)
	}
	var waited sync.WaitGroup
	waited.Add(1)
	got := make(chan error, 1)
	go func() {
		u, err := st.Lock(context.Background(), "third", true, func(string) { waited.Done() })
		if err == nil {
			u()
		}
		got <- err
	}()
	waited.Wait() // the third is waiting
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("waiting Lock = %v", err)
	}
}

// TestLinksInTheStoreAreRefused: a version folder, a stage folder or a
// version's file that is a symbolic link, here to an identical copy
// outside the store with a byte flipped (its mtime kept), is refused by
// every reader the same way: listed as unreadable, not resolved, reported
// by Verify, not used by a run, which fails naming the link; a linked
// file is damage, and a run rebuilds its version without touching what
// the link points to. A link was used as cached while ls, show and
// verify did not see it.
func TestLinksInTheStoreAreRefused(t *testing.T) {
	tests := []struct {
		name string
		// link moves part of b's version out of the store, puts a link in
		// its place, and returns the moved file's new path.
		link func(t *testing.T, root, version, outside string) string
		// refused says a run must fail (a linked folder); otherwise it
		// rebuilds b.
		refused bool
	}{
		{"version folder", func(t *testing.T, root, v, outside string) string {
			moveAndLink(t, filepath.Join(root, "b", v), filepath.Join(outside, v))
			return filepath.Join(outside, v, "out.txt")
		}, true},
		{"stage folder", func(t *testing.T, root, v, outside string) string {
			moveAndLink(t, filepath.Join(root, "b"), filepath.Join(outside, "b"))
			return filepath.Join(outside, "b", v, "out.txt")
		}, true},
		{"file", func(t *testing.T, root, v, outside string) string {
			moveAndLink(t, filepath.Join(root, "b", v, "out.txt"), filepath.Join(outside, "out.txt"))
			return filepath.Join(outside, "out.txt")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, c, d := diamond()
			h := newHarness(t, a, b, c, d)
			h.mustRun(RunOptions{})
			p := h.pipeline()
			st := p.Store.(*LocalStore)
			bv := mustStatus(t, p)["b"].Version
			outside := t.TempDir()
			moved := tt.link(t, st.Root(), bv, outside)
			flipByte(t, moved, 0)
			want, _ := os.ReadFile(moved)

			const link = "symbolic link to "
			if tt.refused {
				if vs, err := st.Versions("b"); err != nil || len(vs) != 0 {
					t.Errorf("Versions(b) = %d versions, %v; want none", len(vs), err)
				}
				if _, err := st.Manifest("b", bv); err == nil || !strings.Contains(err.Error(), link) {
					t.Errorf("Manifest(b, %s) = %v, want an error saying it is a link", bv, err)
				}
				if _, err := st.Open("b", bv); err == nil || !strings.Contains(err.Error(), link) {
					t.Errorf("Open(b, %s) = %v, want an error saying it is a link", bv, err)
				}
				if _, err := Resolve(st, "b", bv[:6]); err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "never follows a link out of itself") {
					t.Errorf("Resolve(b@%s) = %v, want an error saying it is a link and why that is refused", bv[:6], err)
				}
			}
			probs, _, err := p.Verify(context.Background())
			if err != nil || len(probs) != 1 || probs[0].Stage != "b" || !strings.Contains(probs[0].What, link) {
				t.Errorf("Verify = %v, %v; want one problem saying b's is a link", probs, err)
			}
			_, err = h.run(RunOptions{})
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), link) {
					t.Errorf("run = %v, want an error naming the link", err)
				}
				// Not replaced by a forced run either.
				if _, err := h.run(RunOptions{Targets: []string{"b"}, Force: true}); err == nil || !strings.Contains(err.Error(), link) {
					t.Errorf("run --force b = %v, want an error naming the link", err)
				}
				if fi, err := os.Lstat(st.Dir("b", bv)); err != nil || fi.Mode()&os.ModeSymlink == 0 && tt.name == "version folder" {
					t.Errorf("after the runs, b's version is %v, %v; want the link left in place", fi, err)
				}
			} else if err != nil {
				t.Errorf("run = %v, want b rebuilt", err)
			}
			if got, err := os.ReadFile(moved); err != nil || string(got) != string(want) {
				t.Errorf("the run changed what the link pointed to: %q, %v", got, err)
			}
		})
	}
}

// moveAndLink moves from to to, and puts a symbolic link to it in its
// place.
func moveAndLink(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, from); err != nil {
		t.Fatal(err)
	}
}

// TestALinkedFolderInsideAVersionIsDamage: a folder inside a version that
// is a symbolic link (to a copy outside the store) is damage, named by
// Check, and a run rebuilds the version without touching the copy; it
// was trusted, since each file under it still matched by size and mtime.
func TestALinkedFolderInsideAVersionIsDamage(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		if err := os.MkdirAll(filepath.Join(env.Dir, "sub", "deeper"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "sub", "deeper", "out.txt"), []byte("out"), 0o644)
	}
	h := newHarness(t, a)
	h.mustRun(RunOptions{})
	p := h.pipeline()
	st := p.Store.(*LocalStore)
	m, err := p.Current("a")
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "sub")
	moveAndLink(t, filepath.Join(st.Dir("a", m.Version), "sub"), outside)
	bad, _, err := st.Check(m, true)
	if err != nil || len(bad) != 1 || !strings.Contains(bad[0], "sub: a symbolic link to "+outside) {
		t.Errorf("Check = %q, %v; want sub named as a symbolic link", bad, err)
	}
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran})
	if b, err := os.ReadFile(filepath.Join(outside, "deeper", "out.txt")); err != nil || string(b) != "out" {
		t.Errorf("the rebuild changed what the link pointed to: %q, %v", b, err)
	}
	if fi, err := os.Lstat(filepath.Join(st.Dir("a", m.Version), "sub")); err != nil || !fi.IsDir() {
		t.Errorf("the rebuilt version's sub is %v, %v; want a directory", fi, err)
	}
}
