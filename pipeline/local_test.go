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
