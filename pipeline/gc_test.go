package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// cutoffChain is a → b → c, where b reads only a's out.txt and c only
// b's: a change of a's text (its other.txt) reruns a alone, and one of
// b's text (its extra.txt) reruns b alone, each leaving its downstream
// cached by early cutoff, its manifest naming the version before.
func cutoffChain() (a, b, c *fake) {
	a = &fake{name: "a", cfg: fakeConfig{N: 1}}
	a.run = func(ctx context.Context, env *Env) error {
		if err := os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("a's data"), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "other.txt"), []byte(a.cfg.Text), 0o644)
	}
	b = &fake{name: "b", deps: []string{"a"}, cfg: fakeConfig{N: 2}, reads: map[string][]string{"a": {"out.txt"}}}
	b.run = func(ctx context.Context, env *Env) error {
		if err := os.WriteFile(filepath.Join(env.Dir, "out.txt"), []byte("b's data"), 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(env.Dir, "extra.txt"), []byte(b.cfg.Text), 0o644)
	}
	c = &fake{name: "c", deps: []string{"b"}, cfg: fakeConfig{N: 3}, reads: map[string][]string{"b": {"out.txt"}}}
	return a, b, c
}

// versionsOf returns the stored versions of each stage, stage@version.
func versionsOf(t *testing.T, p *Pipeline) []string {
	t.Helper()
	var out []string
	for _, st := range []string{"a", "b", "c"} {
		vs, err := p.Store.Versions(st)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range vs {
			out = append(out, st+"@"+m.Version)
		}
	}
	return out
}

// TestGCKeepsWhatKeptVersionsWereMadeFrom (issue 29, item 15): a version
// kept names its upstreams' versions as its inputs; gc used to remove
// those the lock file did not name, so that a kept version's provenance
// pointed at nothing. It keeps them now, and theirs, transitively.
func TestGCKeepsWhatKeptVersionsWereMadeFrom(t *testing.T) {
	a, b, c := cutoffChain()
	h := newHarness(t, a, b, c)
	h.mustRun(RunOptions{})
	first := versionsOf(t, h.pipeline()) // a1, b1, c1
	a.cfg.Text = "a changed"
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Ran, "b": Cached, "c": Cached})
	b.cfg.Text = "b changed"
	wantOutcomes(t, h.mustRun(RunOptions{}), map[string]Outcome{"a": Cached, "b": Ran, "c": Cached})
	// pipeline.lock names a2, b2 and c1; c1 was made from b1, and b1 from a1.
	p := h.pipeline()
	all := versionsOf(t, p)
	if len(all) != 5 {
		t.Fatalf("stored versions %v, want a1, a2, b1, b2, c1", all)
	}
	removed, err := p.GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 {
		t.Errorf("gc --keep 0 removed %v; c1, which the lock file names, was made from b1, and b1 from a1", removed)
	}
	if got := versionsOf(t, p); !slices.Equal(got, all) {
		t.Errorf("versions after gc %v, want %v", got, all)
	}
	for _, v := range first {
		if !slices.Contains(versionsOf(t, p), v) {
			t.Errorf("%s is gone", v)
		}
	}

	// Once c is rebuilt from b2, b1 and then a1 are nobody's inputs.
	c.cfg.N = 30
	h.mustRun(RunOptions{})
	removed, err = p.GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range removed {
		names = append(names, r.Stage+"@"+r.Version)
	}
	slices.Sort(names)
	if want := []string{first[0], first[1], first[2]}; !slices.Equal(names, want) {
		t.Errorf("gc after c's rebuild removed %v, want a1, b1 and c1 %v", names, want)
	}
}

// TestGCPlansBeforeItRemoves: gc tells what it is about to remove before
// it removes anything, and removes exactly that; a dry run tells the same
// and removes nothing.
func TestGCPlansBeforeItRemoves(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	for n := range 3 {
		a.cfg.N = n
		h.mustRun(RunOptions{})
	}
	p := h.pipeline()
	before := versionsOf(t, p)
	for _, dry := range []bool{true, false} {
		var planned []Removed
		removed, err := p.GC(context.Background(), GCOptions{DryRun: dry, Plan: func(plan GCPlan) {
			planned = plan.Remove
			for _, r := range plan.Remove {
				if _, err := p.Store.Manifest(r.Stage, r.Version); err != nil {
					t.Errorf("dry %v: %s@%s was gone before gc said it would remove it: %v", dry, r.Stage, r.Version, err)
				}
			}
			if !slices.Equal(plan.Locks, []string{p.LockPath}) {
				t.Errorf("dry %v: gc keeps what %v name, want %s", dry, plan.Locks, p.LockPath)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(planned) != 6 || !slices.Equal(planned, removed) {
			t.Errorf("dry %v: planned %v, removed %v; want the same 6 (the older two versions of a, b and d)", dry, planned, removed)
		}
		if got := versionsOf(t, p); dry && !slices.Equal(got, before) {
			t.Errorf("a dry run removed versions: %v → %v", before, got)
		}
	}
}

// TestGCKeepsWhatEveryConfigsLockNames (issue 29, item 2): two configs in
// one folder, one store. The second one's run used to rewrite the one
// pipeline.lock, and gc then removed the first one's current versions.
// Each config has its lock file now (LockPathOf), and gc keeps what every
// lock file beside the config, or in the store, that describes the store
// names.
func TestGCKeepsWhatEveryConfigsLockNames(t *testing.T) {
	a, b, c, d := diamond()
	h := newHarness(t, a, b, c, d)
	h.mustRun(RunOptions{})
	mine := versionsOf(t, h.pipeline())
	other := func() *Pipeline {
		p := h.pipeline()
		p.LockPath = LockPathOf(filepath.Join(h.dir, "other.yaml"))
		return p
	}
	a.cfg.N = 10
	if _, err := other().Run(context.Background(), RunOptions{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	a.cfg.N = 1
	theirs := versionsOf(t, other())
	if len(theirs) == len(mine) {
		t.Fatal("the other config made no version of its own: the test shows nothing")
	}
	if lf, err := ReadLockFile(filepath.Join(h.dir, LockName)); err != nil || lf.Stages["a"].Version != strings.TrimPrefix(mine[0], "a@") {
		t.Errorf("the other config's run changed pipeline.lock: %+v, %v", lf, err)
	}
	// Files named *.lock that are not mlsched's are no business of gc:
	// another tool's, and one that cannot be read (a daemon's FIFO).
	os.WriteFile(filepath.Join(h.dir, "Cargo.lock"), []byte("# not ours\n[[package]]\n"), 0o644)
	os.WriteFile(filepath.Join(h.dir, "yarn.lock"), nil, 0o644)
	if err := syscall.Mkfifo(filepath.Join(h.dir, "daemon.lock"), 0o644); err != nil {
		t.Log("no FIFO:", err)
	}

	for _, tt := range []struct {
		name string
		p    *Pipeline
	}{
		{"from the first config", h.pipeline()},
		{"from the other config", other()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var locks []string
			removed, err := tt.p.GC(context.Background(), GCOptions{Plan: func(plan GCPlan) { locks = plan.Locks }})
			if err != nil || len(removed) != 0 {
				t.Errorf("gc --keep 0 = %v, %v; want nothing removed", removed, err)
			}
			if want := []string{filepath.Join(h.dir, "other.lock"), filepath.Join(h.dir, LockName)}; !slices.Equal(slices.Sorted(slices.Values(locks)), want) {
				t.Errorf("gc kept what %v name, want %v", locks, want)
			}
		})
	}
	if _, err := h.pipeline().Run(context.Background(), RunOptions{Jobs: 1, Locked: true}); err != nil {
		t.Errorf("run --locked of the first config after gc: %v", err)
	}

	// A lock file of ours that does not read stops gc: what it names
	// cannot be known, so nothing may be removed. Ours is one with
	// stages, or one a config of its name is beside.
	for _, tt := range []struct{ name, content, config string }{
		{"other.lock", `{"schema": 1, "stages": {"a": {"version": "zz"}}}`, ""},
		{"cut.lock", `{"schema": 1, "sta`, "cut.yaml"},
	} {
		os.WriteFile(filepath.Join(h.dir, tt.name), []byte(tt.content), 0o644)
		if tt.config != "" {
			os.WriteFile(filepath.Join(h.dir, tt.config), nil, 0o644)
		}
		if _, err := h.pipeline().GC(context.Background(), GCOptions{}); err == nil || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("gc beside a damaged %s = %v, want a refusal naming it", tt.name, err)
		}
		os.Remove(filepath.Join(h.dir, tt.name))
	}
}

func TestLockPathOf(t *testing.T) {
	tests := []struct{ config, want string }{
		{"pipeline.yaml", "pipeline.lock"},
		{filepath.Join("conf", "other.yaml"), filepath.Join("conf", "other.lock")},
		{"small.yml", "small.lock"},
		{"noext", "noext.lock"},
		{"odd.lock", "odd.lock.lock"},
		{".hidden.yaml", ".hidden.lock"},
	}
	for _, tt := range tests {
		if got := LockPathOf(tt.config); got != tt.want {
			t.Errorf("LockPathOf(%q) = %q, want %q", tt.config, got, tt.want)
		}
	}
}
