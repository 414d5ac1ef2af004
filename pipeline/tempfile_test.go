package pipeline

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestTempOwner(t *testing.T) {
	tests := []struct {
		temp string
		name string
		pid  int
		ok   bool
	}{
		{".report.md.tmp-123-456", "report.md", 123, true},
		{".a.tmp-b.tmp-7-8", "a.tmp-b", 7, true},
		{strings.Replace(tempPattern("x.svg", 42), "*", "99", 1), "x.svg", 42, true},
		{".report.md.tmp123456", "", 0, false}, // os.CreateTemp's own suffix: no pid
		{"report.md.tmp-1-2", "", 0, false},
		{"..tmp-1-2", "", 0, false},
		{".report.md.tmp-x-2", "", 0, false},
		{".report.md.tmp-12-", "", 0, false},
		{".report.md.tmp-0-1", "", 0, false},
		{".report.md", "", 0, false},
	}
	for _, tt := range tests {
		if name, pid, ok := tempOwner(tt.temp); name != tt.name || pid != tt.pid || ok != tt.ok {
			t.Errorf("tempOwner(%q) = %q, %d, %v; want %q, %d, %v", tt.temp, name, pid, ok, tt.name, tt.pid, tt.ok)
		}
	}
}

// goneProcess returns the pid of a process that has exited.
func goneProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestLockFileWriteRemovesDeadTemps: pipeline.lock's writer killed
// mid-write leaves its temporary file in the project; the next write of
// the lock file removes it, even one that finds the file current and
// writes nothing, and leaves a live writer's.
func TestLockFileWriteRemovesDeadTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.lock")
	lf := &LockFile{Schema: lockSchema, Stages: map[string]LockEntry{}}
	dead := ".pipeline.lock.tmp-" + strconv.Itoa(goneProcess(t)) + "-1"
	live := ".pipeline.lock.tmp-" + strconv.Itoa(os.Getppid()) + "-1"
	for _, write := range []string{"new", "unchanged"} {
		for _, name := range []string{dead, live} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("{\"sch"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := lf.Write(path); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, dead)); err == nil {
			t.Errorf("%s lock file write left a killed writer's %s", write, dead)
		}
		if _, err := os.Stat(filepath.Join(dir, live)); err != nil {
			t.Errorf("%s lock file write removed a live writer's %s: %v", write, live, err)
		}
	}
	// Its own temporary file is named with its pid, and gone once written.
	if err := replaceFile(filepath.Join(dir, "x"), time.Time{}, func(w io.Writer) error {
		matches, _ := filepath.Glob(filepath.Join(dir, tempPattern("x", os.Getpid())))
		if len(matches) != 1 {
			t.Errorf("while writing x: temporary files %v, want one named %s", matches, tempPattern("x", os.Getpid()))
		}
		_, err := w.Write([]byte("x"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".x.*")); len(m) != 0 {
		t.Errorf("replaceFile left %v", m)
	}
}

// TestRevalidationWritesNothingBesideTheVersion: a run that re-hashes a
// version whose files' mtimes changed (a copied store) rewrites its
// manifest through a temporary file in the store's .tmp, never in the
// version's folder, where a writer killed meanwhile would leave a file
// verify reports as unexpected.
func TestRevalidationWritesNothingBesideTheVersion(t *testing.T) {
	a := &fake{name: "a", cfg: fakeConfig{N: 1}}
	h := newHarness(t, a)
	h.mustRun(RunOptions{})
	p := h.pipeline()
	m, err := p.Current("a")
	if err != nil {
		t.Fatal(err)
	}
	dir := p.Store.(*LocalStore).Dir("a", m.Version)
	later := time.Now().Add(time.Hour)
	for _, f := range m.Files {
		if err := os.Chtimes(filepath.Join(dir, f.Path), later, later); err != nil {
			t.Fatal(err)
		}
	}
	var temps []string
	testHookRename = func(tmp string) { temps = append(temps, tmp) }
	defer func() { testHookRename = nil }()
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Cached})
	tmp := filepath.Join(p.Store.(*LocalStore).Root(), tmpDir)
	if len(temps) != 1 || filepath.Dir(temps[0]) != tmp {
		t.Errorf("revalidation wrote through %v, want one temporary file in %s", temps, tmp)
	}
	if probs, _, _ := p.Verify(context.Background()); len(probs) != 0 {
		t.Errorf("Verify after revalidation: %v", probs)
	}
}
