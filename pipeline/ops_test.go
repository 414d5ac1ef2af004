package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStatusReasons(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	p := h.pipeline()
	for _, s := range mustStatus(t, p) {
		if s.State != Missing {
			t.Errorf("before any run: %s is %s, want missing", s.Stage, s.State)
		}
	}
	h.mustRun(RunOptions{})
	for _, s := range mustStatus(t, h.pipeline()) {
		if s.State != UpToDate {
			t.Errorf("after a run: %s is %s, want up-to-date", s.Stage, s.State)
		}
	}
	a.cfg.N = 10
	c.code = "code-v9"
	st := mustStatus(t, h.pipeline())
	wantReason := func(stage, sub string) {
		t.Helper()
		if !slices.ContainsFunc(st[stage].Reasons, func(r string) bool { return strings.Contains(r, sub) }) {
			t.Errorf("status %s reasons = %q, want one containing %q", stage, st[stage].Reasons, sub)
		}
	}
	if st["a"].State != Stale || st["b"].State != Stale || st["d"].State != Stale {
		t.Errorf("states = %v, want a, b, d stale", st)
	}
	wantReason("a", "config a.n: 1 → 10")
	wantReason("b", "upstream a is not up to date")
	wantReason("c", "code changed")
}

func TestPinAndUnpin(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	p := h.pipeline()
	v, err := p.Pin(context.Background(), "a", "")
	if err != nil {
		t.Fatal(err)
	}
	a.cfg.N = 50
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Pinned, "b": Cached, "d": Cached})
	st := mustStatus(t, h.pipeline())["a"]
	if st.State != PinState || st.Version != v || len(st.Reasons) == 0 || !strings.Contains(st.Reasons[0], "config differs from the pinned version: a.n: 1 → 50") {
		t.Errorf("status of pinned a = %+v", st)
	}
	if err := h.pipeline().Unpin(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Ran, "d": Ran, "c": Cached})
	// Pin the old version by prefix: downstream goes back to its old version.
	if _, err := h.pipeline().Pin(context.Background(), "a", v[:6]); err != nil {
		t.Fatal(err)
	}
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Pinned, "b": Cached, "d": Cached})
	if err := h.pipeline().Unpin(context.Background(), "c"); err == nil {
		t.Error("Unpin of an unpinned stage succeeded")
	}
	if _, err := h.pipeline().Pin(context.Background(), "a", "ffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Pin to a missing version: err = %v, want ErrNotFound", err)
	}
}

func TestLockedRunRefusesChanges(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	if _, err := h.run(RunOptions{Locked: true}); !errors.Is(err, ErrLockMismatch) {
		t.Fatalf("--locked without a lock file: err = %v, want ErrLockMismatch", err)
	}
	h.mustRun(RunOptions{})
	wantOutcomes(t, h.mustRun(RunOptions{Locked: true}), map[string]Outcome{"a": Cached, "d": Cached})
	b.cfg.N = 20
	before := h.runs()
	_, err := h.run(RunOptions{Locked: true})
	if !errors.Is(err, ErrLockMismatch) || !strings.Contains(err.Error(), "b: would be version") || !strings.Contains(err.Error(), "config b.n: 2 → 20") {
		t.Fatalf("err = %v, want a lock mismatch naming b and its config change", err)
	}
	if after := h.runs(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("--locked ran stages: %v → %v", before, after)
	}
	// A fresh store with the committed lock file reproduces the same versions.
	b.cfg.N = 2
	os.RemoveAll(filepath.Join(h.dir, "data"))
	wantOutcomes(t, h.mustRun(RunOptions{Locked: true}), map[string]Outcome{"a": Ran, "d": Ran})
}

func TestLockFileIsDeterministic(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	first, _ := os.ReadFile(filepath.Join(h.dir, "pipeline.lock"))
	os.RemoveAll(filepath.Join(h.dir, "data"))
	h.mustRun(RunOptions{})
	second, _ := os.ReadFile(filepath.Join(h.dir, "pipeline.lock"))
	if string(first) != string(second) {
		t.Errorf("lock file differs between identical runs:\n%s\n---\n%s", first, second)
	}
}

func TestGC(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	for n := range 3 {
		a.cfg.N = n
		h.mustRun(RunOptions{})
	}
	p := h.pipeline()
	removed, err := p.GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// a, b, d had three versions each; only the locked one stays. c had one.
	if len(removed) != 6 {
		t.Errorf("GC removed %d versions, want 6: %v", len(removed), removed)
	}
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Cached, "b": Cached, "c": Cached, "d": Cached})
}
