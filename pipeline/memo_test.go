package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMemoSurvivesAConfigChange: a stage memoizes one result per point of
// its config; adding a point reruns the stage, which builds only the new
// point, and the manifest lists the entries used. A failed build keeps
// nothing, and gc drops the entries no kept version uses.
func TestMemoSurvivesAConfigChange(t *testing.T) {
	var builds atomic.Int32
	f := &fake{name: "sweep", cfg: fakeConfig{N: 2}}
	f.run = func(ctx context.Context, env *Env) error {
		var out []string
		for i := range f.cfg.N {
			dir, err := env.Memo.Get(fmt.Sprintf("%016x", i+1), func(dir string) error {
				builds.Add(1)
				return os.WriteFile(filepath.Join(dir, "point.txt"), fmt.Appendf(nil, "point %d", i), 0o644)
			})
			if err != nil {
				return err
			}
			b, err := os.ReadFile(filepath.Join(dir, "point.txt"))
			if err != nil {
				return err
			}
			out = append(out, string(b))
		}
		return os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte(strings.Join(out, "\n")), 0o644)
	}
	h := newHarness(t, f)
	h.mustRun(RunOptions{})
	if got := builds.Load(); got != 2 {
		t.Fatalf("first run built %d points, want 2", got)
	}
	f.cfg.N = 3
	h.mustRun(RunOptions{})
	if got := builds.Load(); got != 3 {
		t.Fatalf("after adding a point, %d builds in all, want 3", got)
	}
	p := h.pipeline()
	vs, err := p.Store.Versions("sweep")
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions %v, %v", vs, err)
	}
	if want := []string{"0000000000000001", "0000000000000002", "0000000000000003"}; !slices.Equal(vs[1].Memo, want) {
		t.Errorf("manifest memo %v, want %v", vs[1].Memo, want)
	}

	m := p.Store.memo("sweep")
	boom := errors.New("boom")
	if _, err := m.Get("00000000000000ff", func(dir string) error {
		os.WriteFile(filepath.Join(dir, "half"), nil, 0o644)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failed build: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.Store.Root, memoDir, "sweep", "00000000000000ff")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed build left an entry: %v", err)
	}
	if _, err := m.Get("../escape", func(string) error { return nil }); err == nil {
		t.Error("a key that is not a hex digest was accepted")
	}

	// Only the newest version stays (keep 1, no lock entry for the old
	// one): it used all three entries, so gc removes none; with N back at 1
	// and a new run, entries 2 and 3 are unused once the others go.
	removed, err := p.GC(context.Background(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range removed {
		if r.Memo {
			t.Errorf("gc removed memo entry %s, which the kept version uses", r.Version)
		}
	}
	f.cfg.N = 1
	h.mustRun(RunOptions{})
	removed, err = p.GC(context.Background(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	var memo []string
	for _, r := range removed {
		if r.Memo {
			memo = append(memo, r.Version)
		}
	}
	if want := []string{"0000000000000002", "0000000000000003"}; !slices.Equal(memo, want) {
		t.Errorf("gc removed memo entries %v, want %v", memo, want)
	}
}
