package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestScratchOwner: only the names owned() gives its directories parse,
// with their pid.
func TestScratchOwner(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		ok   bool
	}{
		{"run-123-4567", 123, true},
		{"run-1-0", 1, true},
		{"run-123-", 0, false},
		{"run--4567", 0, false},
		{"run-0-4567", 0, false},
		{"run-12x-4567", 0, false},
		{"run-123-45x", 0, false},
		{"run-123", 0, false},
		{"run-1-dead", 0, false},
		{"keepme", 0, false},
		{"generate-0123456789abcdef-42", 0, false},
	}
	for _, tt := range tests {
		if pid, ok := scratchOwner(tt.name); pid != tt.pid || ok != tt.ok {
			t.Errorf("scratchOwner(%q) = %d, %v; want %d, %v", tt.name, pid, ok, tt.pid, tt.ok)
		}
	}
}

// TestLockRemovesOnlyDeadRunsScratch: taking the store's lock removes
// from root/.tmp what it can prove a dead run made (a scratch directory
// named as owned() names them whose flock nobody holds, a temporary file
// named with a gone writer's pid) and nothing else: not a folder or file
// someone put there, not a live run's scratch, not what a symlink in
// place of a scratch directory points to, and nothing at all when .tmp
// itself is a symlink, whose target lies outside the store.
func TestLockRemovesOnlyDeadRunsScratch(t *testing.T) {
	gone := goneProcess(t)
	deadScratch := ownerPrefix + strconv.Itoa(gone) + "-12345"
	deadTemp := "." + ManifestName + ".tmp-" + strconv.Itoa(gone) + "-678"
	liveTemp := "." + ManifestName + ".tmp-" + strconv.Itoa(os.Getppid()) + "-678"
	tests := []struct {
		name string
		// setup fills the store's root (whose .tmp exists, empty) and
		// outside, a folder outside the store; it returns what must go
		// and what must stay, as paths.
		setup func(t *testing.T, root, outside string) (gone, kept []string)
	}{
		{"a dead run's scratch and temporary file go", func(t *testing.T, root, outside string) ([]string, []string) {
			tmp := filepath.Join(root, tmpDir)
			mkdirs(t, filepath.Join(tmp, deadScratch, "generate-0123456789abcdef-1"))
			writeFiles(t, filepath.Join(tmp, deadScratch, "generate-0123456789abcdef-1", "jobs.parquet"), filepath.Join(tmp, deadTemp), filepath.Join(tmp, liveTemp))
			return []string{filepath.Join(tmp, deadScratch), filepath.Join(tmp, deadTemp)}, []string{filepath.Join(tmp, liveTemp)}
		}},
		{"what someone else put in .tmp stays", func(t *testing.T, root, outside string) ([]string, []string) {
			tmp := filepath.Join(root, tmpDir)
			mkdirs(t, filepath.Join(tmp, "keepme"), filepath.Join(tmp, ownerPrefix+"1-dead"), filepath.Join(tmp, "generate-0123456789abcdef-42"))
			writeFiles(t, filepath.Join(tmp, "note.txt"), filepath.Join(tmp, "keepme", "f"), filepath.Join(tmp, "run-1.txt"))
			return nil, []string{filepath.Join(tmp, "keepme", "f"), filepath.Join(tmp, "note.txt"), filepath.Join(tmp, "run-1.txt"),
				filepath.Join(tmp, ownerPrefix+"1-dead"), filepath.Join(tmp, "generate-0123456789abcdef-42")}
		}},
		{"a symlinked .tmp is not followed", func(t *testing.T, root, outside string) ([]string, []string) {
			tmp := filepath.Join(root, tmpDir)
			if err := os.Remove(tmp); err != nil {
				t.Fatal(err)
			}
			mkdirs(t, filepath.Join(outside, "sub"), filepath.Join(outside, deadScratch))
			writeFiles(t, filepath.Join(outside, "sub", "f"), filepath.Join(outside, "note.txt"), filepath.Join(outside, deadScratch, "f"), filepath.Join(outside, deadTemp))
			symlink(t, outside, tmp)
			return nil, []string{filepath.Join(outside, "sub", "f"), filepath.Join(outside, "note.txt"), filepath.Join(outside, deadScratch, "f"), filepath.Join(outside, deadTemp), tmp}
		}},
		{"a symlink named as a scratch directory is not followed", func(t *testing.T, root, outside string) ([]string, []string) {
			tmp := filepath.Join(root, tmpDir)
			mkdirs(t, filepath.Join(outside, "sub"))
			writeFiles(t, filepath.Join(outside, "sub", "f"))
			symlink(t, outside, filepath.Join(tmp, deadScratch))
			return nil, []string{filepath.Join(outside, "sub", "f"), filepath.Join(tmp, deadScratch)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root, outside := filepath.Join(dir, "data"), filepath.Join(dir, "X")
			mkdirs(t, filepath.Join(root, tmpDir), outside)
			removed, kept := tt.setup(t, root, outside)
			st, err := OpenStore(root)
			if err != nil {
				t.Fatal(err)
			}
			unlock, err := st.Lock(context.Background(), "test", false, nil)
			if err != nil {
				t.Fatalf("Lock: %v", err)
			}
			unlock()
			for _, p := range removed {
				if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Lock left %s (%v), which a dead run made", p, err)
				}
			}
			for _, p := range kept {
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("Lock removed %s, which it cannot prove a dead run made: %v", p, err)
				}
			}
		})
	}
}

// TestScratchRefusesASymlinkedTmp: a store whose .tmp is a symbolic link
// stages nothing through it (a version would be built outside the store),
// and says why, naming the link and its target.
func TestScratchRefusesASymlinkedTmp(t *testing.T) {
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "data"), filepath.Join(dir, "X")
	mkdirs(t, root, outside)
	symlink(t, outside, filepath.Join(root, tmpDir))
	st, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Begin("a", "0123456789abcdef")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, tmpDir)) || !strings.Contains(err.Error(), "symbolic link to "+outside) {
		t.Errorf("Begin with a symlinked .tmp: %v, want an error naming the link and %s", err, outside)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("Begin wrote %d entries through the symlink, into %s", len(ents), outside)
	}
}

// TestLockLeavesALiveRunsScratch: a scratch directory whose flock a live
// process holds stays, whatever its name's pid says.
func TestLockLeavesALiveRunsScratch(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	live := filepath.Join(root, tmpDir, ownerPrefix+strconv.Itoa(goneProcess(t))+"-1")
	mkdirs(t, live)
	d, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := st.Lock(context.Background(), "test", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(live); err != nil {
		t.Errorf("Lock removed a scratch directory whose flock is held: %v", err)
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFiles(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.WriteFile(p, []byte(filepath.Base(p)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestScratchSurvivesAnotherGoroutinesUnlock: a process that takes and
// drops the store's lock in one goroutine (a worker pulling inputs) while
// others stage versions and build memo entries (the stages it runs) never
// has its scratch directory removed under them: every Begin and every
// memo entry succeeds.
func TestScratchSurvivesAnotherGoroutinesUnlock(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const rounds = 300
	var wg sync.WaitGroup
	errs := make(chan error, 3*rounds)
	wg.Add(3)
	go func() {
		defer wg.Done()
		for range rounds {
			unlock, err := s.Lock(ctx, "test", true, nil)
			if err != nil {
				errs <- err
				return
			}
			unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for i := range rounds {
			dir, err := s.Begin("stage", strconv.Itoa(i))
			if err != nil {
				errs <- fmt.Errorf("begin %d: %w", i, err)
				continue
			}
			os.RemoveAll(dir)
		}
	}()
	go func() {
		defer wg.Done()
		m := s.Memo("stage", KeyInputs{})
		for i := range rounds {
			_, err := m.Get("unit", nil, [][2]string{{"i", strconv.Itoa(i)}}, func(dir string) error {
				return os.WriteFile(filepath.Join(dir, "x"), []byte{byte(i)}, 0o644)
			})
			if err != nil {
				errs <- fmt.Errorf("memo entry %d: %w", i, err)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
